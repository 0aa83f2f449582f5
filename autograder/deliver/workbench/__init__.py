"""``attnlab workbench``: one offline page to explore the student's own attention, stage by stage.

The data flows one way, as in grading: the submission's functions run in the
sandbox (:mod:`autograder.deliver.workbench.found`) on the chapter's inputs and on a few
fixed ones; what came back, or why nothing usable did, is collected view by
view (:mod:`~autograder.deliver.workbench.worked` for the worked example's eight stages
and the calibrator, :mod:`~autograder.deliver.workbench.toy` for the toy GPT,
:mod:`~autograder.deliver.workbench.experiments` for predict-then-test), and
:mod:`~autograder.deliver.workbench.page` writes one self-contained HTML page with
everything precomputed (the page never runs student Python). No student code
is imported here, and the reference solution is never called: the numbers are
the student's own, shown beside the chapter's printed values (public data).
"""
