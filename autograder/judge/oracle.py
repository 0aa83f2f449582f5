"""The trusted torch side of the checks: where the graders' own torch computations run.

Some checks compare the student's answers with torch (SDPA, autograd) or with the reference's torch modules
(``toy_gpt``, ``kv_cache``). Those computations are the probes of :mod:`autograder.sandbox.probes.oracle`, and an
*oracle* runs them:

- :class:`BoxedOracle`, in the namespaces layer: a sandbox child of its own, forked from the fork server that has
  imported torch already, whose working copy is a copy of the reference (or empty, for a grade without one). The
  grader then never imports torch: one torch import per grade instead of two (about 1.1 s of CPU on the
  critical path of a whole-lab grade, issue 23). That child is confined as every child is (its own PID, mount,
  network and IPC namespaces, its working copy on a tmpfs of its own), so the student's children, each in
  namespaces of their own, can no more see it or its files than another student's; no student code ever runs in
  it, and the fork server it comes from never runs student code either.
- :class:`InProcessOracle`, in the other layers (where the children share a uid and folders of the host, a
  child holding the reference could be read by a student's child): the same probes here in the grader, with
  the reference's modules imported by :class:`autograder.base.reference.Reference`, as before.

Both hand back what the probe returned through the sandbox's encoding (:mod:`autograder.sandbox.protocol`), so a
check sees the same types on either path. ``ATTNLAB_ORACLE=grader`` computes in the grader everywhere.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from autograder.sandbox.isolation import Level

if TYPE_CHECKING:
    from autograder.base.reference import Reference
    from autograder.sandbox.client import Limits, Sandbox

ENV_SWITCH = "ATTNLAB_ORACLE"  # "grader": compute in the grading process in every layer
STEP_BUDGET_S = 600.0  # the box serves every step of a grade: its wall budget is the grade's, not one step's


def boxed(level: Level) -> bool:
    """Whether the oracle of a grade at ``level`` runs in a sandbox child of its own (else in the grader)."""
    return level == Level.NAMESPACES and os.environ.get(ENV_SWITCH, "box") != "grader"


class OracleFailed(Exception):
    """The trusted side could not compute ``what`` (never the student's fault: the check reports an internal error,
    which names ``what`` and ``detail``, for the instructor)."""

    def __init__(self, what: str, detail: object) -> None:
        super().__init__(f"the grader's trusted torch side could not compute {what}: {detail!r}"[:400])
        self.what = what


class Oracle(Protocol):
    """Runs the graders' trusted probes (:mod:`autograder.sandbox.probes.oracle`)."""

    @property
    def has_reference(self) -> bool:
        """Whether the reference's modules are here (an instructor's grade), so the probes that load them work;
        False in a student's own run, where only torch's own computations (SDPA, autograd) are available."""

    def probe(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """The value of probe ``name`` on ``args``, as the sandbox's encoding hands it back."""

    def call(self, module: str, function: str, *args: Any, **kwargs: Any) -> Any:
        """The value of the reference's ``module.function(*args, **kwargs)``, encoded the same way."""

    def close(self) -> None:
        """End whatever the oracle started."""


def _through_encoding(value: Any) -> Any:
    """``value`` as it would arrive from a child: torch tensors as NumPy arrays, nothing else changed."""
    from autograder.sandbox.protocol import decode, encode

    arrays: list = []
    return decode(encode(value, arrays), arrays)


class InProcessOracle:
    """The probes run in this process; ``reference`` serves their ``load`` (None: a grade without one)."""

    def __init__(self, reference: Reference | None) -> None:
        self.reference = reference

    @property
    def has_reference(self) -> bool:
        return self.reference is not None

    def _load(self, module: str) -> Any:
        if self.reference is None:
            raise OracleFailed(f"{module}.py", "no reference was given (--reference)")
        return self.reference.load(module)

    def probe(self, name: str, *args: Any, **kwargs: Any) -> Any:
        from autograder.sandbox.probes import PROBES

        return _through_encoding(PROBES[name](self._load, *args, **kwargs))

    def call(self, module: str, function: str, *args: Any, **kwargs: Any) -> Any:
        return _through_encoding(getattr(self._load(module), function)(*args, **kwargs))

    def close(self) -> None:
        pass


class BoxedOracle:
    """The probes run in a sandbox child of their own (forked from the torch fork server), its working copy the
    ``reference`` folder (None: an empty one); started on the first request, ended by :meth:`close`."""

    def __init__(
        self, reference: Path | None, limits: Limits, level: Level, cpus: tuple[int, ...] | None = None
    ) -> None:
        self.reference, self.limits, self.level, self.cpus = reference, limits, level, cpus
        self._sandbox: Sandbox | None = None
        self._empty: Path | None = None

    @property
    def has_reference(self) -> bool:
        return self.reference is not None

    def _box(self) -> Sandbox:
        if self._sandbox is None:
            from autograder.sandbox.client import Hangs, Sandbox

            folder = self.reference
            if folder is None:
                folder = self._empty = Path(tempfile.mkdtemp(prefix="attnlab-oracle-"))
            limits = replace(self.limits, step_budget_s=max(self.limits.step_budget_s, STEP_BUDGET_S))
            self._sandbox = Sandbox(folder, limits, Hangs(), self.level, torch=True, cpus=self.cpus, label="oracle")
        return self._sandbox

    def _value(self, what: str, outcome: Any) -> Any:
        from autograder.sandbox import outcome as outcomes

        if not isinstance(outcome, outcomes.Returned):
            raise OracleFailed(what, outcome)
        return outcome.value

    def probe(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._value(name, self._box().run_probe(name, None, *args, **kwargs))

    def call(self, module: str, function: str, *args: Any, **kwargs: Any) -> Any:
        return self._value(f"{module}.{function}", self._box().run_call(module, function, *args, **kwargs))

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None
        if self._empty is not None:
            os.rmdir(self._empty)
            self._empty = None
