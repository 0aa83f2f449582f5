"""The sandbox: student code runs here and only here, in children the grader starts, and comes back as typed
outcomes (:mod:`.outcome`).

Owns the isolation layers (:mod:`.isolation`, :mod:`.bwrap`), the fork servers (:mod:`.zygote`), the keeper and
its limits (:mod:`.keeper`, :mod:`.cgroup`, :mod:`.seccomp`, :mod:`.cpuclock`), the child and its policy
(:mod:`.child`, :mod:`.policy`), the wire protocol and the shape each reply must have (:mod:`.protocol`,
:mod:`.replies`), and the probes a child runs (``probes/``).

May import: :mod:`autograder.handin`, :mod:`autograder.base`, :mod:`autograder.i18n`; never a check, a verdict or
a renderer.
"""
