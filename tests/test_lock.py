"""The course locks agree with pyproject.toml's ranges.

``requirements/compile.sh`` writes the locks; this catches a range changed in
``pyproject.toml`` without recompiling them. Whether a lock still installs and
grades the reference is CI's job (``.ci/run`` installs ``requirements/lock.txt``
into a fresh virtual environment and grades the reference there).
"""

from __future__ import annotations

import re

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

try:
    import tomllib  # novermin  (3.11+; tomli stands in below)
except ModuleNotFoundError:
    import tomli as tomllib
from tests import kit

LOCKS = {"lock.txt": ("torch",), "lock-course.txt": ("torch", "course")}
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s;]+)\s*(?:;\s*(.+))?$")


def pins(text: str, environment: dict[str, str]) -> dict[str, Version]:
    """The version each package is pinned to in a lock, for this ``environment``'s markers."""
    found = {}
    for line in text.splitlines():
        match = PIN.match(line.strip())
        if match and (match.group(3) is None or Marker(match.group(3)).evaluate(environment)):
            found[canonicalize_name(match.group(1))] = Version(match.group(2))
    return found


def requirements(extras: tuple[str, ...]) -> list[Requirement]:
    project = tomllib.loads((kit.ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    listed = project["dependencies"] + [r for extra in extras for r in project["optional-dependencies"][extra]]
    return [Requirement(r) for r in listed]


@pytest.mark.parametrize("python", ["3.10", "3.11", "3.12", "3.13"])
@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_every_dependency_is_pinned_inside_its_range(lock: str, python: str) -> None:
    environment = {"python_version": python, "python_full_version": f"{python}.0", "sys_platform": "linux"}
    environment |= {"platform_machine": "x86_64", "platform_system": "Linux", "implementation_name": "cpython"}
    pinned = pins((kit.ROOT / "requirements" / lock).read_text(encoding="utf-8"), environment)
    for requirement in requirements(LOCKS[lock]):
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{lock} does not pin {name} for Python {python}: run requirements/compile.sh"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"{lock} pins {name}=={pinned[name]}, outside pyproject's {requirement}: run requirements/compile.sh"
        )


def test_the_locks_hold_torch_to_the_tested_cpu_release_without_cuda_libraries() -> None:
    for lock in LOCKS:
        text = (kit.ROOT / "requirements" / lock).read_text(encoding="utf-8")
        assert re.search(r"^torch==2\.13\.0\+cpu ; sys_platform == 'linux'$", text, re.MULTILINE), lock
        assert not re.search(r"^(nvidia-|triton)", text, re.MULTILINE), f"{lock} would install CUDA libraries"
