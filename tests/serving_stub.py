"""Re-export: the serving stub lives in the package
(sglang_toolparse/bench/serving_stub.py) so that `python -m sglang_toolparse
bench --serving` can drive SGLang's OpenAIServingChat too."""
from sglang_toolparse.bench.serving_stub import *  # noqa: F401,F403
from sglang_toolparse.bench.serving_stub import (  # noqa: F401  (underscore names are not star-exported)
    _collect_body,
)
