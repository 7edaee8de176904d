from sglang_toolparse._core import *  # placeholder
