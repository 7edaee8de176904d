"""Every SGLang --tool-call-parser name is native or has a stated reason
(sglang_toolparse/coverage.py), and the README's list says the same: a name
a new SGLang adds fails here until it is decided."""
import os
import re

from sglang_toolparse.coverage import NOT_NATIVE
from sglang_toolparse.sglang_plugin import NATIVE_NAMES

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def _native_builtins():
    return {builtin for _, builtin in NATIVE_NAMES.values() if builtin}


def test_every_sglang_name_is_native_or_has_a_reason(fcp):
    sglang_names = set(fcp.FunctionCallParser.ToolCallParserEnum) - set(NATIVE_NAMES)
    native = _native_builtins()
    assert not native & set(NOT_NATIVE), "listed as not native but served natively"
    assert sglang_names - native - set(NOT_NATIVE) == set(), "SGLang names with no decision"
    assert (native | set(NOT_NATIVE)) - sglang_names == set(), "decided names SGLang no longer has"
    assert all(reason.strip() for reason in NOT_NATIVE.values())


def test_readme_lists_every_name():
    text = open(README, encoding="utf-8").read()
    section = text.split("## Every SGLang parser name", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([^`]+)` \| ([^|]+) \|", section, re.M))
    for name, (_, builtin) in NATIVE_NAMES.items():
        assert rows.get(builtin, "").strip() != "", builtin
        assert "`%s`" % name in rows[builtin], (builtin, rows[builtin])
    for name in NOT_NATIVE:
        assert rows.get(name, "").strip() == "none", name
