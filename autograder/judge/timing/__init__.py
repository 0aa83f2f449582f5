"""The timing lab: measure a submission's ``timing.py``, write its report and plots, grade the report.

- :mod:`~autograder.judge.timing.calibration`: what the kit measures on each device
  class (sizes, repeats, fit ranges) and the windows a correct implementation
  lands in.
- :mod:`~autograder.judge.timing.report`: the report's schema; reads a report file as
  untrusted data and validates it strictly.
- :mod:`~autograder.judge.timing.runner`: runs the student's functions in the
  sandbox and builds the report (``attnlab timing``).
- :mod:`~autograder.judge.timing.analysis`: fits, speed-ups, review flags and the
  summary, shared by the runner, the plots and the graders.
- :mod:`~autograder.judge.timing.plots`: the three PNG figures.
"""
