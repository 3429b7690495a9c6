"""Surgical JSON edits: the text and the parsed value agree, and untouched bytes stay."""

from __future__ import annotations

import json
import random

import pytest
from helpers import affected_paths, outside
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate.edit.edits import (
    AddKey,
    Delete,
    EditConflict,
    Insert,
    RenameKey,
    Set,
    materialize,
    pointer,
)
from wbmigrate.edit.json import splice

COMPACT = '{"a":[1,2.50,"\\u00e9"],"b":{"c":1,"d":2e-7},"e":[],"f":"caf\\u00e9 \\/x"}'
PRETTY = """{
    "a": [
        1,
        2.50
    ],
    "b": {"c": 1, "d": 2},
    "e": []
}
"""


def check(text, edits, expected_text):
    assert splice(text, edits) == expected_text
    assert json.loads(expected_text) == materialize(json.loads(text), edits)


def test_no_edits_is_identity():
    assert splice(COMPACT, []) == COMPACT


@pytest.mark.parametrize(
    ("edits", "expected"),
    [
        ([Set(("a", 0), "x")], '{"a":["x",2.50,"\\u00e9"]'),
        ([Insert(("a", 1), "n")], '{"a":[1,"n",2.50,"\\u00e9"]'),
        ([Insert(("a", 3), "n")], '{"a":[1,2.50,"\\u00e9","n"]'),
        ([Delete(("a", 0))], '{"a":[2.50,"\\u00e9"]'),
        ([Delete(("a", 2))], '{"a":[1,2.50]'),
        ([Delete(("a", 0)), Delete(("a", 1)), Delete(("a", 2))], '{"a":[]'),
    ],
)
def test_array_edits_keep_neighbours(edits, expected):
    check(COMPACT, edits, expected + COMPACT[COMPACT.index(',"b"') :])


def test_object_edits():
    edits = [
        RenameKey(("b", "c"), "C"),
        AddKey(("b", "z"), {"k": [1]}, after="c"),
        Delete(("b", "d")),
        Insert(("e", 0), 5),
        Set(("f",), "é"),
    ]
    check(COMPACT, edits, '{"a":[1,2.50,"\\u00e9"],"b":{"C":1,"z":{"k":[1]}},"e":[5],"f":"é"}')


@pytest.mark.parametrize(
    ("text", "edits", "expected"),
    [
        pytest.param(
            '{"m":["x"],"m":["old"]}',
            [Insert(("m", 1), "new")],
            '{"m":["x"],"m":["old","new"]}',
            id="same-shape",
        ),
        pytest.param(
            '{"m":5,"m":["old"]}',
            [Insert(("m", 1), "new")],
            '{"m":5,"m":["old","new"]}',
            id="scalar",
        ),
        pytest.param(
            '{"a":{"c":0},"a":{"c":["old"]}}',
            [Insert(("a", "c", 1), "new")],
            '{"a":{"c":0},"a":{"c":["old","new"]}}',
            id="nested",
        ),
        pytest.param('{"k":1,"k":2}', [RenameKey(("k",), "n")], '{"n":1,"n":2}', id="renamed"),
        pytest.param(
            '{"k":1,"q":0,"k":2}',
            [AddKey(("n",), 3, after="k")],
            '{"k":1,"q":0,"k":2,"n":3}',
            id="added",
        ),
    ],
)
def test_an_earlier_duplicate_key_keeps_its_bytes(text, edits, expected):
    """Edits are made for the last of a key written twice, as `json.loads` reads it: splicing
    them into the earlier one replaced its bytes, or failed where its value has another shape
    (an internal error of `apply` and `check --fix`)."""
    check(text, edits, expected)


def test_add_key_at_end_and_unicode_key():
    check('{"x":1}', [AddKey(("ü/~",), [True, None])], '{"x":1,"ü/~":[true,null]}')


def test_pretty_document_gets_pretty_additions():
    edits = [Insert(("a", 2), {"k": 1}), AddKey(("b", "n"), "v", after="c"), Insert(("e", 0), 1)]
    check(
        PRETTY,
        edits,
        """{
    "a": [
        1,
        2.50,
        {
            "k": 1
        }
    ],
    "b": {"c": 1, "n": "v", "d": 2},
    "e": [
        1
    ]
}
""",
    )


def test_new_lines_in_a_crlf_document_end_in_crlf():
    text = PRETTY.replace("\n", "\r\n")
    edits = [Insert(("a", 2), {"k": 1}), Insert(("e", 0), 1)]
    check(text, edits, splice(PRETTY, edits).replace("\n", "\r\n"))


def test_set_in_pretty_document_indents_the_value():
    check(
        PRETTY,
        [Set(("b", "d"), {"x": [1]})],
        PRETTY.replace('"d": 2}', '"d": {\n        "x": [\n            1\n        ]\n    }}'),
    )


