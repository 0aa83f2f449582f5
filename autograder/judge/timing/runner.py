"""``attnlab timing``: run a submission's ``timing.py`` in the sandbox and build its report.

Every measurement is a call into the student's functions through the sandbox,
with limits raised for long calls (a GPU also needs the address-space limit
lifted: CUDA maps far more virtual memory than it uses). The slopes in the
report come from the student's own ``loglog_slope``; medians, speed-ups and
everything else derived are computed here, in trusted code. The finished
report is validated with the same parser the graders use before it is written.
"""

from __future__ import annotations

import json
import resource
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from autograder.judge import messages
from autograder.judge.timing import analysis, plots, report
from autograder.judge.timing.calibration import GPU_NOT_CALIBRATED, SERIES, Sweep, device_class, sweep_for, windows_for
from autograder.sandbox.client import Limits, Sandbox, StudentCallError

MODULE = "timing"
N_LAYERS, N_HEADS = 2, 4  # the kit's decoder (timing.time_decoding: toy_gpt.random_weights at this size)


class MeasurementError(Exception):
    """A call into the student's code failed or returned something the report cannot hold."""

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.message, self.output = message, output


def limits_for(device: str) -> Limits:
    """Sandbox limits for a timing run: long calls; on a GPU, no address-space limit."""
    memory = resource.RLIM_INFINITY if device_class(device) != "cpu" else 8 << 30
    return Limits(
        call_timeout_s=300.0,
        import_timeout_s=120.0,
        step_budget_s=float("inf"),  # a measurement run takes as long as its sweep
        cpu_per_call_s=900,
        cpu_total_s=3600,
        memory_bytes=memory,
    )


class _Student:
    """Calls into ``timing.py`` in the sandbox, advancing the progress bar; failures become
    :class:`MeasurementError`."""

    def __init__(self, sandbox: Sandbox, bar: tqdm) -> None:
        self.sandbox, self.bar = sandbox, bar

    def call(self, label: str, text: str, function: str, *args: Any, **kwargs: Any) -> Any:
        """``function(*args, **kwargs)``; ``label`` is shown on the bar, ``text`` in an error."""
        self.bar.set_postfix_str(label, refresh=False)
        try:
            value = self.sandbox.call(MODULE, function, *args, **kwargs)
        except StudentCallError as error:
            raise MeasurementError(
                messages.call_outcome(error.outcome, text, called=f"{MODULE}.{function}"), error.output
            ) from None
        self.bar.update()
        return value


def _number(value: Any, text: str, positive: bool = False) -> float:
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
        value = value.item()
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not np.isfinite(value)
        or (positive and value <= 0)
    ):
        raise MeasurementError(
            f"{text} returned {_describe(value)}, not a {'positive ' if positive else ''}finite number"
        )
    return float(value)


def _numbers(value: Any, text: str, length: int) -> list[float]:
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or len(value) != length:
        raise MeasurementError(f"{text} returned {_describe(value)}, not a list of {length} numbers")
    return [_number(v, f"{text} (item {i})", positive=True) for i, v in enumerate(value)]


def _tokens(value: Any, text: str, length: int) -> list[int]:
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu":
        value = value.tolist()
    if (
        not isinstance(value, (list, tuple))
        or len(value) != length
        or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in value)
    ):
        raise MeasurementError(
            f"{text} returned {_describe(value)} as tokens, not a list of {length} token ids (non-negative ints)"
        )
    return list(value)


def _describe(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)} items"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return f"{type(value).__name__} {str(value)[:40]}"


def _environment(sandbox: Sandbox, device: str | None, d: int) -> dict[str, Any]:
    try:
        found = sandbox.probe("timing_environment", MODULE, device, d)
    except StudentCallError as error:
        what = "importing timing.py and describing the device"
        raise MeasurementError(messages.call_outcome(error.outcome, what), error.output) from None
    if device is not None and device_class(device) == "cuda" and not found.get("cuda_available"):
        raise MeasurementError(
            f"--device {device}: torch sees no CUDA device here (torch {found.get('torch')}); run on a "
            "GPU machine or use --device cpu"
        )
    return found


