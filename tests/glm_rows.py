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


@dataclass(frozen=True)
class Row:
    fmt: str                                  # core format
    sglang: str                               # SGLang's parser name (X of X_native)
    render: Callable[[str, Pairs], str]       # one call as the template writes it
    block: Callable[[List[str]], str] = lambda calls: "\n".join(calls)  # calls of one turn
    markers: Tuple[str, ...] = ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")

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
}
