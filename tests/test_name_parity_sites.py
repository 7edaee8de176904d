"""Every place the installed SGLang compares or looks up a tool-call parser
name is known (tests/name_parity_sites.py), so an SGLang upgrade that adds a
name comparison cannot silently break `X_native` == `X`.

The scanner (tests/name_sites_scan.py) reads SGLang's source; the list and
the reasons are committed. What each listed branch does with `X_native` is
proven by tests/test_name_parity_processes.py.

Run this file as a script to print the current scan in the SITES format.
"""
from __future__ import annotations

import os
import sys
from collections import Counter

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

pytest.importorskip("sglang")

import name_parity_sites  # noqa: E402
from name_sites_scan import scan  # noqa: E402

from sglang_toolparse.sglang_plugin import NATIVE_NAMES  # noqa: E402


# builtin names of NATIVE_NAMES rows being added on other branches (TEAM.md):
# scanned already, so merging those rows does not change the list. A row for
# any other family changes the scan on purpose: review its sites.
PLANNED_BUILTINS = {"kimi_k2", "qwen3_coder", "step3p5", "minimax-m2"}


def _literals():
    return {b for _, b in NATIVE_NAMES.values() if b} | PLANNED_BUILTINS


def _parse(text):
    sites = Counter()
    for line in text.strip().splitlines():
        head, count = line.rsplit(" | ", 1)
        sites[tuple(head.split(" | ", 3))] = int(count)
    return sites


def _fmt(site, n):
    return " | ".join(site + (str(n),))


def test_every_name_site_in_sglang_is_known():
    found = scan(_literals())
    known = _parse(name_parity_sites.SITES)
    new = sorted(_fmt(s, n) for s, n in (found - known).items())
    gone = sorted(_fmt(s, n) for s, n in (known - found).items())
    assert not new and not gone, (
        "SGLang's tool-call-parser name sites changed (installed SGLang %s, list made for %s).\n"
        "New (decide how X_native behaves there, probe it if it branches on a family we ship):\n  %s\n"
        "Gone:\n  %s\n"
        "Update tests/name_parity_sites.py (python tests/test_name_parity_sites.py prints the scan)."
        % (_sglang_version(), name_parity_sites.SGLANG_VERSION, "\n  ".join(new) or "-", "\n  ".join(gone) or "-")
    )


def test_every_site_has_a_reason():
    known = _parse(name_parity_sites.SITES)
    places = {" | ".join(s[:2]) for s in known}
    assert places == set(name_parity_sites.WHY), (
        sorted(places - set(name_parity_sites.WHY)), sorted(set(name_parity_sites.WHY) - places))


def test_the_scanner_finds_each_kind_of_site(tmp_path):
    """The scanner itself: a comparison, a lookup, a method call, a hand-on,
    an alias, a config key and a bare builtin-name literal are each found;
    logging the name is not a site."""
    pkg = tmp_path / "srt"
    pkg.mkdir()
    (pkg / "m.py").write_text(
        "def f(self, tool_call_parser, table, log):\n"
        "    a = self.tool_call_parser == 'glm47'\n"
        "    b = table[tool_call_parser]\n"
        "    c = self.tool_call_parser.startswith('deepseek')\n"
        "    d = build(tools, self.tool_call_parser)\n"
        "    name = self.tool_call_parser\n"
        "    e = cfg.config_value('tool_call_parser')\n"
        "    g = name in ('deepseekv4',)\n"
        "    log.info('parser %s', self.tool_call_parser)\n"
        "    h = table.get(tool_call_parser)\n"
    )
    found = scan({"glm47", "deepseekv4"}, root=str(tmp_path))
    kinds = Counter(site[2] for site in found.elements())
    assert kinds == Counter(compare=1, lookup=2, method=1, passed=1, alias=2, key=1, literal=2), sorted(found)


def _sglang_version():
    import sglang

    return getattr(sglang, "__version__", "?")


if __name__ == "__main__":
    for site, n in sorted(scan(_literals()).items()):
        print(_fmt(site, n))
