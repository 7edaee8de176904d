#!/usr/bin/env bash
# Differential test of the JSON normalizer against an older version of it
# (fuzz/json_diff.c): random JSON-like inputs, output limits and chunkings;
# every feed's consumed bytes and output, and the final state and error
# offset, must be the same.
#   scripts/json-diff.sh [OLD_COMMIT] [ITERATIONS] [SEED]
# OLD_COMMIT defaults to 86b4cdf (the byte-by-byte normalizer with the
# issue 18 rules, before the token fast paths of issue 24).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OLD=${1:-86b4cdf}
ITER=${2:-200000}
SEED=${3:-20261201}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$ROOT"
git show "$OLD:csrc/tp_json.c" > "$TMP/old_tp_json.c"
git show "$OLD:csrc/tp_swar.h" > "$TMP/tp_swar.h"
git show "$OLD:csrc/tp_json.h" > "$TMP/tp_json.h" # (the old struct: fuzz/json_diff_old.c hides it)
cp csrc/tp_buf.h csrc/tp_errors.h "$TMP/"
REN="-Dtp_json_init=old_tp_json_init -Dtp_json_feed=old_tp_json_feed -Dtp_json_end=old_tp_json_end \
     -Dtp_json_done=old_tp_json_done -Dtp_json_failed=old_tp_json_failed \
     -Dtp_json_not_started=old_tp_json_not_started -Dtp_format_double=old_tp_format_double \
     -Dtp_json_is_number=old_tp_json_is_number"
CFLAGS="-std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined"
# shellcheck disable=SC2086
gcc $CFLAGS $REN -I"$TMP" -c "$TMP/old_tp_json.c" -o "$TMP/old.o"
# shellcheck disable=SC2086
gcc $CFLAGS $REN -I"$TMP" -c fuzz/json_diff_old.c -o "$TMP/old_shim.o"
# shellcheck disable=SC2086
gcc $CFLAGS -Icsrc fuzz/json_diff.c csrc/tp_json.c csrc/tp_buf.c "$TMP/old.o" "$TMP/old_shim.o" -lm -o "$TMP/json_diff"
"$TMP/json_diff" "$ITER" "$SEED"
