"""The attention lab kit's grading engine.

Its packages are the stages a hand-in passes through, in the order data flows; each imports only those above it
in this list (``pyproject.toml``'s import-linter contracts, checked by the kit's tests):

- :mod:`autograder.i18n`: the translations (gettext catalogs in ``locale/``).
- :mod:`autograder.base`: the step registry, the kit's paths, chapter values and plain tools.
- :mod:`autograder.handin`: a hand-in found, copied and fingerprinted; which steps are still the stub.
- :mod:`autograder.sandbox`: student code run in children, returned as typed outcomes.
- :mod:`autograder.judge`: the checks, their inputs, the diagnosis of wrong answers, the messages.
- :mod:`autograder.grading`: the engine, the graders, and the results they make.
- :mod:`autograder.report`: the renderers of those results.
- :mod:`autograder.deliver`: release, Gradescope, nbgrader, grade-batch, the warm server, workbench, handout.
- :mod:`autograder.cli`: the ``attnlab`` commands.

Student code never runs in this package's process: see :mod:`autograder.sandbox`.
"""

__version__ = "0.1.0"
