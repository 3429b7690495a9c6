"""How hosts write a fix: YAML edits inside block scalars and over every document at once, and
the smallest replacements between two texts."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate.check.hosts import differences, yaml_faithful, yaml_replacements
from wbmigrate.edit.edits import Insert, Set
from wbmigrate.edit.located_yaml import load_located_all
from wbmigrate.edit.replacement import Replacement, apply


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('f: |\n  {"name": "a",\n   "n": 1}\n', 'f: |\n  {"name": "b",\n   "n": 1}\n'),
        ('f: >-\n  {"name": "a",\n  "n": 1}\n', 'f: >-\n  {"name": "b",\n  "n": 1}\n'),
    ],
)
def test_a_new_string_for_a_block_scalar_is_written_inside_the_block(text, expected):
    (located,) = load_located_all(text)
    new = located.data["f"].replace('"a"', '"b"')
    found = yaml_replacements(text, located, [Set(("f",), new)])
    assert found is not None
    assert apply(text, found) == expected


def test_the_edits_of_every_document_are_read_back_together():
    text = "a: [x]\n---\nb: [y]\n"
    documents = load_located_all(text)
    edits = {0: [Insert(("a", 1), "x2")], 1: [Insert(("b", 0), "y0")]}
    assert yaml_faithful(text, documents, edits) == "a: [x, x2]\n---\nb: [y0, y]\n"
    assert yaml_faithful(text, documents, {0: [Insert(("a", 1), "---")]}) is not None  # quoted
    assert yaml_faithful(text, documents, {1: [Set(("b",), "z")]}) is None  # not a scalar


TEXT = st.text("ab\n {}", max_size=40)


@settings(max_examples=300, deadline=None)
@given(TEXT, TEXT)
def test_the_differences_make_the_new_text_and_keep_the_rest(old, new):
    pieces = differences(old, new)
    assert apply(old, pieces) == new
    assert all(a.end <= b.start for a, b in itertools.pairwise(pieces))  # apart
    assert sum(p.end - p.start for p in pieces) <= len(old)


def test_a_long_text_differs_in_one_piece():
    old = "x" * 30_000
    assert differences(old, "y" + old[1:-1] + "y") == [
        Replacement(0, 30_000, "y" + "x" * 29_998 + "y")
    ]
