"""Load the reference solution in the grader's own process (it is trusted code).

The reference modules import each other the way a student's do (``from softmax
import softmax``). They are loaded under their bare names with the reference
folder first on ``sys.path``, then moved out of ``sys.modules`` and the path is
restored, so nothing else in the process sees them and a later load of a
different folder cannot mix with them.
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
        self.modules: dict[str, ModuleType] = {}
        missing = [name for name in module_names if not (self.folder / f"{name}.py").is_file()]
        if missing:
            raise FileNotFoundError(f"reference folder {self.folder} lacks {', '.join(m + '.py' for m in missing)}")
        saved_path, saved_modules = list(sys.path), {n: sys.modules.pop(n) for n in module_names if n in sys.modules}
        sys.path.insert(0, str(self.folder))
        try:
            for name in module_names:
                self.modules[name] = importlib.import_module(name)
        finally:
            sys.path[:] = saved_path
            for name in module_names:
                sys.modules.pop(name, None)
            sys.modules.update(saved_modules)

    def __getattr__(self, name: str) -> ModuleType:
        try:
            return self.__dict__["modules"][name]
        except KeyError:
            raise AttributeError(f"the reference has no module {name!r}") from None
