"""Re-export: lives in sglang_toolparse/bench/torchvision_placeholder.py
(used by the serving bench as well as the tests)."""
from sglang_toolparse.bench.torchvision_placeholder import *  # noqa: F401,F403
from sglang_toolparse.bench.torchvision_placeholder import install  # noqa: F401