def test_root_replacement_and_whitespace_around_it():
    check("  [1]\n", [Set((), {"a": 1})], '  {"a":1}\n')


def test_pointer_escapes():
    assert pointer(("a/b", "m~n", 0)) == "/a~1b/m~0n/0"
    assert pointer(()) == ""
    assert pointer(("",)) == "/"


@given(st.lists(st.one_of(st.text(alphabet="ab/~0", max_size=4), st.integers(0, 20))))
def test_pointer_is_the_rfc_6901_escape_of_every_part(path):
    escaped = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
    assert pointer(tuple(path)) == escaped


@pytest.mark.parametrize(
    "edits",
    [
        [Set(("a",), 1), Set(("a",), 2)],
        [Set(("b",), 1), Set(("b", "c"), 2)],
        [Delete(("b",)), Set(("b", "c"), 2)],
    ],
)
def test_conflicts_are_refused(edits):
    with pytest.raises(EditConflict):
        materialize(json.loads(COMPACT), edits)


def test_duplicate_key_is_refused():
    with pytest.raises(EditConflict):
        materialize({"a": 1, "b": 2}, [RenameKey(("a",), "b")])


def test_input_is_not_mutated():
    document = json.loads(COMPACT)
    before = json.dumps(document)
    materialize(document, [Delete(("a", 0)), AddKey(("b", "q"), 1), Set(("e",), [1])])
    assert json.dumps(document) == before


# --- properties ---------------------------------------------------------------------------------

NUMBERS = ["0", "-1", "2.50", "1e-7", "1E+2", "3.0", "12345678901234567890"]
STRINGS = ['"plain"', '"caf\\u00e9"', '"a\\/b"', '"tab\\t"', '"é"', '""', '"off_policy/mean"']


def _serialize(value, rng, indent, level=0):
    """JSON text in varied but valid spellings, which a faithful splice must keep."""
    pad = "\n" + indent * (level + 1) if indent else ""
    end = "\n" + indent * level if indent else ""
    sep = ", " if rng.random() < 0.2 and not indent else ","
    if isinstance(value, dict):
        items = [
            f'"{k}":{" " if indent else ""}{_serialize(v, rng, indent, level + 1)}'
            for k, v in value.items()
        ]
        return (
            "{"
            + (pad + (sep.strip() + pad if indent else sep).join(items) + end if items else "")
            + "}"
        )
    if isinstance(value, list):
        items = [_serialize(v, rng, indent, level + 1) for v in value]
        return (
            "["
            + (pad + (sep.strip() + pad if indent else sep).join(items) + end if items else "")
            + "]"
        )
    return value  # a leaf: a JSON token, spelled as it should stay


KEYS = st.sampled_from(["a", "b", "metrics", "x/y", "é"])
LEAVES = st.one_of(
    st.sampled_from(NUMBERS), st.sampled_from(STRINGS), st.just("true"), st.just("null")
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=25,
)


def _paths(value, path=()):
    yield path, value
    children = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, child in children:
        yield from _paths(child, (*path, key))


def _random_edits(document, rng):
    """Edits on disjoint parts of the document."""
    edits, claimed = [], []
    candidates = list(_paths(document))
    rng.shuffle(candidates)
    for path, value in candidates[: rng.randint(1, 6)]:
        if any(path[: len(c)] == c or c[: len(path)] == path for c in claimed):
            continue
        choice = rng.random()
        if isinstance(value, list) and choice < 0.5:
            edits.append(Insert((*path, rng.randint(0, len(value))), {"new": [1, "é"]}))
        elif isinstance(value, dict) and choice < 0.5 and value:
            key = rng.choice(list(value))
            if rng.random() < 0.5:
                edits.append(
                    AddKey((*path, "added"), ["v"], after=key)
                ) if "added" not in value else None
            elif "renamed" not in value:
                edits.append(RenameKey((*path, key), "renamed"))
        elif path and rng.random() < 0.3:
            edits.append(Delete(path))
        else:
            edits.append(Set(path, "replaced"))
        claimed.append(path)
    return edits


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(KEYS, VALUES, min_size=1, max_size=5),
    st.sampled_from(["", "  ", "\t"]),
    st.randoms(use_true_random=False),
)
@pytest.mark.slow
def test_splice_agrees_with_materialize_and_keeps_untouched_bytes(document_leaves, indent, rng):
    text = _serialize(document_leaves, rng, indent)
    document = json.loads(text)
    edits = _random_edits(document, random.Random(rng.random()))
    new_text = splice(text, edits)
    assert json.loads(new_text) == materialize(document, edits)
    affected = affected_paths(edits)
    assert outside(new_text, affected) == outside(text, affected)
