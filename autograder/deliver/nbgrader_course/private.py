"""The course's private folder: its layout and its ``settings.json``, read in one place.

``attnlab nbgrader-course`` writes it (mode 700, instructor only): the hidden
graders, the reference, the course secret and the settings. The grade cells
read the deadline from it, the grader process the rest. This module is
imported in the notebook kernel too, so it uses the standard library only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SETTINGS, HIDDEN, REFERENCE, SECRET = "settings.json", "hidden", "reference", "secret"
DEFAULT_DEADLINE_S = 900.0  # one student's whole grading run, unless the settings say otherwise


class PrivateFolderError(RuntimeError):
    """The private folder is missing or its settings cannot be read."""


@dataclass(frozen=True)
class Settings:
    """What ``settings.json`` holds: the grading deadline, the sandbox limits (by field), the language, and the
    weakest isolation layer grading may use (None: whatever the machine gives)."""

    deadline_s: float = DEFAULT_DEADLINE_S
    limits: dict[str, Any] = field(default_factory=dict)
    language: str = "en"  # the language of the notebook and of every feedback (a code of autograder.i18n)
    isolation: str | None = None

    def to_json(self) -> str:
        data: dict[str, Any] = {"deadline_s": self.deadline_s, "limits": self.limits, "language": self.language}
        if self.isolation is not None:
            data["isolation"] = self.isolation
        return json.dumps(data, indent=2) + "\n"


@dataclass(frozen=True)
class Private:
    """The private folder at ``root``."""

    root: Path

    @property
    def hidden(self) -> Path:
        return self.root / HIDDEN

    @property
    def reference(self) -> Path:
        return self.root / REFERENCE

    @property
    def secret_file(self) -> Path:
        return self.root / SECRET

    @property
    def settings_file(self) -> Path:
        return self.root / SETTINGS

    def settings(self) -> Settings:
        """The parsed settings; :class:`PrivateFolderError` when they are missing or malformed."""
        try:
            data = json.loads(self.settings_file.read_text(encoding="utf-8"))
            isolation = data.get("isolation")
            return Settings(
                deadline_s=float(data.get("deadline_s", DEFAULT_DEADLINE_S)),
                limits=dict(data.get("limits", {})),
                language=str(data.get("language", "en")),
                isolation=None if isolation is None else str(isolation),
            )
        except (OSError, ValueError, TypeError, AttributeError) as error:
            raise PrivateFolderError(f"{self.settings_file}: {error}") from None

    def secret(self) -> str | None:
        """The course secret, or None when the folder has none."""
        return self.secret_file.read_text(encoding="utf-8").strip() if self.secret_file.is_file() else None
