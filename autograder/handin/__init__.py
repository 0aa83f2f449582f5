"""The first stage: a hand-in taken in, before any of it runs.

Owns finding the lab's files in what a student handed in (:mod:`.submission`: the top, a folder, a notebook, the
timing report), the grader's own bounded copy of it and its fingerprint (:mod:`.intake`), and whether a step is
still the released stub (:mod:`.pristine`: untouched steps, stubbed functions; read, never run).

May import: :mod:`autograder.base`, :mod:`autograder.i18n`.
"""
