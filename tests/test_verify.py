"""The closing checks over specs, as pure functions: old names left, the in-flight/in-queue
split (alone and against a baseline), keys nobody logged."""

from __future__ import annotations

import json

import pytest

from wbmigrate import find_mapping
from wbmigrate.engine.history import History, RunRef
from wbmigrate.engine.model import Mode, Options
from wbmigrate.plan import Source
from wbmigrate.verify import Check, baseline_panels, split_of_alerts, verify_one

MIGRATION = find_mapping("prime-rl").migration()
IN_FLIGHT, IN_QUEUE = "staleness/rollout/in_flight/mean", "staleness/rollout/in_queue/mean"


def report(*metrics: str, panel_id: str = "p1") -> dict:
    panel = {
        "__id__": panel_id,
        "viewType": "Run History Line Plot",
        "config": {"metrics": list(metrics)},
    }
    grid = {"type": "panel-grid", "metadata": {"panelBankSectionConfig": {"panels": [panel]}}}
    return {"version": 5, "blocks": [grid]}


def alert(name: str, metric: str) -> dict:
    condition = {"threshold_filter": {"name": metric, "agg": "MAX", "cmp": "$gt", "threshold": 4}}
    return {
        "name": name,
        "enabled": True,
        "event": {
            "eventType": "RUN_METRIC",
            "filter": json.dumps({"run_metric_filter": condition}),
        },
        "action": {"title": "t", "message": "m"},
    }


def checks(spec: dict, mode: Mode = Mode.DUAL, baseline: dict | None = None, history=None):
    source = Source("r", "r.json", json.dumps(spec))
    options = Options(mode=mode, history=history)
    return [(f.check, f.message) for f in verify_one(source, MIGRATION, options, baseline).findings]


@pytest.mark.parametrize(
    ("name", "metrics", "mode"),
    [
        ("dual pairs", ["off_policy/mean", "staleness/rollout/mean"], Mode.DUAL),
        ("new keys only, replace", ["staleness/rollout/mean"], Mode.REPLACE),
        ("unrelated keys", ["loss", "eval/off_policy/mean"], Mode.REPLACE),
        ("the split kept", [IN_FLIGHT, IN_QUEUE], Mode.REPLACE),
    ],
)
def test_what_holds(name, metrics, mode):
    assert checks(report(*metrics), mode) == []


@pytest.mark.parametrize(
    ("name", "metrics", "mode", "expected"),
    [
        ("an old key without its companion", ["off_policy/mean"], Mode.DUAL, Check.OLD_NAME_LEFT),
        (
            "an old key in replace mode",
            ["off_policy/mean", "staleness/rollout/mean"],
            Mode.REPLACE,
            Check.OLD_NAME_LEFT,
        ),
        ("a removed gauge left", ["dispatcher/off_policy/max"], Mode.DUAL, Check.OLD_NAME_LEFT),
        (
            "in-flight and in-queue merged",
            ["staleness/rollout/mean", "staleness/rollout/mean"],
            Mode.REPLACE,
            Check.SPLIT_LOST,
        ),
    ],
)
def test_what_fails(name, metrics, mode, expected):
    found = checks(report(*metrics), mode)
    assert [check for check, _ in found] == [expected]


def test_a_key_of_the_dashboards_own_listed_twice_is_no_merge():
    # found trying verify on generated dashboards: the duplicate was there before any migration
    assert checks(report("loss", "loss", "staleness/rollout/max"), Mode.REPLACE) == []


def test_an_expression_that_repeats_a_series_is_no_merge():
    spec = report(IN_QUEUE, "staleness/rollout/mean")
    panel = spec["blocks"][0]["metadata"]["panelBankSectionConfig"]["panels"][0]
    panel["config"]["expressions"] = ["${" + IN_QUEUE + "}/${staleness/rollout/mean}"]
    assert checks(spec, Mode.REPLACE) == []


@pytest.mark.parametrize(
    ("name", "now", "message"),
    [
        (
            "only the total",
            ["staleness/rollout/mean"],
            "no longer (it shows staleness/rollout/mean instead)",
        ),
        ("one of the pair dropped", [IN_FLIGHT], f"{IN_QUEUE} no longer"),
    ],
)
def test_against_a_baseline(name, now, message):
    before = baseline_panels(
        report("off_policy/in_flight/mean", "off_policy/in_queue/mean"), MIGRATION
    )
    found = checks(report(*now), Mode.REPLACE, baseline=before)
    assert len(found) == 1
    assert found[0][0] is Check.SPLIT_LOST
    assert found[0][1].endswith(message)


def test_a_baseline_in_old_names_matches_the_new_form_by_panel_id():
    before = baseline_panels(
        report("off_policy/in_flight/mean", "off_policy/in_queue/mean"), MIGRATION
    )
    assert checks(report(IN_FLIGHT, IN_QUEUE), Mode.REPLACE, baseline=before) == []
    other = report("staleness/rollout/mean", panel_id="p2")  # another panel: not compared
    assert checks(other, Mode.REPLACE, baseline=before) == []


def test_keys_nobody_logged_are_warnings_and_only_the_migrations_keys():
    history = History(frozenset({"loss", IN_FLIGHT}), 4, None, None, RunRef("r", "r", "2026-11-01"))
    found = checks(report(IN_FLIGHT, IN_QUEUE, "eval/never"), Mode.REPLACE, history=history)
    assert found == [
        (Check.UNLOGGED_KEY, f"no run has logged {IN_QUEUE} (its 4 runs): it shows nothing")
    ]


def test_alerts_that_watched_both_parts_and_now_watch_one_key():
    before = {"a1": ("off_policy/in_flight/mean",), "a2": ("off_policy/in_queue/mean",)}
    now = [
        verify_one(
            Source("in flight", "a1", json.dumps(alert("in flight", "staleness/rollout/mean"))),
            MIGRATION,
            Options(mode=Mode.REPLACE),
        ),
        verify_one(
            Source("in queue", "a2", json.dumps(alert("in queue", "staleness/rollout/mean"))),
            MIGRATION,
            Options(mode=Mode.REPLACE),
        ),
    ]
    (found,) = split_of_alerts(now, before, MIGRATION)
    assert found.check is Check.SPLIT_LOST
    assert found.message == (
        f"alerts that watched {IN_FLIGHT}, {IN_QUEUE} all watch staleness/rollout/mean now"
    )


def test_an_unreadable_object_is_an_error_not_a_finding():
    verified = verify_one(Source("x", "x.json", "{not json"), MIGRATION, Options())
    assert verified.error
    assert verified.findings == ()
