#!/usr/bin/env bash
# Hardening checks for CI (a few minutes in all); installs what it needs,
# so it runs on a clean machine:
#   1. leak check of the C core: LeakSanitizer+ASan+UBSan and valgrind
#      memcheck over the seed corpus of every format (scripts/leak-check.sh)
#   2. coverage-guided fuzzing of every format: FUZZ_RUNS inputs (default
#      150000) from seed FUZZ_SEED, capped at FUZZ_SECONDS (default 60),
#      invariants checked on every input (scripts/fuzz.sh), then the corpus
#      it reached is replayed under LeakSanitizer
#   3. tests (SAN_TESTS, default: hardening, golden and property tests of
#      every format) against an ASan+UBSan build of the extension
#      (scripts/sanitize-tests.sh)
# FUZZ_PY_SECONDS>0 adds atheris over the Python API (scripts/fuzz-python.sh,
# off by default: it needs the atheris wheel and builds the core once more).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python}"

need=()
command -v clang >/dev/null || need+=(clang)
command -v valgrind >/dev/null || need+=(valgrind)
if [ ${#need[@]} -gt 0 ]; then
    echo "== installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq "${need[@]}" >/dev/null
fi
clang --version | head -1

echo "== 1. leak check"
scripts/leak-check.sh

echo "== 2. fuzzing"
# CI runs a reproducible slice: a fixed seed and a fixed number of runs (the
# time limit only caps a slow machine to a prefix of the same sequence), so a
# red CI is a real, replayable finding, never the luck of the draw. Long
# exploratory runs (random seeds) are documented in docs/ROBUSTNESS.md.
scripts/fuzz.sh "${FUZZ_SECONDS:-60}" -seed="${FUZZ_SEED:-20261130}" -runs="${FUZZ_RUNS:-150000}"
echo "== replaying the fuzz corpus under LeakSanitizer"
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="halt_on_error=1" \
    fuzz/out/driver_asan --raw fuzz/out/work

if [ "${FUZZ_PY_SECONDS:-0}" -gt 0 ]; then
    echo "== atheris over the Python API"
    scripts/fuzz-python.sh "$FUZZ_PY_SECONDS"
fi

echo "== JSON normalizer against its byte-by-byte version (scripts/json-diff.sh)"
if git rev-parse -q --verify 86b4cdf^{commit} >/dev/null 2>&1; then
    scripts/json-diff.sh 86b4cdf "${JSON_DIFF_RUNS:-100000}" "${FUZZ_SEED:-20261130}"
else
    echo "skipped: commit 86b4cdf (the reference normalizer) is not in this clone"
fi

echo "== 3. test suite under ASan+UBSan"
# default: the hardening tests, the API misuse/input tests (uninitialized,
# re-entrant and shared parsers; their former crash cases run in child
# processes, which inherit the sanitizer) and every format's golden and
# property tests (a module with golden cases is named test_*golden.py:
# tests/test_golden_files.py checks it; the serving/process tests add minutes under ASan and little coverage of
# native code); on both cores (xdist); SAN_TESTS="tests -q" runs the whole suite
# shellcheck disable=SC2086
scripts/sanitize-tests.sh ${SAN_TESTS:-tests/test_adversarial.py tests/test_adversarial_adapter.py \
    tests/test_api_safety.py tests/test_api_inputs.py tests/test_memory.py tests/test_wellformed_property.py tests/test_json_normalizer.py tests/test_typed_values.py \
    tests/test_*golden.py tests/test_*prop*.py -q -p no:cacheprovider -m "not slow" -n 2 --dist loadfile}
