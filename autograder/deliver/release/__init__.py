"""``attnlab release``: the student bundle, and the public engine's wheel it (and the Gradescope zip) ships.

- :mod:`autograder.deliver.release.contents`: which of the engine's files are the public engine.
- :mod:`autograder.deliver.release.wheel`: the public engine as a wheel (built with pip from a staged copy).
- :mod:`autograder.deliver.release.leaks`: what must never leave the kit, and a scan for it.
- :mod:`autograder.deliver.release.readme`: the student's README (two commands).
- :mod:`autograder.deliver.release.bundle`: the bundle itself, scanned before it is kept.
"""
