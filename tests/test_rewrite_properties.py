"""Properties of the rewrite engine over generated specs (see strategies.py)."""

from __future__ import annotations

import json

from helpers import affected_paths, outside
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import DECOYS, MIGRATION, MODES, OLD, SPECS

from wbmigrate.engine.model import Mode, Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.rewrite import rewrite, rewrite_text

# 300 examples each: a fifth of the suite's time went to 1,000 (the examples are the same every run)
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(SPECS, MODES, st.booleans())
def test_text_and_value_agree_and_untouched_bytes_stay(spec, mode, pretty):
    text = json.dumps(spec, indent=2 if pretty else None, ensure_ascii=False)
    result, new_text = rewrite_text(text, MIGRATION, options=Options(mode=mode))
    assert json.loads(new_text) == result.spec
    paths = affected_paths(result.edits)
    assert outside(new_text, paths) == outside(text, paths)


@FAST
@given(SPECS, MODES)
def test_rewriting_twice_changes_nothing_more(spec, mode):
    first = rewrite(spec, MIGRATION, options=Options(mode=mode))
    second = rewrite(first.spec, MIGRATION, options=Options(mode=mode))
    assert second.changes == ()


@FAST
@given(SPECS, MODES)
def test_input_is_never_mutated(spec, mode):
    before = json.dumps(spec)
    rewrite(spec, MIGRATION, options=Options(mode=mode))
    assert json.dumps(spec) == before


@FAST
@given(SPECS)
def test_decoys_never_change_and_replace_leaves_no_old_key_in_metric_fields(spec):
    result = rewrite(spec, MIGRATION, options=Options(mode=Mode.REPLACE, annotate=False))
    for change in result.changes:
        if change.field in ("metricRegex", "panel search"):
            continue  # a regex, judged by what it matches
        assert change.old not in DECOYS
        assert not (isinstance(change.old, str) and change.old.split(":")[-1] in DECOYS)
    for grid in result.spec.get("blocks", [])[1:]:
        for panel in grid["metadata"]["panelBankSectionConfig"]["panels"]:
            if panel["viewType"] in ("Run History Line Plot", "Bar Chart", "Media Browser"):
                assert not set(panel["config"].get("metrics", [])) & set(OLD)
                assert not set(panel["config"].get("mediaKeys", [])) & set(OLD)


# Arbitrary JSON in the places specs keep things: the walker may refuse a spec (an error the
# user sees as one line) but never crashes.
VOCABULARY = st.sampled_from(
    [
        "blocks",
        "type",
        "panel-grid",
        "metadata",
        "panelBankSectionConfig",
        "panels",
        "viewType",
        "config",
        "metrics",
        "xAxis",
        "runSets",
        "filters",
        "key",
        "op",
        "section",
        "name",
        "children",
        "collapsedChildren",
        "event",
        "filter",
        "run_metric_filter",
        "userQuery",
        "queryFields",
        "args",
        "fields",
        "fromOp",
        "inputs",
        "val",
        "columns",
        "accessor",
        "off_policy/mean",
        "summary:off_policy/max",
        "Run History Line Plot",
        "Vega2",
        "Weave",
    ]
)
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | VOCABULARY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(VOCABULARY, inner, max_size=5),
    max_leaves=40,
)


@FAST
@given(ANY_JSON, st.sampled_from(["report", "workspace", "automation", None]), MODES)
def test_the_walker_never_crashes(value, kind, mode):
    for spec in (value, {"blocks": value}, {"section": value}, {"event": value, "action": {}}):
        try:
            result, new_text = rewrite_text(
                json.dumps(spec), MIGRATION, kind=kind, options=Options(mode=mode)
            )
        except WbmigrateError:
            continue
        assert json.loads(new_text) == result.spec


def test_a_key_list_holding_objects_is_walked_not_crashed_on():
    """Found by `plan /` on a real machine: a `metrics` list of objects (unhashable)."""
    panel = {
        "viewType": "Run History Line Plot",
        "config": {"metrics": [{"a": 1}, "off_policy/mean"]},
    }
    spec = {"section": {"panelBankConfig": {"sections": [{"panels": [panel]}]}}}
    result = rewrite(spec, MIGRATION, options=Options(mode=Mode.DUAL))
    assert [c.new for c in result.changes if c.field == "metrics[1]"] == ["staleness/rollout/mean"]
