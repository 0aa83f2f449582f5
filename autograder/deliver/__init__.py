"""Deliveries: the ways the lab reaches students and grades reach instructors.

Owns the student release and its wheel (:mod:`.release`, the stub generator among it), the Gradescope zip and its
runner (:mod:`.gradescope`), the nbgrader course (:mod:`.nbgrader_course`), ``attnlab grade-batch``
(:mod:`.batch`), the warm grading server they share (:mod:`.warm`), the offline workbench (:mod:`.workbench`) and
the handout (:mod:`.handout`).

May import: :mod:`autograder.report`, :mod:`autograder.grading` and every stage below them; never the commands
(:mod:`autograder.cli`), which sit on top.
"""
