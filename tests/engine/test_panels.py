"""Panels of a type wbmigrate does not know get the rules that hold for every panel type, the
way a line plot does; the rest of them is reported for review, and they are never deleted."""

from __future__ import annotations

import pytest

from wbmigrate import find_mapping
from wbmigrate.edit.edits import materialize
from wbmigrate.engine.model import ChangeAction, Mode, NoteKind, Options
from wbmigrate.engine.panels import walk_panel
from wbmigrate.engine.walk import Walk

MIGRATION = find_mapping("prime-rl").migration()
DUAL, REPLACE = Mode.DUAL, Mode.REPLACE
UNKNOWN = "Line Plot 2"


def walk(panel: dict, mode: Mode) -> tuple[dict | None, Walk]:
    """The panel after the rewrite (None: deleted), and the walk's record."""
    w = Walk(MIGRATION, Options(mode=mode))
    walk_panel(w, ("panels", 0), panel)
    after = materialize({"panels": [panel]}, w.edits)["panels"]
    return (after[0] if after else None), w


def panel(config: object, view_type: str = UNKNOWN, **rest: object) -> dict:
    return {"__id__": "p1", "viewType": view_type, "config": config, **rest}


def check_transformed(before: dict, after: dict, mode: Mode) -> None:
    result, _ = walk(before, mode)
    assert result == after
    again, w = walk(result, mode)  # a second rewrite changes nothing
    assert (again, w.changes) == (result, [])


def check_noop(before: dict, mode: Mode) -> Walk:
    result, w = walk(before, mode)
    assert (result, w.changes) == (before, [])
    return w


@pytest.mark.parametrize(
    ("before", "after", "mode"),
    [
        ({"metrics": ["off_policy/max", "loss"]},
         {"metrics": ["off_policy/max", "staleness/rollout/max", "loss"]}, DUAL),
        ({"metrics": ["off_policy/max", "dispatcher/off_policy/max"]},
         {"metrics": ["staleness/rollout/max"]}, REPLACE),
        ({"xAxis": "off_policy/mean"}, {"xAxis": "staleness/rollout/mean"}, DUAL),
        ({"groupBy": "off_policy/dropped"}, {"groupBy": "staleness/rollout/dropped"}, REPLACE),
        ({"expressions": ["${off_policy/mean}*2"]},
         {"expressions": ["${off_policy/mean}*2", "${staleness/rollout/mean}*2"]}, DUAL),
        ({"legendTemplate": "${run:displayName} ${summary:off_policy/mean}"},
         {"legendTemplate": "${run:displayName} ${summary:staleness/rollout/mean}"}, DUAL),
        ({"legendFields": ["off_policy/mean"]},
         {"legendFields": ["off_policy/mean", "staleness/rollout/mean"]}, DUAL),
        ({"overrideSeriesTitles": {"abc123:off_policy/max": "max"}},
         {"overrideSeriesTitles": {"abc123:staleness/rollout/max": "max"}}, REPLACE),
        ({"overrideColors": {"abc123:off_policy/max": {"color": "#f00"}}},
         {"overrideColors": {"abc123:staleness/rollout/max": {"color": "#f00"}}}, REPLACE),
        ({"overrideSeriesTitles": {"off_policy/max": "max"}},
         {"overrideSeriesTitles": {"off_policy/max": "max", "staleness/rollout/max": "max"}}, DUAL),
        ({"overrideColors": {"off_policy/max": {"color": "#f00"}}},
         {"overrideColors": {"staleness/rollout/max": {"color": "#f00"}}}, REPLACE),
    ],
    ids=["metrics-dual", "metrics-replace", "x-axis", "group-by", "expressions",
         "legend-template", "legend-fields", "series-titles-replace", "series-colors-replace",
         "bare-series-titles-dual", "bare-series-colors-replace"],
)  # fmt: skip
@pytest.mark.parametrize("view_type", [UNKNOWN, "Run History Line Plot"], ids=["unknown", "line"])
def test_universal_fields(before, after, mode, view_type):
    """An unknown type gets exactly what a line plot gets for the fields every type shares."""
    check_transformed(panel(before, view_type), panel(after, view_type), mode)


