#!/usr/bin/env bash
# Builds the extension with AddressSanitizer + UndefinedBehaviorSanitizer in
# a separate copy of the tree (the normal in-place build is left alone) and
# runs pytest there with the gcc ASan runtime preloaded into Python.
#
#   scripts/sanitize-tests.sh [pytest args...]
#
# Default test selection: the hardening tests plus the parser tests, minus
# the RSS/leak-over-time tests (ASan's allocator makes RSS meaningless).
# Tests that start child processes (tests/test_api_safety.py) get the
# sanitized core there too: LD_PRELOAD and the options are exported, and
# the children import the package from this copy.
# Env: TOOLPARSE_SAN_DIR (default build/sanitize) - where the copy lives.
# Leak detection is off here (CPython itself "leaks" at exit); leaks in the
# core are checked by scripts/leak-check.sh on a pure-C harness.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SAN_DIR="${TOOLPARSE_SAN_DIR:-$ROOT/build/sanitize}"
PY="${PYTHON:-python}"

mkdir -p "$SAN_DIR"
# copy the sources (not build outputs); rsync keeps unchanged files' mtimes
# (subpackages included: sglang_toolparse/bench is imported by tests)
for d in csrc sglang_toolparse tests; do
    rm -rf "${SAN_DIR:?}/$d"   # files removed from the tree must not linger
    cp -Rp "$ROOT/$d" "$SAN_DIR/$d"
done
find "$SAN_DIR" \( -name '*.so' -o -name __pycache__ \) -prune -exec rm -rf {} +
rm -f "$SAN_DIR"/sglang_toolparse/_core.c
cp -p "$ROOT/setup.py" "$ROOT/pyproject.toml" "$SAN_DIR/"
cd "$SAN_DIR"
TOOLPARSE_SANITIZE=1 "$PY" setup.py build_ext --inplace -q >build.log 2>&1 || { cat build.log; exit 1; }

LIBASAN="$(gcc -print-file-name=libasan.so)"
[ -f "$LIBASAN" ] || { echo "libasan not found ($LIBASAN)"; exit 1; }
export LD_PRELOAD="$LIBASAN"
# reports also go to files: pytest's output capture swallows what a
# process that aborts wrote to stderr
rm -f "$SAN_DIR"/san.*
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1:log_path=$SAN_DIR/san.asan:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$SAN_DIR/san.ubsan:${UBSAN_OPTIONS:-}"
export TOOLPARSE_SANITIZED=1   # tests skip what ASan makes meaningless (RSS)

# make sure the sanitized module is the one imported
"$PY" -c "import sglang_toolparse._core as c, sys; assert c.__file__.startswith('$SAN_DIR'), c.__file__; print('sanitized core:', c.__file__)"

if [ $# -eq 0 ]; then
    set -- tests -q -x -p no:cacheprovider -m "not slow"
fi
set +e
"$PY" -m pytest "$@"
rc=$?
set -e
if ls "$SAN_DIR"/san.* >/dev/null 2>&1; then
    echo "== sanitizer reports:"
    cat "$SAN_DIR"/san.*
    [ $rc -eq 0 ] && rc=1
fi
exit $rc
