"""The kit's build backend: setuptools' own, with the start-up guard added to every wheel it builds.

``pyproject.toml`` names this module (``backend-path = ["."]``), so ``pip install .``, ``pip install -e .`` and
``pip wheel .`` all give an install whose ``site-packages`` holds :mod:`autograder.startup`'s guard
(:mod:`autograder.deliver.release.pth`): a wheel's for the package it holds, an editable install's for this
source tree's ``autograder`` folder. Everything else is setuptools' (``setuptools.build_meta``), unchanged.
"""

from __future__ import annotations

import os
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  every hook setuptools provides, as it provides it

from autograder.deliver.release import pth


def build_wheel(
    wheel_directory: str, config_settings: dict | None = None, metadata_directory: str | None = None
) -> str:
    """setuptools' wheel, with the guard for the ``autograder`` package it holds."""
    name = _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
    pth.add_to_wheel(Path(wheel_directory) / name)
    return name


def build_editable(
    wheel_directory: str, config_settings: dict | None = None, metadata_directory: str | None = None
) -> str:
    """setuptools' editable wheel, with the guard for this source tree's ``autograder`` folder (the hooks run in the
    source tree)."""
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    pth.add_to_wheel(Path(wheel_directory) / name, os.path.realpath("autograder"))
    return name
