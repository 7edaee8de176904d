#!/usr/bin/env bash
# Coverage-guided fuzzing of the C core with libFuzzer (clang), ASan+UBSan,
# every format (byte 0 of an input picks it), invariants in fuzz/fuzz_core.c.
#
#   scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]     (default 60)
#
# Long run (e.g. 8 hours on all cores, corpus kept between runs):
#   scripts/fuzz.sh 28800 -jobs=$(nproc) -workers=$(nproc)
# The working corpus is fuzz/out/work (seeded from fuzz/gen_corpus.py);
# crashes are written to fuzz/out/crash-*; reproduce one with
#   fuzz/out/fuzz_core fuzz/out/crash-XXXX
# FUZZ_COVERAGE=1 also prints line/branch coverage of csrc/ reached by the
# corpus (llvm-cov).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/fuzz/out"
PY="${PYTHON:-python}"
SECS="${1:-60}"; [ $# -gt 0 ] && shift
CC="${CLANG:-clang}"
command -v "$CC" >/dev/null || { echo "clang not found (apt-get install clang)"; exit 1; }
mkdir -p "$OUT/work"
cd "$ROOT"
"$PY" fuzz/gen_corpus.py "$OUT"
# The seeds go in by name order (-seed_inputs), not through the working
# directory: libFuzzer sorts what it loads by size only, so seeds of equal size
# would run in the filesystem's directory order and the same -seed would explore
# differently on another machine. With a fresh fuzz/out, a fixed -seed and
# -runs, a run is the same sequence of inputs everywhere (CI's slice is replayed
# exactly by scripts/ci-harden.sh on any machine). The working corpus only
# keeps what the fuzzer adds.
(cd "$OUT/corpus" && ls | LC_ALL=C sort | sed "s|^|$OUT/corpus/|" | paste -sd, -) > "$OUT/seed_inputs"
"$CC" -std=c11 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -Icsrc csrc/*.c fuzz/fuzz_core.c -lm -o "$OUT/fuzz_core"
cd "$OUT"
echo "== fuzzing for ${SECS}s"
set +e
ASAN_OPTIONS="detect_leaks=1" ./fuzz_core -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -dict=toolparse.dict -print_final_stats=1 -artifact_prefix="$OUT/" \
    -seed_inputs=@seed_inputs "$@" work \
    > fuzz.log 2>&1
rc=$?
set -e
grep -E "^(stat::|#[0-9]+ +DONE)|INITED" fuzz.log || true
if [ $rc -ne 0 ]; then
    grep -v -E "^#[0-9]+ +(NEW|REDUCE|pulse)" fuzz.log | tail -40
    echo "fuzz: FAILED (exit $rc), see $OUT/fuzz.log"
    exit $rc
fi
echo "corpus: $(ls work | wc -l) inputs"
if [ "${FUZZ_COVERAGE:-0}" = 1 ]; then
    LLVM_COV="$(command -v llvm-cov || ls /usr/bin/llvm-cov-* 2>/dev/null | tail -1)"
    LLVM_PROFDATA="$(command -v llvm-profdata || ls /usr/bin/llvm-profdata-* 2>/dev/null | tail -1)"
    cd "$ROOT"
    "$CC" -std=c11 -O0 -g -fprofile-instr-generate -fcoverage-mapping -Icsrc csrc/*.c \
        fuzz/fuzz_core.c fuzz/driver.c -lm -o "$OUT/driver_cov"
    LLVM_PROFILE_FILE="$OUT/cov.profraw" "$OUT/driver_cov" --raw "$OUT/work" >/dev/null
    "$LLVM_PROFDATA" merge -sparse "$OUT/cov.profraw" -o "$OUT/cov.profdata"
    "$LLVM_COV" report "$OUT/driver_cov" -instr-profile="$OUT/cov.profdata" csrc/ | tee "$OUT/coverage.txt"
fi
echo "fuzz: ok"
