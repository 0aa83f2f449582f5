"""Load the reference solution in the grader's own process (it is trusted code).

The reference modules import each other the way a student's do (``from softmax
import softmax``). Each is loaded on first use under its bare name with the
reference folder first on ``sys.path``; afterwards the path is restored and the
bare names are taken out of ``sys.modules`` again, so nothing else in the
process sees them. Loading lazily keeps torch out of a run that grades only
the numpy steps.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType


class Reference:
    """The modules of one reference folder; ``ref.scaling.attention(...)``."""

    def __init__(self, folder: Path, module_names: tuple[str, ...]) -> None:
        self.folder = Path(folder).resolve()
        self.module_names = module_names
        self.modules: dict[str, ModuleType] = {}

    def load(self, name: str) -> ModuleType:
        """The reference module ``name`` (with the reference's own versions of its imports)."""
        if name in self.modules:
            return self.modules[name]
        if name not in self.module_names or not (self.folder / f"{name}.py").is_file():
            raise AttributeError(f"the reference folder {self.folder} has no module {name!r}")
        saved_path = list(sys.path)
        saved = {n: sys.modules.pop(n) for n in self.module_names if n in sys.modules}
        sys.modules.update(self.modules)  # already loaded reference modules serve the imports
        sys.path.insert(0, str(self.folder))
        try:
            module = importlib.import_module(name)
            for other in self.module_names:  # whatever it imported on the way is the reference's too
                if other in sys.modules and other not in self.modules:
                    self.modules[other] = sys.modules[other]
        finally:
            sys.path[:] = saved_path
            for other in self.module_names:
                sys.modules.pop(other, None)
            sys.modules.update(saved)
        self.modules[name] = module
        return module

    def __getattr__(self, name: str) -> ModuleType:
        if name.startswith("__") or name in ("folder", "module_names", "modules"):
            raise AttributeError(name)
        return self.load(name)
