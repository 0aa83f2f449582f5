"""Tracing a lab function: the operations it performs on the grader's inputs, as plain data.

Only after a check has failed does the grader ask for a trace (:mod:`autograder.judge.diagnose.trace`). The same code
runs on both sides: in the student's child it records what the student's code did (a claim, which may only choose
the sentence that explains a failure the grader found by comparing values); on the grader's trusted side
(:mod:`autograder.judge.oracle`) it records what the reference did on the same inputs, and replays the reference with
edits (another axis, another operand, a step left out, a value put in its place) to test an explanation.

How it sees the operations (each a well-kept protocol of its library):

- NumPy: the inputs become :class:`~.arrays.Traced`, an ``ndarray`` subclass whose ``__array_ufunc__`` and
  ``__array_function__`` record every ufunc and every array function called on it (operators included), and whose
  methods (``sum``, ``reshape``, ``T`` ...) record themselves. ``np.asarray`` drops subclasses, so while a call is
  traced the lab modules' ``np`` is a proxy whose array constructors keep them.
- PyTorch: a ``TorchFunctionMode`` (:mod:`.torchside`) records every torch function and tensor method.
- Python numbers: integer and float inputs become ``int``/``float`` subclasses that record their arithmetic
  (the chapter's parameter counts are integer arithmetic).
- The lab's own functions (``softmax`` inside ``attention`` inside ``attention_backward``) are wrapped, so a call
  to one is one event with its inputs and outputs, the operations inside it nested below it.

What tracing cannot follow (a Python loop over single numbers, another library) is simply absent from the trace;
the grader then falls back to its other diagnoses and says so.
"""

from __future__ import annotations

from autograder.sandbox.probes.trace import probes  # noqa: F401  registers the probes
