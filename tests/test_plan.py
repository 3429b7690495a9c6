"""The plan's data format: a streamed JSON document is exactly what `json.dumps` writes."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate.plan_json import JsonDocument

# Surrogates (which JSON can escape and UTF-8 cannot hold) and every float, NaN included.
TEXT = st.text(st.characters(codec=None, categories=None), max_size=8)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | TEXT
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=3),
    st.lists(JSON_VALUES, max_size=4),
    st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=3),
)
def test_a_streamed_json_document_is_what_json_dumps_writes(head, items, tail):
    head.pop("objects", None)
    tail = {k: v for k, v in tail.items() if k not in head and k != "objects"}
    chunks: list[str] = []
    document = JsonDocument(chunks.append, head, "objects")
    for item in items:
        document.add(item)
    document.close(tail)
    whole = {**head, "objects": items, **tail}
    assert "".join(chunks) == json.dumps(whole, indent=2, ensure_ascii=False) + "\n"
