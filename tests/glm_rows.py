"""The GLM engine's other rows (issue 20): one table for the golden, SGLang
parity and fuzz tests. Each row is a core format, the SGLang parser name it
stands for and a renderer that writes a call as the family's chat template
does (strings raw, other values as JSON)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, List, Sequence, Tuple

Pairs = Sequence[Tuple[str, str]]  # (key, raw value text as written)


def raw_of(v) -> str:
    """A template's rendering of one argument value: a string raw, any other
    value as JSON."""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def glm45_shape(open_="<tool_call>", close="</tool_call>", sep="\n"):
    """`OPEN NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n CLOSE`."""
    def render(name: str, pairs: Pairs) -> str:
        return (open_ + name + sep + "".join("<arg_key>%s</arg_key>%s<arg_value>%s</arg_value>%s" % (k, sep, v, sep)
                                             for k, v in pairs) + close)
    return render


def glm47_shape(open_="<tool_call>", close="</tool_call>"):
    """`OPEN NAME<arg_key>K</arg_key><arg_value>V</arg_value> CLOSE`."""
    def render(name: str, pairs: Pairs) -> str:
        return open_ + name + "".join("<arg_key>%s</arg_key><arg_value>%s</arg_value>" % kv for kv in pairs) + close
    return render


def spark_shape():
    """`<tool_call>NAME\n<arg_key>K</arg_key><arg_value>V</arg_value>\n...</tool_call>`."""
    def render(name: str, pairs: Pairs) -> str:
        return ("<tool_call>" + name + "\n"
                + "".join("<arg_key>%s</arg_key><arg_value>%s</arg_value>\n" % kv for kv in pairs) + "</tool_call>")
    return render


def hunyuan_tags(suffix=""):
    """Hunyuan's tags as its tokenizer spells them (a shared suffix such as
    ":opensource", or none)."""
    names = ("tool_calls", "tool_call", "tool_sep", "arg_key", "arg_value")
    return {n: "<%s%s>" % (n, suffix) for n in names}


def hunyuan_shape(suffix=""):
    """`<tool_call>NAME<tool_sep>\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>`."""
    t = hunyuan_tags(suffix)

    def close(tag):
        return "</" + tag[1:]

    def render(name: str, pairs: Pairs) -> str:
        return (t["tool_call"] + name + t["tool_sep"] + "\n"
                + "".join("%s%s%s\n%s%s%s\n" % (t["arg_key"], k, close(t["arg_key"]), t["arg_value"], v,
                                                  close(t["arg_value"])) for k, v in pairs)
                + close(t["tool_call"]))

    def block(calls: List[str]) -> str:
        return t["tool_calls"] + "\n" + "\n".join(calls) + "\n" + close(t["tool_calls"])

    markers = (t["tool_call"], close(t["tool_call"]), t["arg_key"], close(t["arg_key"]), t["arg_value"],
               close(t["arg_value"]), t["tool_calls"], close(t["tool_calls"]), t["tool_sep"])
    return render, block, markers


class FakeTokenizer:
    """What SGLang's HunyuanDetector reads of a tokenizer: its vocabulary."""

    def __init__(self, tokens):
        self._vocab = {t: i for i, t in enumerate(tokens)}

    def get_vocab(self):
        return dict(self._vocab)


@dataclass(frozen=True)
class Row:
    fmt: str                                  # core format
    sglang: str                               # SGLang's parser name (X of X_native)
    render: Callable[[str, Pairs], str]       # one call as the template writes it
    block: Callable[[List[str]], str] = lambda calls: "\n".join(calls)  # calls of one turn
    markers: Tuple[str, ...] = ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")
    vocab: Tuple[str, ...] = ()  # special tokens of the tokenizer SGLang's detector is given (none: no tokenizer)

    def tokenizer(self):
        return FakeTokenizer(self.vocab + ("<think>", "hello")) if self.vocab else None

    @property
    def native(self) -> str:
        return self.sglang + "_native"

    def calls(self, *calls: Tuple[str, Pairs]) -> str:
        return self.block([self.render(n, p) for n, p in calls])


ROWS = {
    # Ling-3 / Ring: GLM-4.5's spelling (Ling3Detector is a Glm4MoeDetector)
    "ling3": Row("ling3", "ling3", glm45_shape()),
    # IQuest Coder: GLM-4.7's spelling in <iquest_tool_call> (IQuestQ1Detector is a Glm47MoeDetector)
    "iquest_q1": Row("iquest_q1", "iquest_q1", glm47_shape("<iquest_tool_call>", "</iquest_tool_call>"),
                     markers=("<iquest_tool_call>", "</iquest_tool_call>", "<arg_key>", "</arg_key>", "<arg_value>",
                              "</arg_value>")),
    # Poolside Laguna: GLM-4.5's spelling, typed by PoolsideV1Detector's rules
    "poolside_v1": Row("poolside_v1", "poolside_v1", glm45_shape()),
    # iFlytek Spark 2.5: as Spark25Detector's docstring writes it (no template found)
    "spark25": Row("spark25", "spark25", spark_shape()),
    # Tencent Hunyuan: calls in <tool_calls>, the name ends at <tool_sep>; with
    # no tokenizer the tags are bare, a Hy3 tokenizer gives them a suffix
    "hunyuan": Row("hunyuan", "hunyuan", *hunyuan_shape()),
    "hunyuan_os": Row("hunyuan_os", "hunyuan", *hunyuan_shape(":opensource"),
                      vocab=tuple(hunyuan_shape(":opensource")[2])),
}


def k2_horizon_shape():
    """K2 Horizon's template (xml dialect): `<ifm|tool_call>NAME\\n<ifm|arg_key>K</ifm|arg_key>\\n
    <ifm|arg_value>V</ifm|arg_value>\\n...</ifm|tool_call>` inside `<ifm|tool_calls>\\n...\\n</ifm|tool_calls>`."""
    def render(name: str, pairs: Pairs) -> str:
        return ("<ifm|tool_call>" + name + "\n" + "".join(
            "<ifm|arg_key>%s</ifm|arg_key>\n<ifm|arg_value>%s</ifm|arg_value>\n" % kv for kv in pairs)
            + "</ifm|tool_call>")

    def block(calls: List[str]) -> str:
        return "<ifm|tool_calls>" + "".join("\n" + c for c in calls) + "\n</ifm|tool_calls>"

    return render, block


# rows typed by glm_row_types' families (test_glm_rows_typing): the rows
# above and K2 Horizon (its golden and parity tests: tests/test_k2_horizon*.py)
TYPING_ROWS = dict(ROWS)
TYPING_ROWS["k2_horizon"] = Row("k2_horizon", "k2_horizon", *k2_horizon_shape(),
                                markers=("<ifm|tool_call>", "</ifm|tool_call>", "<ifm|arg_key>", "</ifm|arg_key>",
                                         "<ifm|arg_value>", "</ifm|arg_value>"))
