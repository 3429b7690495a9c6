"""YAML edits: the JSON edit list applied to YAML text."""

from __future__ import annotations

import gc
import random
import weakref

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate.edit.edits import AddKey, Delete, Insert, RenameKey, Set, materialize
from wbmigrate.edit.located_yaml import load_located, load_located_all
from wbmigrate.edit.replacement import apply
from wbmigrate.edit.yaml import faithful, unchecked


def replacements(text, located, edits):
    """The replacements that make `edits` in the one document of `text`, checked as `check`
    checks them (None: refused)."""
    found = unchecked(text, located, edits)
    return found if found is not None and faithful(text, [located], {0: edits}, found) else None


SCALARS = st.sampled_from(["a", "off_policy/mean", "x y", "1", "true", "é"])
YAML_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=4),
        st.dictionaries(st.sampled_from(["k", "m", "n"]), inner, min_size=1, max_size=3),
    ),
    max_leaves=12,
)


def _walk(value, path=()):
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _walk(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _walk(child, (*path, i))


def _edits(document, rng):
    edits, claimed = [], []
    for path, value in rng.sample(list(_walk(document)), k=min(3, len(list(_walk(document))))):
        if any(path[: len(c)] == c or c[: len(path)] == path for c in claimed):
            continue
        if isinstance(value, list):
            edits.append(Insert((*path, rng.randint(0, len(value))), rng.choice(["new", {"a": 1}])))
        elif isinstance(value, dict) and "added" not in value:
            key = rng.choice(list(value))
            edits.append(
                AddKey((*path, "added"), ["v"], after=key)
                if rng.random() < 0.5
                else RenameKey((*path, key), "renamed")
                if "renamed" not in value
                else Delete((*path, key))
            )
        elif isinstance(value, str) and path:
            edits.append(Set(path, "replaced/value") if rng.random() < 0.7 else Delete(path))
        else:
            continue
        claimed.append(path)
    return edits


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["root", "list", "map"]), YAML_VALUES, min_size=1),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_yaml_edits_parse_back_as_the_edited_value(document, flow, rng):
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True, sort_keys=False)
    edits = _edits(document, random.Random(rng.random()))
    found = replacements(text, load_located(text), edits)
    if found is None:
        REFUSED.append(edits)  # refused, never guessed
        return
    assert yaml.safe_load(apply(text, found)) == materialize(document, edits)


REFUSED: list[object] = []


@pytest.mark.parametrize(
    ("text", "edits", "expected"),
    [
        (
            "a:\n  - x  # keep\n  - y\n",
            [Insert(("a", 1), "new")],
            "a:\n  - x  # keep\n  - new\n  - y\n",
        ),
        ("a:\n  - x\n", [Insert(("a", 1), "yes")], 'a:\n  - x\n  - "yes"\n'),  # not a boolean
        ("a: [x, 'y']\n", [Insert(("a", 2), "z"), Set(("a", 1), "q")], "a: [x, 'q', 'z']\n"),
        (
            "m:\n  k: 1\n  j: 2\n",
            [AddKey(("m", "new"), {"x": 1}, after="k")],
            'm:\n  k: 1\n  new: {"x": 1}\n  j: 2\n',
        ),
        ("m:\n  k: 1\n  j: 2\n", [Delete(("m", "k"))], "m:\n  j: 2\n"),
        ("m:\n  k: 1\n  j: 2\nz: 0\n", [Delete(("m", "k")), Delete(("m", "j"))], "m: {}\nz: 0\n"),
        ("a: [x, y, z]\n", [Delete(("a", 0))], "a: [y, z]\n"),
        ("a: [x, y, z]\n", [Delete(("a", 1))], "a: [x, z]\n"),
        ("a: [x, y, z]\n", [Delete(("a", 0)), Delete(("a", 1))], "a: [z]\n"),
        ("a: [x, y, z]\n", [Delete(("a", 1)), Delete(("a", 2))], "a: [x]\n"),
        ("a: [x, y]\n", [Delete(("a", 0)), Delete(("a", 1))], "a: []\n"),
        ("a: {k: 1, j: 2}\n", [Delete(("a", "j"))], "a: {k: 1}\n"),
        ("a: &x off_policy/mean\n", [Set(("a",), "new")], "a: &x new\n"),  # the anchor stays
        ("a: !!str &x 'q'\n", [Set(("a",), "r")], "a: !!str &x 'r'\n"),
        ("l:\n- k: a\n  m: b\n- c\n", [Delete(("l", 0, "k"))], "l:\n- m: b\n- c\n"),
        ("l:\n- only\nz: 1\n", [Delete(("l", 0))], "l: []\nz: 1\n"),
        ('m: {"a": 1}\n', [RenameKey(("m", "a"), "b")], 'm: {"b": 1}\n'),
    ],
)
def test_yaml_edit_cases(text, edits, expected):
    found = replacements(text, load_located(text), edits)
    assert found is not None
    assert apply(text, found) == expected


@pytest.mark.parametrize(
    ("edits", "expected"),
    [
        ([Insert(("a", 1), "new")], "a:\r\n  - x\r\n  - new\r\n  - y\r\nm:\r\n  k: 1\r\n"),
        ([Insert(("a", 0), "new")], "a:\r\n  - new\r\n  - x\r\n  - y\r\nm:\r\n  k: 1\r\n"),
        ([AddKey(("m", "j"), 2, after="k")], "a:\r\n  - x\r\n  - y\r\nm:\r\n  k: 1\r\n  j: 2\r\n"),
        ([Delete(("a", 0))], "a:\r\n  - y\r\nm:\r\n  k: 1\r\n"),
    ],
    ids=["insert", "insert-first", "add-key", "delete"],
)
def test_new_lines_in_a_crlf_document_end_in_crlf(edits, expected):
    """A line ending in LF alone mixed the two (an insert also took the line's CR before it)."""
    text = "a:\r\n  - x\r\n  - y\r\nm:\r\n  k: 1\r\n"
    found = replacements(text, load_located(text), edits)
    assert found is not None
    assert apply(text, found) == expected


