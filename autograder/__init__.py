"""The attention lab kit's grading engine (public part).

Student code never runs in this package's process: see ``autograder.sandbox``.
"""

__version__ = "0.1.0"
