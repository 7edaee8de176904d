"""`python -m sglang_toolparse <command>`.

Commands:
  bench   side-by-side benchmark against SGLang's detectors (see --help)
"""
from __future__ import annotations

import importlib
import sys
from typing import List, Optional

# command -> module with main(argv) -> int
COMMANDS = {
    "bench": "sglang_toolparse.bench.cli",
}


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd not in COMMANDS:
        print("unknown command %r\n\n%s" % (cmd, __doc__.strip()), file=sys.stderr)
        return 2
    return importlib.import_module(COMMANDS[cmd]).main(rest)


if __name__ == "__main__":
    sys.exit(main())
