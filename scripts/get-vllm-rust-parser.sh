#!/usr/bin/env bash
# Extracts vLLM's Rust tool parser (vllm/_rust_tool_parser.abi3.so, a PyO3
# module for any CPython >= 3.8) from a vllm wheel, without installing vllm,
# for the optional `vllm` side of `python -m sglang_toolparse bench`.
#
#   scripts/get-vllm-rust-parser.sh [VERSION] [DEST_DIR]
#     VERSION   vllm release whose wheel ships the module (0.26 - 0.31: checked 0.26.0,
#               0.27.0, 0.31.0; 0.32.0 has none; default 0.31.0)
#     DEST_DIR  default ${XDG_CACHE_HOME:-~/.cache}/sglang-toolparse/vllm-VERSION
#   WHEEL=path/to/vllm-*.whl  use a wheel already downloaded (no download)
#   KEEP_WHEEL=1              keep the downloaded wheel (~320 MB) next to the module
#
# Then:  export SGLANG_TOOLPARSE_VLLM_RUST_PARSER=DEST_DIR/_rust_tool_parser.abi3.so
#        python -m sglang_toolparse bench --formats deepseekv4
set -euo pipefail
PY=${PYTHON:-python3}
VERSION=${1:-0.31.0}
DEST=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/sglang-toolparse/vllm-$VERSION}
MEMBER=vllm/_rust_tool_parser.abi3.so
mkdir -p "$DEST"

wheel=${WHEEL:-}
tmp=""
if [ -z "$wheel" ]; then
    tmp=$(mktemp -d)
    trap '[ -n "$tmp" ] && rm -rf "$tmp"' EXIT
    echo "downloading vllm==$VERSION (one wheel, no dependencies; ~320 MB) ..." >&2
    "$PY" -m pip download --disable-pip-version-check -q --no-deps --only-binary=:all: \
        "vllm==$VERSION" -d "$tmp"
    wheel=$(ls "$tmp"/vllm-*.whl)
fi

"$PY" - "$wheel" "$MEMBER" "$DEST" <<'PYEOF'
import importlib.util, os, sys, zipfile
wheel, member, dest = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    if member not in z.namelist():
        sys.exit("%s has no %s (the module ships in vllm 0.26-0.31 wheels)" % (os.path.basename(wheel), member))
    out = os.path.join(dest, os.path.basename(member))
    with z.open(member) as src, open(out + ".tmp", "wb") as dst:
        dst.write(src.read())
    os.replace(out + ".tmp", out)
spec = importlib.util.spec_from_file_location("vllm._rust_tool_parser", out)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
names = []
for n in ("DeepSeekV4ToolParser", "KimiK2ToolParser", "MinimaxM3ToolParser"):
    try:
        mod.ToolParser(n, [])
        names.append(n)
    except Exception:
        pass
print("extracted %s (parsers: %s)" % (out, ", ".join(names) or "none"), file=sys.stderr)
print(out)
PYEOF
if [ "${KEEP_WHEEL:-0}" = "1" ] && [ -n "$tmp" ]; then
    mv "$tmp"/vllm-*.whl "$DEST"/
fi
echo "export SGLANG_TOOLPARSE_VLLM_RUST_PARSER=$DEST/_rust_tool_parser.abi3.so" >&2
