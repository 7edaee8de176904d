#!/usr/bin/env bash
# atheris over the Python API (fuzz/fuzz_python.py), with the C core and
# the Cython layer built by clang with -fsanitize=fuzzer-no-link (coverage
# feedback from the native code too) + ASan + UBSan, in a separate copy of
# the tree (build/fuzz-python; the normal build is left alone).
# pointer-overflow is not checked in this build: Cython's generated
# vectorcall code offsets a NULL argument array (harmless, but clang flags it);
# the C core gets that check in the libFuzzer build (scripts/fuzz.sh).
#
#   scripts/fuzz-python.sh [SECONDS] [libFuzzer flags...]     (default 60)
# Needs: clang, pip package atheris (requirements/fuzz.txt).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${TOOLPARSE_FUZZPY_DIR:-$ROOT/build/fuzz-python}"
PY="${PYTHON:-python}"
SECS="${1:-60}"; [ $# -gt 0 ] && shift
"$PY" -c "import atheris" 2>/dev/null || "$PY" -m pip install -q -r "$ROOT/requirements/fuzz.txt"
mkdir -p "$DIR"
for d in csrc sglang_toolparse tests fuzz; do
    rm -rf "${DIR:?}/$d"   # files removed from the tree must not linger
    mkdir -p "$DIR/$d"
    cp -p "$ROOT/$d"/*.* "$DIR/$d/" 2>/dev/null || true
done
rm -f "$DIR"/sglang_toolparse/*.so
cp -p "$ROOT/setup.py" "$ROOT/pyproject.toml" "$DIR/"
cd "$DIR"
CC=clang LDSHARED="clang -shared" CFLAGS="-fsanitize=fuzzer-no-link" TOOLPARSE_EXTRA_CFLAGS="-fno-sanitize=pointer-overflow" LDFLAGS="-fsanitize=fuzzer-no-link" \
    TOOLPARSE_SANITIZE=1 "$PY" setup.py build_ext --inplace --force -q >build.log 2>&1 || { cat build.log; exit 1; }
ATHERIS_DIR="$("$PY" -c 'import atheris; print(atheris.path())')"
mkdir -p "$ROOT/fuzz/out/pywork"
set +e
LD_PRELOAD="$ATHERIS_DIR/asan_with_fuzzer.so" ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    "$PY" fuzz/fuzz_python.py -max_total_time="$SECS" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$ROOT/fuzz/out/py-" "$@" "$ROOT/fuzz/out/pywork" > "$ROOT/fuzz/out/fuzz_python.log" 2>&1
rc=$?
set -e
grep -E "^stat::|INITED|Done [0-9]+ runs" "$ROOT/fuzz/out/fuzz_python.log" || true
if [ $rc -ne 0 ]; then
    grep -v -E "^#[0-9]+ +(NEW|REDUCE|pulse)" "$ROOT/fuzz/out/fuzz_python.log" | tail -40
    echo "fuzz-python: FAILED (exit $rc)"
    exit $rc
fi
echo "fuzz-python: ok"
