"""Gradescope: the autograder zip (``attnlab gradescope``), what runs inside it, and its ``results.json``.

- :mod:`autograder.gradescope.results`: a report as Gradescope's ``results.json`` (also ``attnlab grade --json``).
- :mod:`autograder.gradescope.runner`: what ``run_autograder`` starts on Gradescope (part of the public wheel).
- :mod:`autograder.gradescope.build`: the zip (instructor only).
"""
