"""Checks and diagnosis: what a step's checks call, what they expect, and what a wrong answer means.

Owns the calls through the sandbox and their expectations (:mod:`.checking`), what a step's public and hidden
checks share (:mod:`.checks`), the public checks' fixed inputs and snapshots (:mod:`.cases`), the known wrong
answers and the trace that follows the student's own computation (:mod:`.diagnose`), the predict-first questions
(:mod:`.predictions`), the checks' trusted torch side (:mod:`.oracle`), the timing step's measurement, report and
the student's ``attnlab timing`` (:mod:`.timing`), what a failed array check carries (:mod:`.evidence`) and the one
message template to students (:mod:`.messages`, below everything that reads it).

May import: :mod:`autograder.sandbox`, :mod:`autograder.handin`, :mod:`autograder.base`, :mod:`autograder.i18n`.
Inside, the order is the one in ``pyproject.toml``'s import-linter contracts.
"""
