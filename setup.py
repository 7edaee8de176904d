"""Builds the C core and its Cython bindings as sglang_toolparse._core.

TOOLPARSE_SANITIZE=1 builds with AddressSanitizer + UndefinedBehaviorSanitizer
(run Python with LD_PRELOAD of libasan, see tests/README or .ci/run).
TOOLPARSE_DEBUG=1 builds with -O0 -g.
"""
import glob
import os

from Cython.Build import cythonize
from setuptools import Extension, setup

sanitize = os.environ.get("TOOLPARSE_SANITIZE") == "1"
debug = os.environ.get("TOOLPARSE_DEBUG") == "1" or sanitize

cflags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
          "-Wno-unused-function", "-Wno-missing-field-initializers"]
ldflags = []
cflags += ["-O0", "-g"] if debug else ["-O2"]
if sanitize:
    san = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
           "-fno-omit-frame-pointer"]
    cflags += san
    ldflags += san
# appended last, so they can refine the flags above (scripts/fuzz-python.sh)
cflags += os.environ.get("TOOLPARSE_EXTRA_CFLAGS", "").split()

ext = Extension(
    "sglang_toolparse._core",
    sources=["sglang_toolparse/_core.pyx"] + sorted(glob.glob("csrc/*.c")),
    include_dirs=["csrc"],
    depends=sorted(glob.glob("csrc/*.h")) + ["sglang_toolparse/_ctp.pxd"],
    extra_compile_args=cflags,
    extra_link_args=ldflags,
)

setup(
    ext_modules=cythonize(
        [ext],
        compiler_directives={"language_level": "3", "embedsignature": True},
        quiet=True,
    ),
)
