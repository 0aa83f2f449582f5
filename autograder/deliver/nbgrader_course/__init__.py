"""``attnlab nbgrader-course DIR``: an nbgrader course for the lab, with nbgrader's traps for a .py-based lab fixed.

- :mod:`.notebook`: the lab notebook (built with nbformat; the committed ``.ipynb`` is its output).
- :mod:`.course`: writes the course folder (config, source, private folder).
- :mod:`.config`: the text of the course's ``nbgrader_config.py``.
- :mod:`.release`: strips the ``.py`` solutions at release and verifies the release.
- :mod:`.preprocessors`: the nbgrader preprocessors the config names.
- :mod:`.cells`: what the notebook's cells call inside the kernel (light imports only).
- :mod:`.run`: the grader process a grade cell starts.
- :mod:`.private`: the course's private folder (layout and settings).

The command is :mod:`autograder.cli.nbgrader_course`.

Needs the ``course`` extra (nbgrader); this module and :mod:`.cells` import
nothing from it, so ``attnlab`` works without it.
"""
