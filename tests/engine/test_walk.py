"""`Walk.may_hold`, the C-speed test that let the walk skip most of a
spec, and `Walk.may_name`, the sharper one asked of each panel and run set: never a miss."""

from __future__ import annotations

import contextlib
import marshal

import orjson
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import KEYS, MIGRATION, MODES, runsets

from wbmigrate import names
from wbmigrate.engine.model import Options
from wbmigrate.engine.panels import CONFIG_FIELDS, PANEL_TYPES, _config_keys, _walk_panel
from wbmigrate.engine.record import name_words, serialiser, whole_names
from wbmigrate.engine.runsets import CONFIG, METRICS, _keys, names_config
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


@pytest.mark.slow
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


# --- `Walk.may_name`: the whole-name test asked of each panel and run set --------------------

CONFIG_KEYS = sorted(MIGRATION.config_fates)
NESTED = [key.replace(".", ".value.", 1) for key in CONFIG_KEYS if "." in key]  # `a.value.b`
NAMES = st.sampled_from(sorted(MIGRATION.old_names) + CONFIG_KEYS + NESTED)
# How the walk's rules meet a name, and the near misses a whole-name test must tell apart.
BEFORE = ["", "summary:", "s::", "summary_metrics.", "keys_info.keys.", "run1:", "config:", "c::"]
BEFORE += ["${", "${ summary:", "see ", "\n", "\t(", "é", "train/", "x", "-", "a.", "\\"]
AFTER = ["", "}", " }", ".", ".value", ". Then", "\n", "/x", "_x", "-x", "é", '"']
SPELLED = st.builds(
    lambda a, n, b: a + n + b, st.sampled_from(BEFORE), NAMES, st.sampled_from(AFTER)
)
ANY_TEXT = st.one_of(SPELLED, KEYS, st.text(max_size=6))
FIELDS = ["metrics", "key", "xAxis", "yAxis", "groupBy", "expressions", "legendTemplate"]
FIELDS += ["chartTitle", "value", "columns", "dimensions", "mediaKeys", "targetKey", "other"]
FIELDS += ["overrideColors", "legendFields", "fieldSettings", "stringSettings", "columnOrder"]
CONFIGS = st.dictionaries(
    st.sampled_from(FIELDS),
    st.one_of(
        ANY_TEXT,
        st.lists(ANY_TEXT, max_size=3),
        st.lists(st.builds(lambda a: {"accessor": a}, ANY_TEXT), max_size=2),
        st.dictionaries(ANY_TEXT, ANY_TEXT, max_size=2),
    ),
    max_size=5,
)
PANELS = st.builds(
    lambda view_type, config: {"viewType": view_type, "config": config},
    st.sampled_from([*PANEL_TYPES, "Future Panel"]),
    CONFIGS,
)


def recorded(walk: Walk) -> bool:
    return bool(walk.edits or walk.notes or walk.shown or walk.kept or walk.versions)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(PANELS, MODES)
def test_may_name_says_yes_wherever_a_panel_names_an_old_key(panel, mode):
    """Walked without asking, a panel `may_name` rules out records nothing: metrics or config
    keys, in either mode."""
    config, path = panel["config"], ("panels", 0)
    metrics = Walk(MIGRATION, Options(mode=mode))
    _walk_panel(metrics, path, panel, panel["viewType"], config)
    assert metrics.may_name(panel) or not recorded(metrics)
    keys = Walk(MIGRATION, Options(mode=mode))
    with keys.config_keys():
        _config_keys(keys, (*path, "config"), config)
        fields = [config.get(key) for key in CONFIG_FIELDS]
        assert keys.may_name(fields) or not recorded(keys)


@settings(max_examples=500, deadline=None)
@given(runsets(), MODES)
def test_may_name_says_yes_wherever_a_run_set_names_an_old_key(runset, mode):
    for keys in (METRICS, CONFIG):
        walk = Walk(MIGRATION, Options(mode=mode))
        with walk.config_keys() if keys is CONFIG else contextlib.nullcontext():
            _keys(walk, ("runSets", 0), runset, keys)
            assert walk.may_name(runset) or not recorded(walk)


