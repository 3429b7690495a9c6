"""`Walk.may_hold`, the C-speed test that let the walk skip most of a
spec: never a miss."""

from __future__ import annotations

import marshal

import orjson
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import KEYS, MIGRATION

from wbmigrate.engine.model import Options
from wbmigrate.engine.record import serialiser
from wbmigrate.engine.walk import Walk
from wbmigrate.mapping.parse import parse_mapping
from wbmigrate.rewrite import rewrite

# JSON data as a spec parses to, with what orjson writes differently from marshal: escapes,
# non-ASCII text, lone surrogates, integers past 64 bits, and the mapping's own names.
STRINGS = st.one_of(KEYS, st.text(max_size=12), st.sampled_from(['"', "\\", "\n", "é", "\ud800"]))
VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True),
        STRINGS,
        st.builds("".join, st.lists(STRINGS, max_size=4)),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(STRINGS, inner, max_size=4)
    ),
    max_leaves=12,
)


def held_by_marshal(walk: Walk, value: object) -> bool:
    """What `may_hold` answered when it searched marshal's bytes, which escape nothing."""
    if not value:
        return False
    try:
        data = marshal.dumps(value)
    except ValueError:
        return True
    return any(anchor in data for anchor in walk._anchors)


@settings(max_examples=1000, deadline=None)
@given(VALUES)
def test_may_hold_says_yes_wherever_an_old_name_may_be(value):
    walk = Walk(MIGRATION, Options())
    assert walk.may_hold(value) or not held_by_marshal(walk, value)


def test_the_prime_rl_anchors_are_searched_in_orjsons_text():
    assert serialiser(MIGRATION.anchor_bytes) is orjson.dumps


@pytest.mark.parametrize("anchor", [b'say"hi', b"back\\slash", b"tab\tbed"])
def test_an_anchor_json_escapes_is_searched_in_marshals_bytes(anchor):
    """orjson writes `"`, `\\` and control characters escaped, so an anchor holding one would
    not be found in its text: a mapping may name such a metric, prime-rl's names do not."""
    walk = Walk(MIGRATION, Options())
    walk._anchors, walk._serialise = (anchor,), serialiser((anchor,))
    assert walk._serialise is marshal.dumps
    assert walk.may_hold({"metrics": ["x", anchor.decode()]})
    assert not walk.may_hold({"metrics": ["loss"]})


def test_with_many_renames_free_text_mentions_are_still_found():
    renamed = {f"gauge{i:03d}": f"renamed{i:03d}" for i in range(24)}
    step = {"version": "1.0", "date": "2026-01-01", "source": "https://example.com/pull/1"}
    document = {
        "format": 1,
        "id": "many",
        "title": "Many",
        "sources": ["https://example.com"],
        "steps": [{**step, "annotation": "Boundary.", "metrics": {"renamed": renamed}}],
    }
    migration = parse_mapping(yaml.safe_dump(document), "many.yaml").migration()
    report = {"blocks": [{"type": "markdown-block", "content": "See gauge017."}]}
    notes = rewrite(report, migration, kind="report").notes
    assert [n.message for n in notes] == [
        "free text mentions gauge017; text is not rewritten (see --rewrite-text)"
    ]
