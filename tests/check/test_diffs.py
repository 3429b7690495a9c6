"""The smallest replacements between two texts."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate.check.diffs import differences
from wbmigrate.edit.replacement import Replacement, apply

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
