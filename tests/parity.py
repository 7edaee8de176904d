"""Parity of X_native with SGLang's builtin X through FunctionCallParser:
the same cases run one-shot and streamed with every chunker through both
implementations. One pair of tests instead of a copy per test file:

    from parity import parity_tests

    CASES = {"single": (text, prose, [(name, arguments)]), ...}
    test_one_shot_same_calls, test_streamed_calls = parity_tests("mistral", CASES, ("get_weather", "search"))

`streamed_xfail(impl, case, chunker)` returns the reason SGLang gets a
streamed case wrong (a strict xfail there) or None, `one_shot_xfail(impl,
case)` the same for one-shot; `prose=False` compares only the calls for the
builtin where SGLang's streamed prose is not the reference. A case's prose
may be a dict impl -> prose where the two differ by design.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import pytest

from support import CHUNKERS

IMPLS = ["builtin", "native"]
Cases = Dict[str, Tuple[str, Union[str, Dict[str, str]], List[Tuple[str, str]]]]


def parser_name(builtin: str, impl: str) -> str:
    return builtin if impl == "builtin" else builtin + "_native"


def _prose(want, impl: str) -> str:
    return want[impl] if isinstance(want, dict) else want


def parity_tests(builtin: str, cases: Cases, tool_names: Sequence[str],
                 streamed_xfail: Optional[Callable[[str, str, str], Optional[str]]] = None,
                 prose: bool = True,
                 one_shot_xfail: Optional[Callable[[str, str], Optional[str]]] = None) -> Tuple[Callable, Callable]:
    @pytest.mark.parametrize("impl", IMPLS)
    @pytest.mark.parametrize("case", sorted(cases))
    def test_one_shot_same_calls(fcp, sglang_tool, request, impl, case):
        from sglang_support import one_shot

        reason = one_shot_xfail(impl, case) if one_shot_xfail else None
        if reason:
            request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
        text, want_prose, calls = cases[case]
        assert one_shot(fcp, sglang_tool(*tool_names), parser_name(builtin, impl), text) == (_prose(want_prose, impl), calls)

    @pytest.mark.parametrize("chunker", sorted(CHUNKERS))
    @pytest.mark.parametrize("impl", IMPLS)
    @pytest.mark.parametrize("case", sorted(cases))
    def test_streamed_calls(fcp, sglang_tool, request, impl, case, chunker):
        from sglang_support import stream_through

        reason = streamed_xfail(impl, case, chunker) if streamed_xfail else None
        if reason:
            request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
        text, want_prose, calls = cases[case]
        got = stream_through(fcp, sglang_tool(*tool_names), parser_name(builtin, impl), CHUNKERS[chunker](text))
        assert got[1] == calls
        if prose or impl == "native":
            assert got[0] == _prose(want_prose, impl)

    return test_one_shot_same_calls, test_streamed_calls
