"""The result of grading one submission, and its renderings."""

from autograder.report.model import CheckResult, GradeReport, StepResult

__all__ = ["CheckResult", "GradeReport", "StepResult"]
