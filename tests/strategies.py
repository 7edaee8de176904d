"""Hypothesis strategies shared by the property tests: JSON values, prose
that contains no markup, chunkings."""
from __future__ import annotations

from typing import List, Sequence

from hypothesis import strategies as st

# text without lone surrogates (a model's tokens decode to valid Unicode)
TEXT_CHARS = st.characters(blacklist_categories=("Cs",))
json_text = st.text(TEXT_CHARS, max_size=20)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | json_text
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(json_text, children, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(json_text, json_values, max_size=5)


def prose(forbidden: Sequence[str] = ("<",)) -> st.SearchStrategy[str]:
    """Prose with no markup characters, not starting or ending with
    whitespace (whitespace next to a call is template formatting)."""
    alphabet = st.characters(blacklist_categories=("Cs",), blacklist_characters=list(forbidden))
    return st.text(alphabet, min_size=1, max_size=40).map(str.strip).filter(bool)


@st.composite
def chunkings(draw, text: str) -> List[str]:
    """An arbitrary split of `text` into chunks."""
    if not text:
        return []
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=min(len(text), 40)))))
    pieces, last = [], 0
    for c in cuts + [len(text)]:
        if c > last:
            pieces.append(text[last:c])
            last = c
    return pieces
