#!/usr/bin/env bash
# Sets up everything the tests and the benchmark need on a fresh machine
# (Python 3.11 with pip, gcc): pinned test tools, the SGLang CPU test
# environment, and this package built from source (editable, so the tests
# run against the freshly compiled extension). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
PIP="$PY -m pip install --disable-pip-version-check -q"

$PIP -r requirements/build.txt -r requirements/test.txt
# SGLang for the parity/adapter tests and the side-by-side benchmark
$PIP -r requirements/sglang-cpu.txt
$PIP --no-deps sglang==0.5.23
# the package itself: compiles csrc/ and the Cython bindings
rm -f sglang_toolparse/_core.c sglang_toolparse/_core.*.so
$PIP --no-build-isolation -e .
$PY -c "import sglang_toolparse, sglang_toolparse._core as c; print('sglang_toolparse built:', c.__file__)"
