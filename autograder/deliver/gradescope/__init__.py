"""Gradescope: the autograder zip (``attnlab gradescope``), what runs inside it, and its ``results.json``.

- :mod:`autograder.report.gradescope`: a report as Gradescope's ``results.json`` (also ``attnlab grade --json``).
- :mod:`autograder.deliver.gradescope.runner`: what ``run_autograder`` starts on Gradescope (part of the public wheel).
- :mod:`autograder.deliver.gradescope.build`: the zip (instructor only).
"""
