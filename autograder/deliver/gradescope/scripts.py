"""The two scripts Gradescope runs from the autograder zip: ``setup.sh`` (once, building the image) and
``run_autograder`` (for every submission). Both run as root on Gradescope's default image (Ubuntu 22.04, its
Python 3.10); ``$ATTNLAB_PYTHON`` and ``$ATTNLAB_GRADESCOPE_ROOT`` let the kit's tests run them elsewhere."""

from __future__ import annotations

SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image (Ubuntu 22.04, Python 3.10).
# It installs the kit's pinned requirements (requirements.txt, the course lock) and the kit's wheel.
set -euo pipefail
HERE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
PYTHON="${{ATTNLAB_PYTHON:-python3}}"
TORCH_INDEX="${{ATTNLAB_TORCH_INDEX-{torch_index}}}"  # empty: take torch from pip's usual index

if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
fi
# 1. torch's CPU build first: Gradescope has no GPU, and PyPI's Linux torch is the CUDA build (several GB).
if [ -n "$TORCH_INDEX" ]; then
    "$PYTHON" -m pip install --quiet --index-url "$TORCH_INDEX" "torch=={torch}"
fi
# 2. the pinned requirements (torch is satisfied already), 3. the kit's wheel, nothing more.
"$PYTHON" -m pip install --quiet -r "$HERE/requirements.txt"
"$PYTHON" -m pip install --quiet --no-deps "$HERE/{wheel}"
"$PYTHON" -I -c "import autograder, torch; print('attnlab', autograder.__version__, 'with torch', torch.__version__)"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this as root for every submission. The runner (autograder.deliver.gradescope.runner) closes
# the source folder (hidden graders, reference, course secret) to every other user, grades
# /autograder/handin/submission (student code runs in the kit's sandbox, as an unprivileged user where the
# sandbox can switch to one) and writes /autograder/results/results.json, also when grading fails.
set -u
ROOT="${{ATTNLAB_GRADESCOPE_ROOT:-/autograder}}"
PYTHON="${{ATTNLAB_PYTHON:-python3}}"
export ATTNLAB_GRADESCOPE_ROOT="$ROOT"
cd "$(mktemp -d)" || exit 1  # an empty folder: nothing of the submission is on the runner's path
"$PYTHON" -I -c 'import sys; from autograder.deliver.gradescope.runner import main; sys.exit(main())'
if [ ! -s "$ROOT/results/results.json" ]; then  # the runner could not even start
    mkdir -p "$ROOT/results"
    cat > "$ROOT/results/results.json" <<'JSON'
{{"score": 0.0, "output": "{no_runner}", "tests": []}}
JSON
fi
"""

NO_RUNNER = (
    "The autograder could not start (its setup did not install attnlab); this is not your mistake: "
    "tell your instructor."
)


def setup(wheel: str, torch: str, torch_index: str) -> str:
    """``setup.sh`` for the wheel file ``wheel`` and the pinned torch release ``torch``."""
    return SETUP.format(wheel=wheel, torch=torch, torch_index=torch_index)


def run_autograder() -> str:
    return RUN_AUTOGRADER.format(no_runner=NO_RUNNER)
