#!/usr/bin/env bash
# Every GPU measurement of the timing step's calibration, in one go, on a machine lent for a few minutes.
#
#   OUT=<folder> bench/gpu_session.sh [cpu|cuda]
#
# Writes into OUT: log.txt (everything printed), doctor.txt (`attnlab doctor`), run1.json .. run3.json (three full
# `attnlab timing --device DEVICE` reports of the reference, each graded with `attnlab grade --step timing`),
# harness.json (three runs of the grader's own timing of the reference's kernels, bench/gpu_harness.py),
# cuda_calibration.json (the windows bench/gpu_windows.py makes of them), grade.json (run 1's report graded with
# the reference against those windows, the grader timing the kernels on the device) and lab.json (the whole lab of
# the reference graded there). RUNS_FROM=<folder in the kit> takes the three reports from an earlier session
# instead of measuring them again (then run*.json are not written); GPU_TESTS="<pytest selection>" also runs the
# kit's tests that run only on a GPU (tests.txt). The kit runs from a world-readable copy (/tmp/attnlab-kit), so
# that any isolation layer can read it; bubblewrap is taken from .tools/ when the machine has none (.tools/bwrap.bin
# and its libraries, carried). If the first run fails, the next isolation layer down is tried. `cpu` runs the same
# on the CPU (what this script's own check runs before a GPU is spent). Stops starting new work after BUDGET_S
# seconds (default 480).
set -uo pipefail
device="${1:-cuda}"
: "${OUT:?set OUT to the folder the results go to}"
budget="${BUDGET_S:-480}"
start=$(date +%s)
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
export PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
python="${PYTHON:-python3}"
source_tree="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kit=/tmp/attnlab-kit
rm -rf "$kit" && mkdir -p "$kit"
(cd "$source_tree" && tar --exclude=.git -cf - .) | (cd "$kit" && tar -xf -)
chmod -R a+rX "$kit"
cd "$kit"

left() { echo $(( budget - ($(date +%s) - start) )); }
say() { echo "== $(date +%T) [$(( $(date +%s) - start )) s] $*"; }

if ! command -v bwrap >/dev/null && [[ -x .tools/bwrap.bin ]]; then
    mkdir -p /tmp/attnlab-tools
    if ldd .tools/bwrap.bin | grep -q "not found"; then
        printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$kit/.tools" "$kit/.tools/bwrap.bin" > /tmp/attnlab-tools/bwrap
    else
        ln -sf "$kit/.tools/bwrap.bin" /tmp/attnlab-tools/bwrap
    fi
    chmod 755 /tmp/attnlab-tools/bwrap
    export PATH="/tmp/attnlab-tools:$PATH"
fi

say "machine"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
"$python" - <<'EOF'
import platform, sys
import numpy, torch
print("python", sys.version.split()[0], "| torch", torch.__version__, "| CUDA", torch.version.cuda,
      "| numpy", numpy.__version__, "|", platform.platform())
if torch.cuda.is_available():
    print("device:", torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0))
EOF
"$python" -m autograder doctor > "$OUT/doctor.txt" 2>&1
cat "$OUT/doctor.txt"

runs="$OUT"  # where the reports are
run() {  # run N: one full timing report of the reference, graded
    local n="$1"
    say "run $n (isolation cap: ${ATTNLAB_ISOLATION:-none})"
    rm -rf "/tmp/attnlab-run$n"
    OUT="/tmp/attnlab-run$n" PYTHON="$python" timeout 300 bench/gpu_timing.sh "$device" || return 1
    cp "/tmp/attnlab-run$n/timing.json" "$OUT/run$n.json"
}

if [[ -n "${RUNS_FROM:-}" ]]; then  # the reports of an earlier session: only the grader's measurement again
    say "reports from $RUNS_FROM"
    runs=/tmp/attnlab-runs
    rm -rf "$runs" && mkdir -p "$runs" && cp "$source_tree/$RUNS_FROM"/run*.json "$runs/"
else
    for layer in "" user hook; do
        if [[ -n "$layer" ]]; then export ATTNLAB_ISOLATION="$layer"; fi
        if run 1; then break; fi
        say "run 1 failed at isolation cap '${layer:-none}'"
    done
    for n in 2 3; do
        if (( $(left) < 90 )); then say "budget: run $n not started"; break; fi
        run "$n" || say "run $n failed"
    done
fi

if (( $(left) > 60 )); then
    say "the grader's own timing, three runs"
    timeout $(( $(left) > 200 ? 200 : $(left) )) "$python" bench/gpu_harness.py --device "$device" --runs 3 \
        --json "$OUT/harness.json" || say "harness failed"
fi

if [[ -f "$OUT/harness.json" ]] && compgen -G "$runs/run*.json" >/dev/null; then
    say "the windows, from these runs (bench/gpu_windows.py)"
    machine=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
    "$python" bench/gpu_windows.py "$runs"/run*.json --harness "$OUT/harness.json" --machine "${machine:-$device}" \
        --out autograder/data/cuda_calibration.json && cp autograder/data/cuda_calibration.json "$OUT/"
fi

if [[ -f "$runs/run1.json" ]] && (( $(left) > 30 )); then
    say "a report graded with the reference and those windows (the grader times the kernels on $device itself)"
    rm -rf /tmp/attnlab-graded && mkdir -p /tmp/attnlab-graded/reports
    cp solutions/lab07_attention/*.py solutions/lab07_attention/*.npz /tmp/attnlab-graded/
    cp "$runs/run1.json" /tmp/attnlab-graded/reports/timing.json
    timeout $(( $(left) > 120 ? 120 : $(left) )) "$python" -m autograder grade /tmp/attnlab-graded --step timing \
        --json "$OUT/grade.json" || say "grade failed"
fi
if (( $(left) > 30 )); then
    say "the whole lab of the reference, graded here"
    timeout $(( $(left) > 120 ? 120 : $(left) )) "$python" -m autograder grade solutions/lab07_attention \
        --json "$OUT/lab.json" | tail -22 || say "the whole-lab grade failed"
fi
if [[ -n "${GPU_TESTS:-}" ]] && (( $(left) > 30 )); then  # the kit's tests that run only where a GPU is
    say "the kit's GPU tests, with the committed windows: $GPU_TESTS"
    if [[ -f "$source_tree/autograder/data/cuda_calibration.json" ]]; then
        cp "$source_tree/autograder/data/cuda_calibration.json" autograder/data/cuda_calibration.json
    fi
    # shellcheck disable=SC2086
    timeout $(( $(left) > 300 ? 300 : $(left) )) "$python" -m pytest $GPU_TESTS -n 0 -q -p no:randomly -rs 2>&1 \
        | tee "$OUT/tests.txt" | tail -25 || say "the GPU tests failed"
fi
say "done"
