#!/usr/bin/env bash
# Regenerate the course locks from pyproject.toml's ranges (run after changing a dependency):
#   requirements/lock.txt         the kit's own needs: what students and the Gradescope zip install
#   requirements/lock-course.txt  the same plus the course extra (nbgrader with Jupyter), for instructors
# `uv pip compile --universal` writes one file that holds for Python 3.10 to 3.13 on every platform.
# torch (the kit's `torch` extra) is held to the release the kit is tested with, as its CPU build on Linux
# (constraints.txt: 2.13.0+cpu, a version only PyTorch's CPU index has). PyPI's Linux torch is a CUDA build that
# pulls several GB of CUDA libraries: a lock can never install it, since with the CPU index out of reach
# `pip install -r lock.txt` finds no 2.13.0+cpu and stops; the CUDA libraries are left out of the locks too.
set -euo pipefail
cd "$(dirname "$0")/.."
common=(--universal --python-version 3.10 -c requirements/constraints.txt --extra torch --quiet
    --extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match)

cuda_only() {  # the CUDA-only packages torch's PyPI metadata names, as --no-emit-package options
    uv pip compile pyproject.toml "$@" "${common[@]}" \
        | grep -oE '^(nvidia-[a-z0-9-]+|triton|cuda-[a-z0-9-]+)' | sort -u | sed 's/^/--no-emit-package=/'
}

compile() {
    local out=$1
    shift
    # shellcheck disable=SC2046  # one option per word
    uv pip compile pyproject.toml "$@" "${common[@]}" $(cuda_only "$@") \
        --custom-compile-command "requirements/compile.sh" -o "$out"
    echo "wrote $out"
}

compile requirements/lock.txt
compile requirements/lock-course.txt --extra course