def test_an_edit_through_a_merge_key_is_made_at_the_anchor():
    text = "base: &b\n  k: 1\nm:\n  <<: *b\n  j: 2\n"
    located = load_located_all(text)[0]
    edits = [AddKey(("base", "extra"), 3, after="k"), AddKey(("m", "extra"), 3, after="k")]
    found = replacements(text, located, edits)
    assert found is not None
    assert apply(text, found) == "base: &b\n  k: 1\n  extra: 3\nm:\n  <<: *b\n  j: 2\n"


def test_an_edit_of_one_use_of_an_anchor_alone_is_refused():
    """Made at the anchor, it would show at every use: without the same edit at the others,
    the text would not say what the edits say, so it is not made."""
    text = "a: &q [x, y]\nb: *q\n"
    located = load_located_all(text)[0]
    assert replacements(text, located, [Delete(("a", 1))]) is None
    found = replacements(text, located, [Delete(("a", 1)), Delete(("b", 1))])
    assert found is not None
    assert apply(text, found) == "a: &q [x]\nb: *q\n"


def test_edits_in_one_document_of_several_are_checked_against_all():
    text = "a: 1\n---\nb: [x]\n---\nc: 2\n"
    documents = load_located_all(text)
    found = unchecked(text, documents[1], [Insert(("b", 1), "z")])
    assert found is not None
    assert faithful(text, documents, {1: [Insert(("b", 1), "z")]}, found)
    assert apply(text, found) == "a: 1\n---\nb: [x, z]\n---\nc: 2\n"
    assert not faithful(text, documents, {}, found)  # the edit is not what was asked


# --- loading: documents, anchors, merge keys ------------------------------------------------


def test_every_document_of_a_stream_is_located_on_its_own():
    first, second = load_located_all("a: 1\n---\n# c\nb:\n  - x\n")
    assert (first.index, first.data, second.index, second.data) == (0, {"a": 1}, 1, {"b": ["x"]})
    assert second.line(("b", 0)) == 5


def test_merge_keys_read_as_yaml_reads_them():
    text = (
        "one: &one {a: 1, b: 1}\n"
        "two: &two {b: 2, c: 2, <<: {d: 2}}\n"
        "m:\n  <<: [*one, *two]\n  a: own\n"
    )
    (located,) = load_located_all(text)
    assert located.data == yaml.safe_load(text)
    assert located.data["m"] == {"a": "own", "b": 1, "c": 2, "d": 2}
    # a merged key is located in the mapping it comes from; the own key where it is
    assert located.key_nodes[("m", "b")] is located.key_nodes[("one", "b")]
    assert located.key_lines[("m", "a")] == 5
    assert located.aliases


def test_an_alias_is_the_same_node_at_every_path():
    (located,) = load_located_all("a: &x [1, 2]\nb: *x\n")
    assert located.nodes[("a",)] is located.nodes[("b",)]
    assert [path for path, _ in located.aliases] == [("b",)]


def test_a_mapping_file_reads_no_merge_keys():
    with pytest.raises(yaml.YAMLError):
        load_located("a: &x {k: 1}\nb:\n  <<: *x\n")


def test_a_loaded_node_is_not_kept_alive():
    """Nothing keeps a file's nodes (each holds the file's whole text) once its result is
    dropped: a `check` of many YAML files would otherwise hold all of them."""
    for text in ("a: 1\nb: [x, 2026-01-01]\n", "a: !!str 1\n"):
        located = load_located_all(text)[0]
        node = weakref.ref(located.nodes[("a",)])
        del located
        gc.collect()
        assert node() is None


def test_aliases_that_expand_without_bound_are_refused():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 7)]
    with pytest.raises(yaml.YAMLError, match="aliases expand to too many nodes"):
        load_located_all("\n".join(lines))


@pytest.mark.parametrize(
    ("text", "edit", "expected"),
    [
        ("l:\n- k: a\n  m: b\n- c\n", Set(("l", 0), {"g": [1]}), 'l:\n- {"g": [1]}\n- c\n'),
        ("m:\n  k:\n    a: 1\nz: 0\n", Set(("m", "k"), {"g": 1}), 'm:\n  k:\n    {"g": 1}\nz: 0\n'),
        ("l: [{k: a}, c]\n", Set(("l", 0), {"g": 1}), 'l: [{"g": 1}, c]\n'),
        ("l:\n- k: a  # why\n  m: b\n", Set(("l", 0), {"g": 1}), None),
        ("l:\n- k: a\n", Set(("l", 0), "z"), None),
        ("l:\n- [a]\n", Set(("l", 0), {"g": 1}), None),
    ],
    ids=["block-item", "block-value", "flow-item", "a-comment-inside-is-refused",
         "not-by-a-scalar", "not-a-sequence"],
)  # fmt: skip
def test_a_mapping_is_set_in_flow_style_never_over_a_comment(text, edit, expected):
    """A run-set filter that becomes the group (old OR new) replaces a whole mapping."""
    found = replacements(text, load_located(text), [edit])
    assert (apply(text, found) if found is not None else None) == expected
