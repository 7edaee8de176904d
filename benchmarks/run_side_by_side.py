#!/usr/bin/env python
"""Side-by-side benchmark: native detectors vs SGLang's, through
FunctionCallParser.parse_stream_chunk. Same as `python -m sglang_toolparse bench`;
the engine lives in sglang_toolparse/bench/ so it works from an installed
package. Run from the repository root after building the extension:

    python setup.py build_ext --inplace -q
    python benchmarks/run_side_by_side.py            # default run (~1-3 min)
    python benchmarks/run_side_by_side.py --quick    # CI smoke
    python benchmarks/run_side_by_side.py --input benchmarks/replay_example.jsonl

See docs/BENCH.md.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sglang_toolparse.bench.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
