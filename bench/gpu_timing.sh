#!/usr/bin/env bash
# GPU check of the timing lab: run the whole lab on a CUDA machine in one command and print the summary.
#
#   bench/gpu_timing.sh [cuda|cpu] [--quick]
#
# Measures a scratch copy of the reference (solutions/lab07_attention, so the committed CPU report
# stays as it is) with `attnlab timing --device DEVICE`, grades the timing step on that report, and
# prints the report's summary. On an H200-class machine the full run takes well under 5 minutes
# (a hard limit of 5 minutes is enforced). Its report is the data to calibrate the GPU windows
# from (autograder/judge/timing/calibration.py, CUDA_WINDOWS): set OUT=<folder> to keep
# timing.json and the plots. `cpu` runs the same path on the CPU (what CI-sized machines can check).
set -euo pipefail

device="${1:-cuda}"
shift || true
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$root"

"$python" - "$device" <<'EOF'
import sys, torch
device = sys.argv[1]
print(f"torch {torch.__version__}, CUDA available: {torch.cuda.is_available()}", end="")
print(f", {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else "")
if device == "cuda" and not torch.cuda.is_available():
    sys.exit("gpu_timing.sh: no CUDA device here; run `bench/gpu_timing.sh cpu` for the CPU path")
EOF

mkdir -p "$work/submission"
cp "$root"/solutions/lab07_attention/*.py "$root"/solutions/lab07_attention/*.npz "$work/submission/"
start=$(date +%s)
timeout 300 "$python" -m autograder timing "$work/submission" --device "$device" --no-progress "$@"
echo "measured in $(( $(date +%s) - start )) s"
"$python" -m autograder grade "$work/submission" --step timing --public-only
if [[ -n "${OUT:-}" ]]; then
    mkdir -p "$OUT"
    cp "$work/submission/reports/"* "$OUT/"
    echo "kept the report and plots in $OUT"
fi