def _attention(student: _Student, device: str, sweep: Sweep) -> dict[str, Any]:
    """Every series over the sweep, ``sweep.rounds`` times, each size's repeats pooled over the rounds."""
    pooled: dict[str, list[list[float]]] = {name: [[] for _ in sweep.ns] for name in SERIES}
    for _ in range(sweep.rounds):
        for name, (kind, causal) in SERIES.items():
            for index, n in enumerate(sweep.ns):
                text = (
                    f"time_attention({n}, d={sweep.d}, device={device!r}, repeats={sweep.repeats}, "
                    f"kind={kind!r}, causal={causal}, return_times=True)"
                )
                value = student.call(
                    f"{name} n={n}",
                    text,
                    "time_attention",
                    n,
                    sweep.d,
                    device,
                    sweep.repeats,
                    kind=kind,
                    causal=causal,
                    return_times=True,
                )
                pooled[name][index].extend(_numbers(value, text, sweep.repeats))
    in_fit = [i for i, n in enumerate(sweep.ns) if sweep.fit[0] <= n <= sweep.fit[1]]
    series = {}
    for name, (kind, causal) in SERIES.items():
        medians = [statistics.median(times) for times in pooled[name]]
        fit_ns, fit_t = [sweep.ns[i] for i in in_fit], [medians[i] for i in in_fit]
        text = f"loglog_slope({fit_ns}, <the {name} medians>)"
        slope = _number(student.call(f"{name} slope", text, "loglog_slope", fit_ns, fit_t), text)
        series[name] = {
            "kind": kind,
            "causal": causal,
            "seconds": pooled[name],
            "median": medians,
            "min": [min(t) for t in pooled[name]],
            "max": [max(t) for t in pooled[name]],
            "slope": slope,
        }
    return {
        "d": sweep.d,
        "repeats": sweep.repeats,
        "rounds": sweep.rounds,
        "ns": list(sweep.ns),
        "fit": {"n_min": sweep.fit[0], "n_max": sweep.fit[1]},
        "series": series,
    }


def _decoding(student: _Student, device: str, sweep: Sweep) -> dict[str, Any]:
    """Both decoding runs, their per-token slopes (the student's ``loglog_slope``) and the speed-ups.

    Each run is made ``sweep.decode_rounds`` times and a token's latency is its
    minimum over the rounds: another process on the machine only ever adds
    time, and a cached step takes a few hundred microseconds, so one
    disturbed stretch could otherwise tilt the slope (tokens come from the first round).
    """
    runs = {}
    positions = np.arange(1, sweep.n_tokens + 1)
    for label, use_cache in (("without_cache", False), ("with_cache", True)):
        text = (
            f"time_decoding({sweep.n_tokens}, d_model={sweep.d_model}, use_cache={use_cache}, "
            f"device={device!r}, return_tokens=True)"
        )
        rounds, tokens = [], []
        for _ in range(sweep.decode_rounds):
            value = student.call(
                f"decoding {label.replace('_', ' ')}",
                text,
                "time_decoding",
                sweep.n_tokens,
                sweep.d_model,
                use_cache,
                device,
                return_tokens=True,
            )
            if not isinstance(value, (list, tuple)) or len(value) != 2:
                raise MeasurementError(f"{text} returned {_describe(value)}, not (seconds, tokens)")
            rounds.append(_numbers(value[0], text, sweep.n_tokens))
            tokens = tokens or _tokens(value[1], text, sweep.n_tokens)
        seconds = analysis.fastest_per_token(rounds).tolist()
        centres, medians = analysis.blocks(positions, np.array(seconds), sweep.decode_fit, sweep.block)
        slope_text = (
            f"loglog_slope(<centres of the {sweep.block}-token blocks of tokens "
            f"{sweep.decode_fit[0]}..{sweep.decode_fit[1]}>, <their median seconds "
            f"{label.replace('_', ' ')}>)"
        )
        slope = _number(
            student.call(
                f"decoding slope {label.replace('_', ' ')}",
                slope_text,
                "loglog_slope",
                centres.tolist(),
                medians.tolist(),
            ),
            slope_text,
        )
        runs[label] = {"seconds": seconds, "tokens": tokens, "slope": slope}
    last, total = analysis.speedups(
        np.array(runs["without_cache"]["seconds"]), np.array(runs["with_cache"]["seconds"]), sweep.block
    )
    return {
        "n_tokens": sweep.n_tokens,
        "d_model": sweep.d_model,
        "n_layers": N_LAYERS,
        "n_heads": N_HEADS,
        "fit": {"t_min": sweep.decode_fit[0], "t_max": sweep.decode_fit[1]},
        "block": sweep.block,
        "rounds": sweep.decode_rounds,
        **runs,
        "speedup_last": last,
        "speedup_total": total,
    }


