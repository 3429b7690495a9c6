"""YAML edits: the JSON edit list applied to YAML text."""

from __future__ import annotations

import random

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate.edit.edits import AddKey, Delete, Insert, RenameKey, Set, materialize
from wbmigrate.edit.located_yaml import load_located
from wbmigrate.edit.yaml import apply, replacements

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
        ("l:\n- k: a\n  m: b\n- c\n", [Delete(("l", 0, "k"))], "l:\n- m: b\n- c\n"),
        ("l:\n- only\nz: 1\n", [Delete(("l", 0))], "l: []\nz: 1\n"),
        ('m: {"a": 1}\n', [RenameKey(("m", "a"), "b")], 'm: {"b": 1}\n'),
    ],
)
def test_yaml_edit_cases(text, edits, expected):
    found = replacements(text, load_located(text), edits)
    assert found is not None
    assert apply(text, found) == expected
