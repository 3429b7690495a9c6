"""The plan's data format: a streamed JSON document is exactly what `json.dumps` writes, also
where orjson writes the same values differently."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate.plan_json import JsonDocument, indented

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


# Where orjson and the standard library write a value differently.
@pytest.mark.parametrize(
    "value",
    [1e-05, 1e16, float("nan"), float("inf"), -float("inf"), 2**64, -(2**70), "\ud800", "é\u2028"],
)
def test_values_orjson_writes_differently_are_written_as_json_dumps_does(value):
    document = {"old": [value, {"k": value}], "new": {}}
    assert indented(document) == json.dumps(document, indent=2, ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_indented_is_json_dumps_with_indent(value):
    assert indented(value) == json.dumps(value, indent=2, ensure_ascii=False)
