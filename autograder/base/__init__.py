"""What every stage stands on: the lab's definition and the engine's plain tools.

Owns the step registry (:mod:`.tasks`: steps, points, handout anchors), where the kit and its folders are
(:mod:`.kit`), the reference solution's folder (:mod:`.reference`), the chapter's printed values (:mod:`.chapter`),
the tested torch release (:mod:`.versions`), text made safe to show (:mod:`.text`), opening a tree someone else
controls (:mod:`.safefs`), writing a file whole or not at all (:mod:`.files`), numbers compared across machines
(:mod:`.numerics`), one thread for the grader's own NumPy (:mod:`.threads`), the one ``python -I`` bootstrap
(:mod:`.isolated`) and importing grader modules from source (:mod:`.sourceonly`).

May import: :mod:`autograder.i18n` only. Every other stage may import it.
"""
