#!/usr/bin/env bash
# Leak and memory-error check of the C core without Python in the way:
# fuzz/driver.c runs the fuzz target (all invariants) over the seed corpus
# for every format, option set and several chunkings, freeing every parser.
#  1. gcc -fsanitize=address,undefined: LeakSanitizer reports any block not
#     freed at exit, ASan any out-of-bounds access / use after free.
#  2. valgrind memcheck on an unsanitized -O1 build (different tool, same
#     run): --leak-check=full --errors-for-leak-kinds=definite,indirect.
#   scripts/leak-check.sh [--no-valgrind] [extra corpus dirs...]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/fuzz/out"
PY="${PYTHON:-python}"
VALGRIND=1
if [ "${1:-}" = "--no-valgrind" ]; then VALGRIND=0; shift; fi
mkdir -p "$OUT"
cd "$ROOT"
"$PY" fuzz/gen_corpus.py "$OUT"
CFLAGS="-std=c11 -g -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers -Icsrc"
SRC="csrc/*.c fuzz/fuzz_core.c fuzz/driver.c"

gcc $CFLAGS -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
    $SRC -lm -o "$OUT/driver_asan"
echo "== LeakSanitizer + ASan + UBSan over the seed corpus"
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    "$OUT/driver_asan" "$OUT/seeds" "$@"
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    "$OUT/driver_asan" --raw "$OUT/corpus"

if [ "$VALGRIND" = 1 ]; then
    gcc $CFLAGS -O1 $SRC -lm -o "$OUT/driver_plain"
    # every 11th run of the ASan pass's matrix (VALGRIND_STRIDE=1: all of it;
    # the whole matrix grows with formats x seeds, ~1.5M runs at 40 formats)
    echo "== valgrind memcheck over the seed corpus (every ${VALGRIND_STRIDE:-11}th run)"
    valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect "$OUT/driver_plain" --stride "${VALGRIND_STRIDE:-11}" "$OUT/seeds" "$@"
fi
echo "leak-check: ok"