def _memory(student: _Student, device: str, sweep: Sweep) -> dict[str, Any]:
    """Peak memory of one forward pass per size, naive and SDPA."""
    found: dict[str, dict[str, list]] = {}
    methods = set()
    for kind in ("naive", "sdpa"):
        allocated, reserved = [], []
        for n in sweep.memory_ns:
            text = f"peak_memory({n}, d={sweep.d}, device={device!r}, kind={kind!r})"
            value = student.call(f"memory {kind} n={n}", text, "peak_memory", n, sweep.d, device, kind=kind)
            if not isinstance(value, dict) or not {"allocated", "reserved", "method"} <= set(value):
                raise MeasurementError(
                    f"{text} returned {_describe(value)}, not a dict with allocated, reserved and method"
                )
            allocated.append(int(_number(value["allocated"], f"{text}['allocated']")))
            reserved.append(
                None if value["reserved"] is None else int(_number(value["reserved"], f"{text}['reserved']"))
            )
            methods.add(str(value["method"])[:100])
        found[kind] = {"allocated": allocated, "reserved": None if None in reserved else reserved}
    return {
        "method": "; ".join(sorted(methods)),
        "ns": list(sweep.memory_ns),
        "score_bytes": [4 * n * n for n in sweep.memory_ns],
        **found,
    }


def _plan_size(sweep: Sweep) -> int:
    """How many student calls the run makes (for the progress bar)."""
    return (
        sweep.rounds * len(SERIES) * len(sweep.ns)
        + len(SERIES)
        + 2 * (sweep.decode_rounds + 1)
        + 2 * len(sweep.memory_ns)
    )


def measure(folder: Path, *, device: str | None = None, quick: bool = False, progress: bool = True) -> dict[str, Any]:
    """Run the timing lab on the submission in ``folder``; the report as a JSON-able dict.

    ``device``: ``"cpu"`` or ``"cuda"`` (None: CUDA when the child sees one).
    ``quick``: the reduced sweep (fewer sizes and repeats, same fit ranges).
    """
    # device None may turn out to be CUDA
    with Sandbox(Path(folder), limits_for(device or "cuda"), label="timing") as sandbox:
        env = _environment(sandbox, device, 64)
        resolved = env["device"]
        sweep = sweep_for(resolved, quick)
        with tqdm(
            total=_plan_size(sweep),
            desc=f"attnlab timing ({resolved})",
            unit="call",
            file=sys.stderr,
            disable=not progress,
            dynamic_ncols=True,
        ) as bar:
            student = _Student(sandbox, bar)
            attention = _attention(student, resolved, sweep)
            decoding = _decoding(student, resolved, sweep)
            memory = _memory(student, resolved, sweep)
    notes = [] if windows_for(resolved).calibrated else [GPU_NOT_CALIBRATED]
    data = {
        "schema": report.SCHEMA,
        "sweep": "quick" if quick else "full",
        "command": f"attnlab timing --device {device_class(resolved)}" + (" --quick" if quick else ""),
        "environment": {
            "device": resolved,
            "device_name": str(env.get("device_name", ""))[:120],
            "torch": str(env.get("torch", "")),
            "python": str(env.get("python", "")),
            "platform": str(env.get("platform", ""))[:120],
            "dtype": "float32",
            "threads": int(env.get("threads", 1)),
            "sdpa_backend": str(env.get("sdpa_backend", "unknown")),
        },
        "attention": attention,
        "decoding": decoding,
        "memory": memory,
        "notes": notes,
    }
    try:
        report.parse(json.loads(report.dumps(data)))
    except (report.ReportError, ValueError) as error:
        raise MeasurementError(
            f"the measurements cannot make a valid report: {getattr(error, 'message', error)}"
        ) from None
    return data


def write(folder: Path, data: dict[str, Any]) -> list[Path]:
    """Write ``reports/timing.json`` and the plots into ``folder``; the paths written."""
    target = Path(folder) / report.FOLDER
    if target.is_symlink():
        raise MeasurementError(f"{target} is a symbolic link; remove it so the report can be written")
    target.mkdir(exist_ok=True)
    path = target / report.FILE
    path.write_text(report.dumps(data), encoding="utf-8")
    return [path, *plots.draw(report.parse(data), target)]