@pytest.mark.parametrize(
    ("before", "mode"),
    [
        (panel({"overrideSeriesTitles": {"abc123:off_policy/max": "max"}}), DUAL),
        (panel({"metrics": ["off_policy/mean", "staleness/rollout/mean"]}), DUAL),
        (panel({"metrics": ["staleness/rollout/mean"], "xAxis": "_step"}), REPLACE),
        (panel({"metrics": ["loss"], "smoothing": {"referenceKey": "off_policy/max"}}), DUAL),
        (panel({"metrics": ["loss"], "smoothing": {"referenceKey": "off_policy/max"}}), REPLACE),
        (panel(["off_policy/mean"]), REPLACE),
        (panel({"xExpression": "${off_policy/mean}"}), REPLACE),
    ],
    ids=["series-keys-dual", "already-dual", "already-new", "unknown-field-dual",
         "unknown-field-replace", "config-not-a-dict", "line-only-field"],
)  # fmt: skip
def test_noop(before, mode):
    check_noop(before, mode)


def test_an_unknown_field_holding_an_old_name_needs_review():
    before = panel({"metrics": ["off_policy/max"], "smoothing": {"referenceKey": "off_policy/max"}})
    _, w = walk(before, DUAL)
    assert [c.field for c in w.changes] == ["metrics[0]"]
    [note] = w.notes
    assert (note.kind, note.pointer, note.field) == (
        NoteKind.REVIEW,
        "/panels/0/config/smoothing/referenceKey",
        "config.smoothing.referenceKey",
    )
    assert "panel type 'Line Plot 2'" in note.message


def test_the_panel_around_the_config_is_scanned_too():
    before = panel({"metrics": ["off_policy/max"]}, description="tracks off_policy/max")
    _, w = walk(before, REPLACE)
    assert [c.field for c in w.changes] == ["metrics[0]"]
    assert [(n.kind, n.pointer) for n in w.notes] == [(NoteKind.REVIEW, "/panels/0/description")]


@pytest.mark.parametrize("mode", [DUAL, REPLACE], ids=["dual", "replace"])
def test_an_unknown_panel_whose_metrics_are_all_gone_is_kept_for_review(mode):
    before = panel(
        {"metrics": ["dispatcher/off_policy/max"], "xAxis": "off_policy/mean", "diffOnly": True}
    )
    w = check_noop(before, mode)
    assert [(n.kind, n.pointer) for n in w.notes] == [
        (NoteKind.REVIEW, "/panels/0"),
        (NoteKind.REVIEW, "/panels/0/config/xAxis"),
    ]
    assert "is unknown and may show more: kept" in w.notes[0].message


def test_a_known_panel_whose_metrics_are_all_gone_is_still_deleted():
    before = panel({"metrics": ["dispatcher/off_policy/max"]}, "Run History Line Plot")
    result, w = walk(before, REPLACE)
    assert result is None
    assert [c.action for c in w.changes] == [ChangeAction.REMOVED]


def test_a_config_that_is_not_a_dict_is_only_scanned():
    w = check_noop(panel(["off_policy/mean"]), DUAL)
    assert [(n.kind, n.pointer) for n in w.notes] == [(NoteKind.REVIEW, "/panels/0/config/0")]


@pytest.mark.parametrize(
    ("before", "after", "mode"),
    [
        ({"off_policy/mean": "Rollout", "run1:off_policy/mean": "run 1", "loss": "Loss"},
         {"off_policy/mean": "Rollout", "staleness/rollout/mean": "Rollout",
          "run1:off_policy/mean": "run 1", "loss": "Loss"}, DUAL),
        ({"off_policy/mean": "Rollout", "run1:off_policy/mean": "run 1", "loss": "Loss"},
         {"staleness/rollout/mean": "Rollout", "run1:staleness/rollout/mean": "run 1",
          "loss": "Loss"}, REPLACE),
        ({"off_policy/mean": "Old", "staleness/rollout/mean": "New"},
         {"off_policy/mean": "Old", "staleness/rollout/mean": "New"}, DUAL),
        ({"eval/off_policy/mean": "Eval"}, {"eval/off_policy/mean": "Eval"}, REPLACE),
    ],
    ids=["dual", "replace", "new-key-set-already", "whole-names-only"],
)  # fmt: skip
def test_bar_chart_overrides_keyed_by_a_bare_metric_follow_the_rename(before, after, mode):
    """The SDK's BarPlot writes `line_titles` keys as given: a bare metric names the bar of
    every run's series, which the new key continues; `<runId>:<metric>` one run's."""
    config = {"metrics": ["loss"], "overrideSeriesTitles": before}
    expected = {"metrics": ["loss"], "overrideSeriesTitles": after}
    check_transformed(panel(config, "Bar Chart"), panel(expected, "Bar Chart"), mode)
