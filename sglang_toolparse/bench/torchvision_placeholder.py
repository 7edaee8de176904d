"""SGLang's config package imports `torchvision.transforms` at import time
(InternVL/DeepSeek-OCR image preprocessing). PyPI has no CPU build of
torchvision matching the CPU torch wheel, so when torchvision is absent
`install()` serves a placeholder package for it; calling anything in it
raises. Only multimodal preprocessing would touch it; these tests are
text-only."""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any


class _Unavailable:
    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> "_Unavailable":
        if attr.startswith("__"):  # introspection (__file__, __wrapped__, ...) finds nothing
            raise AttributeError(attr)
        return _Unavailable(self._name + "." + attr)

    def __call__(self, *a: Any, **k: Any) -> Any:
        raise RuntimeError("torchvision is not installed (%s called)" % self._name)


class _TorchvisionPlaceholder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):  # type: ignore[override]
        if fullname == "torchvision" or fullname.startswith("torchvision."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):  # type: ignore[override]
        m = types.ModuleType(spec.name)
        m.__path__ = []  # type: ignore[attr-defined]
        m.__getattr__ = _Unavailable(spec.name).__getattr__  # type: ignore[attr-defined]
        return m

    def exec_module(self, module) -> None:  # type: ignore[override]
        pass


def install() -> None:
    if any(isinstance(f, _TorchvisionPlaceholder) for f in sys.meta_path):
        return
    if importlib.util.find_spec("torchvision") is not None:
        return
    # transformers computes its is_torchvision_available() flag from the
    # real environment first, so it never takes the placeholder for real
    import transformers.utils.import_utils  # noqa: F401

    sys.meta_path.append(_TorchvisionPlaceholder())
