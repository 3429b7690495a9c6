"""Spec documents in `check`: the one replacement a fix makes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate.check.documents import minimal


@settings(max_examples=500, deadline=None)
@given(
    st.text("ab,[]", max_size=30),
    st.text("ab,[]", max_size=30),
    st.text("ab,[]", max_size=30),
    st.text("ab,[]", max_size=8),
    st.tuples(st.integers(0, 80), st.integers(0, 80)),
)
def test_minimal_replacement_is_exact_and_smallest(head, tail, middle, other, hint):
    text, new = head + middle + tail, head + other + tail
    (found,) = minimal(text, new, (min(hint), max(hint)))  # any hint: right, wrong or outside
    assert text[: found.start] + found.text + text[found.end :] == new
    # nothing more could be kept: the replaced parts differ at both ends
    kept_head, kept_tail = found.start, len(text) - found.end
    assert kept_head + kept_tail <= min(len(text), len(new))
    if kept_head < min(len(text), len(new)) - kept_tail:
        assert text[kept_head] != new[kept_head]
        assert text[found.end - 1] != new[len(new) - kept_tail - 1]
