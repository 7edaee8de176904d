"""Side-by-side benchmark of the native parsers and SGLang's detectors.

Run it with `python -m sglang_toolparse bench` (see docs/BENCH.md). The
pieces: corpus (built-in model outputs and their ground truth), sides (the
parsers compared), runner (timing and correctness), replay (recorded
outputs, `--input`), report (tables, JSON, PNG).
"""
