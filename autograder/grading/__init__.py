"""Grading: running a step's checks on a taken-in hand-in and turning what they found into results.

Owns the engine (:mod:`.engine`: the isolation choice, the intake, the untouched steps, pytest on the graders in
the fork servers), the graders themselves (``graders/``: the public checks, pytest files with points), their
fixtures (:mod:`.grader_fixtures`), the timing step's lane (:mod:`.lanes`), each check's title and points
(:mod:`.checklist`), the results of untouched steps (:mod:`.untouched`), and the results' model with its lossless
JSON (:mod:`.model`, :mod:`.serialize`): plain data every renderer and delivery reads.

May import: :mod:`autograder.judge` and every stage below it. Nothing here renders.
"""
