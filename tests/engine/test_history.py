"""The key census reduced to a project's history: its boundary, and the warnings a plan gives
where a rewrite shows a key no run has logged."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from wbmigrate import find_mapping
from wbmigrate.engine.annotate import project_boundary
from wbmigrate.engine.history import History, RunKeys, RunRef, history_of
from wbmigrate.engine.model import Mode, NoteKind, Options
from wbmigrate.mapping.parse import parse_mapping
from wbmigrate.plan_json import history_entry, history_of_entry, options_entry, options_of
from wbmigrate.rewrite import census_warnings, finish, rewrite, walk

MIGRATION = find_mapping("prime-rl").migration()
OLD = frozenset({"off_policy/mean", "off_policy/max", "loss"})
NEW = frozenset({"staleness/rollout/mean", "staleness/rollout/max", "loss"})


def run(name: str, day: int, keys: frozenset[str]) -> RunKeys:
    created = f"2026-11-{day:02d}T12:00:00Z"
    return RunKeys(
        RunRef(name, f"id-{name}", created, f"https://wandb.ai/t/p/runs/id-{name}"), keys
    )


def spanning_runs() -> list[RunKeys]:
    """Old-key runs, a gap that logs neither, a run that logs both, then new-key runs; given
    newest first, as W&B lists them."""
    runs = [
        run("old-1", 1, OLD),
        run("old-2", 3, OLD),
        run("gap", 5, frozenset({"loss"})),
        run("both", 7, OLD | NEW),
        run("new-1", 9, NEW),
        run("new-2", 11, NEW),
    ]
    return runs[::-1]


def test_the_boundary_is_the_last_old_run_and_the_first_new_one():
    history = history_of(spanning_runs(), MIGRATION, total=6)
    assert history.last_old is not None
    assert history.first_new is not None
    assert (history.last_old.name, history.first_new.name) == ("both", "both")
    assert history.upgraded
    assert not history.partial
    assert history.scope == "its 6 runs"


def test_a_gap_between_old_and_new_runs():
    runs = [r for r in spanning_runs() if r.run.name != "both"]
    history = history_of(runs, MIGRATION)
    assert history.last_old is not None
    assert history.first_new is not None
    assert (history.last_old.name, history.first_new.name) == ("old-2", "new-1")


def test_a_project_without_new_key_runs_has_not_upgraded():
    runs = [r for r in spanning_runs() if not r.keys & NEW - {"loss"}]
    history = history_of(runs, MIGRATION, total=900)
    assert not history.upgraded
    assert history.partial
    assert history.scope == "the 3 newest of its 900 runs"
    assert "has not upgraded yet" in project_boundary(history)
    assert "old-2" in project_boundary(history)


def test_spans_name_the_first_and_last_run_of_each_known_key():
    history = history_of(spanning_runs(), MIGRATION)
    span = history.spans["off_policy/mean"]
    assert (span.first.name, span.last.name) == ("old-1", "both")
    assert "loss" not in history.spans  # only the names the mapping knows


def test_the_history_survives_a_saved_plan():
    history = history_of(spanning_runs(), MIGRATION, total=6)
    back = history_of_entry(json.loads(json.dumps(history_entry(history))))
    assert back == history
    assert back.spans == history.spans
    options = Options(history=history)
    assert options_of(json.loads(json.dumps(options_entry(options)))) == options


@pytest.mark.parametrize(
    "damage",
    [
        {"runs": "6"},
        {"last_old": {"name": 1}},
        {"spans": "x"},
        {"keys": 5},
        {"steps": ["a"]},
        {"steps": [1, 2]},
    ],
)
def test_a_damaged_history_entry_is_refused(damage):
    entry = {**history_entry(history_of(spanning_runs(), MIGRATION)), **damage}
    with pytest.raises((KeyError, TypeError, ValueError)):
        history_of_entry(entry)


def test_a_run_name_cannot_forge_markdown_or_a_marker():
    evil = RunRef("x](https://evil.example) wbmigrate:prime-rl@9\nline", "r1", "2026-11-01", "u")
    text = project_boundary(History(frozenset(), 1, None, evil, None))
    assert "](https://evil" not in text
    assert "wbmigrate:prime" not in text
    assert "\n" not in text


# --- warnings -------------------------------------------------------------------------------


def report(*metrics: str) -> dict:
    block = {
        "type": "panel-grid",
        "metadata": {
            "panelBankSectionConfig": {
                "panels": [
                    {"viewType": "Run History Line Plot", "config": {"metrics": list(metrics)}}
                ]
            }
        },
    }
    return {"version": 5, "blocks": [block]}


def warnings(spec: dict, history: History | None, mode: Mode = Mode.DUAL) -> list[str]:
    options = Options(mode=mode, annotate=False, history=history)
    result = rewrite(spec, MIGRATION, kind="report", name="r", options=options)
    return [n.message for n in result.notes if n.kind is NoteKind.WARNING]


UPGRADE = RunRef("new-1", "id-new-1", "2026-11-09T12:00:00Z")


def census(*keys: str, upgraded: bool = True) -> History:
    """A census of three runs; `upgraded`: one of them logged a new key."""
    return History(frozenset(keys), 3, None, None, UPGRADE if upgraded else None)


def test_a_rewrite_to_a_key_nobody_logged_warns_the_panel_stays_blank():
    found = warnings(report("off_policy/token/masked"), census("off_policy/token/masked"))
    assert any("no run has logged staleness/token/masked" in m for m in found)


def test_no_warning_when_the_new_key_is_logged():
    keys = census("off_policy/token/masked", "staleness/token/masked")
    assert not any(
        "no run has logged" in m for m in warnings(report("off_policy/token/masked"), keys)
    )


def test_no_warning_without_a_census():
    assert not any("no run has logged" in m for m in warnings(report("off_policy/mean"), None))


def test_a_dual_companion_whose_old_key_nobody_logged_adds_nothing():
    found = warnings(report("off_policy/mean"), census("staleness/rollout/mean"))
    assert any(
        "no run has logged off_policy/mean either" in m and "--mode replace" in m for m in found
    )
    replaced = warnings(report("off_policy/mean"), census("staleness/rollout/mean"), Mode.REPLACE)
    assert not any("either" in m for m in replaced)


def test_an_alert_moved_to_a_key_nobody_logs_cannot_fire():
    condition = {
        "threshold_filter": {"name": "off_policy/mean", "agg": "MAX", "cmp": "$gt", "threshold": 4}
    }
    trigger = {
        "name": "stale",
        "enabled": True,
        "event": {
            "eventType": "RUN_METRIC",
            "filter": json.dumps({"run_metric_filter": condition}),
        },
        "action": {"title": "t", "message": "m"},
    }
    options = Options(history=census("off_policy/mean"))
    result = rewrite(trigger, MIGRATION, kind="automation", name="a", options=options)
    messages = [n.message for n in result.notes if n.kind is NoteKind.WARNING]
    assert any("the alert cannot fire" in m for m in messages)
    logged = replace(options, history=census("staleness/rollout/mean"))
    result = rewrite(trigger, MIGRATION, kind="automation", name="a", options=logged)
    assert not any("cannot fire" in n.message for n in result.notes)


def regex_report() -> dict:
    """A report with one line plot whose metrics are chosen by `off_policy/.*`."""
    panel = {
        "viewType": "Run History Line Plot",
        "config": {"useMetricRegex": True, "metricRegex": "off_policy/.*"},
    }
    grid = {"type": "panel-grid", "metadata": {"panelBankSectionConfig": {"panels": [panel]}}}
    return {"version": 5, "blocks": [grid]}


def test_the_census_sharpens_regex_analysis_as_project_keys_do():
    spec = regex_report()
    keys = frozenset({"off_policy/mean", "off_policy/custom"})
    by_census = rewrite(
        spec,
        MIGRATION,
        kind="report",
        name="r",
        options=Options(annotate=False, history=History(keys, 1)),
    )
    by_file = rewrite(
        spec, MIGRATION, kind="report", name="r", options=Options(annotate=False, project_keys=keys)
    )
    assert [c.new for c in by_census.changes] == [c.new for c in by_file.changes]
    assert [n.message for n in by_census.notes] == [n.message for n in by_file.notes]


def test_a_regex_walked_before_the_census_is_walked_again_once_it_is_there():
    spec = regex_report()
    # a logged key the short rewrite (`off_policy/.*|^staleness/`) would match too
    census = Options(history=History(frozenset({"off_policy/mean", "staleness/custom"}), 1))
    walked = walk(spec, MIGRATION, Options(), "report", "r")
    assert walked.record.met_regex
    finished = finish(walked, census)
    assert finished == rewrite(spec, MIGRATION, kind="report", name="r", options=census)
    without = rewrite(spec, MIGRATION, kind="report", name="r", options=Options())
    assert [c.new for c in finished.changes][:1] != [c.new for c in without.changes][:1]


def test_before_the_upgrade_dual_mode_does_not_warn_of_every_new_key():
    waiting = census("off_policy/token/masked", upgraded=False)
    assert not any(
        "no run has logged" in m for m in warnings(report("off_policy/token/masked"), waiting)
    )
    replaced = warnings(report("off_policy/token/masked"), waiting, Mode.REPLACE)
    assert any("no run has logged staleness/token/masked" in m for m in replaced)


@pytest.mark.parametrize("mode", list(Mode))
def test_the_census_warnings_are_a_pass_over_a_rewrite_made_without_the_census(mode):
    """A walk needs no census: the warnings added once it has come are those a rewrite made
    with it gives, in the same places among the other notes."""
    spec = report("off_policy/mean", "off_policy/token/masked", "off_policy/max")
    history = census("off_policy/mean", "staleness/rollout/max")
    options = Options(mode=mode, annotate=False)
    walked = rewrite(spec, MIGRATION, kind="report", name="r", options=options)
    with_census = replace(options, history=history)
    expected = rewrite(spec, MIGRATION, kind="report", name="r", options=with_census)
    assert census_warnings(walked, history).notes == expected.notes
    assert census_warnings(walked, None).notes == walked.notes
    assert len(expected.notes) > len(walked.notes)


def test_the_census_names_the_steps_its_runs_span():
    history = history_of(spanning_runs(), MIGRATION)
    assert history.steps == ("2026.10.25 (#4253)", "2026.10.25 (#4253)")
    older = [*spanning_runs(), run("older", 1, frozenset({"dispatcher/inflight_train"}))]
    assert history_of(older, MIGRATION).steps == ("2026.08.19 (#3285)", "2026.10.25 (#4253)")
    entry = history_entry(history_of(older, MIGRATION), keys=False)  # `plan --format json`
    assert entry["steps"] == ["2026.08.19 (#3285)", "2026.10.25 (#4253)"]


def test_the_steps_span_from_the_oldest_old_name_to_the_newest_new_name():
    """Runs that log #3285's new names and #4253's old ones ran a version between the two."""
    between = frozenset({"dispatcher/inflight/train", "off_policy/mean"})
    assert history_of([run("mid", 1, between)], MIGRATION).steps == (
        "2026.08.19 (#3285)",
        "2026.10.25 (#4253)",
    )
    only_new = frozenset({"dispatcher/inflight/train"})
    assert history_of([run("new", 1, only_new)], MIGRATION).steps == ("2026.08.19 (#3285)",) * 2
    assert history_of([run("none", 1, frozenset({"loss"}))], MIGRATION).steps is None