def test_may_name_tells_a_whole_name_from_one_inside_a_longer_one():
    walk = Walk(MIGRATION, Options())
    assert walk.may_name({"metrics": ["summary_metrics.reward/mean"]})
    assert walk.may_name({"chartTitle": "about\nreward/mean."})
    assert not walk.may_name({"metrics": ["train/reward/mean", "reward/mean_smoothed"]})
    assert walk.may_hold({"metrics": ["train/reward/mean"]})  # the anchors' answer


WHOLE_NAMES = whole_names(MIGRATION.old_names)  # built once: a millisecond per example


@settings(max_examples=1500, deadline=None)
@given(st.one_of(VALUES, PANELS, st.lists(ANY_TEXT, max_size=4), ANY_TEXT))
def test_may_name_told_by_words_is_what_the_pattern_says(value):
    """Its words (`name_words`) answer exactly as the whole-name pattern: escapes, a value
    that starts with a name's byte, non-ASCII text."""
    walk = Walk(MIGRATION, Options())
    assert walk._words is not None  # the words, not the pattern, answer here
    try:
        data = orjson.dumps(value)
    except (TypeError, ValueError):
        return
    assert walk.may_name(value) == (bool(value) and WHOLE_NAMES.search(data) is not None)


def test_name_words_only_for_names_of_word_bytes():
    """Any other name (empty, dotted, non-ASCII, a lone surrogate) leaves it to the pattern."""
    assert name_words(frozenset({"reward/mean", "loss_x-1"})) == {b"reward/mean", b"loss_x-1"}
    for odd in ("", "lr.value", "réward", "\ud800"):
        assert name_words(frozenset({"reward/mean", odd})) is None


@settings(max_examples=1500, deadline=None)
@given(st.one_of(ANY_TEXT, STRINGS, st.builds("".join, st.lists(ANY_TEXT, max_size=4))))
def test_mentions_told_by_words_are_the_patterns(text):
    walk = Walk(MIGRATION, Options())
    assert walk.mentions(text) == names.mentions(text, MIGRATION.mention)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(VALUES, PANELS, st.lists(ANY_TEXT, max_size=4), ANY_TEXT))
def test_may_name_of_config_keys_is_what_the_pattern_says(value):
    """Config keys hold dots: their first parts' words rule most values out, and the pattern
    tells the rest, so the answer is still exactly the pattern's."""
    walk = Walk(MIGRATION, Options())
    with walk.config_keys():
        assert walk._words is not None
        assert not walk._exact
        try:
            data = orjson.dumps(value)
        except (TypeError, ValueError):
            return
        pattern = whole_names(walk._spellings)
        assert walk.may_name(value) == (bool(value) and pattern.search(data) is not None)


@settings(max_examples=500, deadline=None)
@given(st.one_of(PANELS, runsets()), MODES)
def test_may_name_either_is_may_name_and_never_misses_a_config_key(value, mode):
    """One look at a panel's or run set's words: the metrics' answer is `may_name`'s, and a
    value it rules config keys out of names none (`may_name` inside `config_keys`)."""
    walk = Walk(MIGRATION, Options(mode=mode))
    metrics, config = walk.may_name_either(value)
    assert metrics == walk.may_name(value)
    fields = value["config"] if "viewType" in value else {}
    with walk.config_keys():
        assert config or not walk.may_name(value)
        assert config or not walk.may_name([fields.get(key) for key in CONFIG_FIELDS])


@settings(max_examples=500, deadline=None)
@given(runsets(), MODES)
def test_a_run_set_names_config_keys_only_in_a_config_section_or_column(runset, mode):
    walk = Walk(MIGRATION, Options(mode=mode))
    with walk.config_keys():
        _keys(walk, ("runSets", 0), runset, CONFIG)
        assert names_config(runset) or not recorded(walk)
