"""The names of issue 20 that are rows of an engine we have (tests/variant_table.py),
through SGLang's FunctionCallParser: `X_native` (one-shot and streamed) against
SGLang's own `X` on template-shaped cases, whose failures are strict xfails
naming what it gets wrong (standalone golden cases: test_variants_golden.py)."""
import fnmatch
import json

import pytest

from sglang_support import one_shot, stream_through
from support import CHUNKERS
from variant_table import SCHEMA, TOOL_NAMES, VARIANTS, cases_of

ROWS = [(v, c) for v in sorted(VARIANTS) for c in sorted(cases_of(v))]


def expected(variant, case):
    prose, calls = cases_of(variant)[case]
    return prose, [(n, json.dumps(a, ensure_ascii=False)) for n, a in calls]


@pytest.fixture
def sg_tools(sglang_tool):
    return sglang_tool(*TOOL_NAMES, parameters=SCHEMA)


def _mark(request, variant, case, impl, mode, chunker="one"):
    """sglang_wrong keys are fnmatch patterns of 'case:mode:chunker'."""
    where = "%s:%s:%s" % (case, mode, chunker)
    reasons = [r for pat, r in VARIANTS[variant].sglang_wrong.items() if fnmatch.fnmatchcase(where, pat)]
    reason = "; ".join(reasons)
    if impl == "builtin" and reason:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


@pytest.mark.parametrize("impl", ["builtin", "native"])
@pytest.mark.parametrize("variant,case", ROWS)
def test_through_sglang_one_shot(fcp, sg_tools, request, variant, case, impl):
    _mark(request, variant, case, impl, "one_shot")
    v = VARIANTS[variant]
    prose, calls = expected(variant, case)
    name = v.sglang if impl == "builtin" else v.sglang + "_native"
    normal, got = one_shot(fcp, sg_tools, name, v.render(*cases_of(variant)[case]))
    assert (normal.strip(), got) == (prose, calls)


@pytest.mark.parametrize("impl", ["builtin", "native"])
@pytest.mark.parametrize("chunker", ["tokens", "bursts"])
@pytest.mark.parametrize("variant,case", ROWS)
def test_through_sglang_streamed(fcp, sg_tools, request, variant, case, chunker, impl):
    _mark(request, variant, case, impl, "stream", chunker)
    v = VARIANTS[variant]
    prose, calls = expected(variant, case)
    name = v.sglang if impl == "builtin" else v.sglang + "_native"
    text, got = stream_through(fcp, sg_tools, name, CHUNKERS[chunker](v.render(*cases_of(variant)[case])))
    assert (text.strip(), got) == (prose, calls)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_native_detector_subclasses_sglangs(fcp, variant):
    enum = fcp.FunctionCallParser.ToolCallParserEnum
    v = VARIANTS[variant]
    assert issubclass(enum[v.sglang + "_native"], enum[v.sglang])


@pytest.mark.parametrize("impl", ["builtin", "native"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_long_string_streams_before_its_closing_tag(fcp, sg_tools, request, variant, impl):
    """A 4 KB string argument reaches the client while it is generated."""
    _mark(request, variant, "long_string", impl, "stream", "fixed4")
    v = VARIANTS[variant]
    content = "line of code;\n" * 300
    text = v.render("", [("write_file", {"content": content})])
    body = content if content in text else json.dumps(content)[1:-1]  # JSON formats escape it
    cut = text.index(body) + len(body)
    p = fcp.FunctionCallParser(sg_tools, v.sglang if impl == "builtin" else v.sglang + "_native")
    got = ""
    for i in range(0, cut, 4):
        got += "".join(it.parameters or "" for it in p.parse_stream_chunk(text[i:min(i + 4, cut)])[1])
    assert len(got) >= len(json.dumps(content)) - 8