LIVE_AGAIN = """
format: 1
id: back
title: a key that comes back
sources: [https://example.com/x]
steps:
  - version: "1"
    date: 2026-01-01
    source: https://example.com/x/pull/1
    annotation: step 1
    metrics:
      renamed:
        reward/mean: reward/reward
        loss/a: loss/b
  - version: "2"
    date: 2026-01-02
    source: https://example.com/x/pull/2
    annotation: step 2
    metrics:
      renamed:
        reward/reward: reward/mean
      live_again: [reward/mean]
  - version: "3"
    date: 2026-01-03
    source: https://example.com/x/pull/3
    annotation: step 3
    metrics:
      renamed:
        loss/b: loss/c
"""


def test_a_name_logged_again_counts_as_the_new_name_of_its_step():
    migration = parse_mapping(LIVE_AGAIN, "back.yaml").migration()
    found = history_of([run("r", 1, frozenset({"reward/mean"}))], migration)
    assert found.steps == ("2 (#2)", "2 (#2)")


def test_a_name_that_comes_back_later_does_not_date_a_run_before_its_first_step():
    """reward/mean is an old name of step 1 and is logged again from step 2: a run logging it
    may be from after step 2, so it does not say the runs span step 1."""
    migration = parse_mapping(LIVE_AGAIN, "back.yaml").migration()
    found = history_of([run("r", 1, frozenset({"reward/mean", "loss/b"}))], migration)
    assert found.steps == ("2 (#2)", "3 (#3)")
    older = history_of([run("r", 1, frozenset({"loss/a"}))], migration)
    assert older.steps == ("1 (#1)", "1 (#1)")
