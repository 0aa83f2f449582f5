"""Diagnosis that follows the student's own computation (issue 32).

A failed check knows that the student's value differs from the reference's. This package finds *where* their
computations part and *how*, from traces of both (:mod:`autograder.sandbox.probes.trace`), and names it only when
it can prove it: the reference, changed in just that way, gives the student's numbers on the check's input and on
its twin (:mod:`autograder.judge.diagnose.twin`). The student's trace is their claim: it only proposes explanations,
which the grader tests on its own trusted side, and it never awards a point.

- :mod:`.model`: a trace as typed, validated data;
- :mod:`.ops`: the operations' common names across NumPy, PyTorch, Python and the lab's own functions;
- :mod:`.match`: which of the student's values equal which of the reference's;
- :mod:`.follow`: the search for the departures, replayed on the trusted side, and their proof on the twin;
- :mod:`.upstream`: a wrong callee from an earlier step, and the downstream code run with a correct one;
- :mod:`.explain`: the whole diagnosis of one failed check, in the grader's budget.
"""
