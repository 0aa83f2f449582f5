"""Renderers: a grade's results (:mod:`autograder.grading.model`, plain data) as the terminal table
(:mod:`.render_terminal`), the HTML page and its figures (:mod:`.render_html`, :mod:`.render_figures`, the frame it
shares with the handout in :mod:`.htmlpage`), Gradescope's ``results.json`` and its summary (:mod:`.gradescope`,
:mod:`.gradescope_summary`); failures grouped for all of them (:mod:`.failures`).

May import: :mod:`autograder.grading` (its model) and every stage below it. Renderers decide nothing: they show.
"""
