"""Faults during `apply`, injected into the local W&B-compatible server.

For each: no object is left half-migrated (every view is as it was or fully migrated, every
alert planned either in full or not at all), every object that changed has a backup of exactly
what it was, the exit code says what happened, and running `apply` again converges.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from helpers import MIGRATION, TARGET, snapshot

from testserver import Fault, WandbServer
from wbmigrate.rewrite import rewrite_text

PER_OBJECT = ("WbmigrateView", "WbmigrateUpsertView", "WbmigrateUpdateTrigger")


def planned_changes(run) -> dict[str, int]:
    plan = json.loads(run("plan", TARGET, "--format", "json").stdout)
    return {o["origin"]: len(o["changes"]) for o in plan["objects"]}


def migrated(spec: str, view_type: str) -> str:
    kind = "workspace" if view_type == "project-view" else "report"
    return rewrite_text(spec, MIGRATION, kind=kind)[1]


@pytest.fixture
def before(run, live):
    """The project as it was, and how many changes each object needed."""
    return snapshot(live), planned_changes(run)


def assert_whole(run, live, before) -> None:
    """Every object is as it was or fully migrated, never in between."""
    (views, _), changes = before
    for view_id, view in live.state.views.items():
        assert view["spec"] in (views[view_id], migrated(views[view_id], view["type"])), view_id
    for origin, count in planned_changes(run).items():
        assert count in (0, changes[origin]), origin


def assert_backed_up(folders: list[Path], live, before) -> None:
    """Every object that is no longer as it was has a backup of exactly what it was."""
    (views, triggers), _ = before
    backups = {}
    for folder in (f for f in folders if f.exists()):  # a run with nothing to do keeps none
        for line in (folder / "journal.jsonl").read_text().splitlines():
            event = json.loads(line)
            if event["event"] == "backed-up":
                backups.setdefault(event["id"], json.loads((folder / event["file"]).read_text()))
    for view_id, view in live.state.views.items():
        if view["spec"] != views[view_id]:
            assert backups[view_id]["view"]["spec"] == views[view_id]
    for trigger_id, trigger in live.state.triggers.items():
        if json.dumps(trigger, sort_keys=True) != triggers[trigger_id]:
            assert trigger_id in backups


def assert_converges(run, live, before, folders: list[Path]) -> None:
    rerun = run("apply", TARGET, "--yes", "--backup-dir", "rerun")
    assert rerun.exit_code == 0, rerun.output
    assert set(planned_changes(run).values()) == {0}
    assert run("apply", TARGET, "--yes").stdout == f"Nothing to migrate in {TARGET}.\n"
    assert_whole(run, live, before)
    assert_backed_up([*folders, Path("rerun")], live, before)


def test_a_429_storm_is_waited_out(run, live, clock, before):
    live.faults += [Fault(status=429, headers={"Retry-After": "1"})] * 10
    result = run("apply", TARGET, "--yes", "--retries", "20", "--backup-dir", "b1")
    assert clock.waits == [1] * 10  # each waited as asked
    assert result.exit_code == 0, result.output
    assert live.faults == []
    assert "Summary: 10 applied." in result.stdout
    assert_whole(run, live, before)
    assert_converges(run, live, before, [Path("b1")])


def test_a_429_storm_longer_than_the_retries_fails_objects_not_the_run(run, live, before):
    live.faults += [Fault(status=429, headers={"Retry-After": "0"}, operation="WbmigrateView")] * 12
    result = run("apply", TARGET, "--yes", "--jobs", "1", "--retries", "2", "--backup-dir", "b1")
    assert result.exit_code == 1
    assert re.search(r"failed +.*HTTP 429", result.stdout)
    assert_whole(run, live, before)
    assert_backed_up([Path("b1")], live, before)
    assert_converges(run, live, before, [Path("b1")])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_5xx_and_connection_resets(run, live, before, seed):
    rng = random.Random(seed)

    def chaos(operation: str) -> Fault | None:
        # the writes and the reads around them (faults while listing: see test_live)
        if operation not in PER_OBJECT or rng.random() > 0.3:
            return None
        if rng.random() < 0.5:
            return Fault(drop=True)
        return Fault(status=rng.choice([500, 502, 503, 504]))

    live.chaos = chaos
    result = run("apply", TARGET, "--yes", "--retries", "1", "--backup-dir", "b1")
    assert result.exit_code in (0, 1)
    summary = result.stdout.splitlines()[-2]
    assert ("failed" in summary) == (result.exit_code == 1), result.stdout
    live.chaos = None
    assert_whole(run, live, before)
    assert_backed_up([Path("b1")], live, before)
    assert_converges(run, live, before, [Path("b1")])


def test_an_answer_slower_than_the_timeout(run, live, before, clock):
    """The write may land after wbmigrate gave up on it: the object is then reported as
    failed or found applied, never half-written, and the next run finds nothing to redo."""
    clock.timers = 0.25  # the 1 s timeout cuts each try after 0.25 s on the wall clock
    live.faults.append(Fault(delay=0.6, operation="WbmigrateUpsertView"))
    result = run("apply", TARGET, "--yes", "--timeout", "1", "--retries", "0", "--backup-dir", "b1")
    assert result.exit_code == 1
    assert re.search(r"failed +.*(timed out|Read timed out)", result.stdout), result.stdout
    assert "Summary: 9 applied, 1 failed." in result.stdout
    assert live.idle()  # the late write has been served
    assert_whole(run, live, before)
    assert_backed_up([Path("b1")], live, before)
    assert_converges(run, live, before, [Path("b1")])


def test_the_server_dying_mid_apply(run, live, before, monkeypatch):
    upserts = []

    def die_on_the_third(variables: dict) -> None:
        upserts.append(variables)
        if len(upserts) == 3:
            live.faults.append(Fault(die=True))

    live.hooks["WbmigrateUpsertView"] = die_on_the_third
    result = run("apply", TARGET, "--yes", "--jobs", "1", "--retries", "1", "--backup-dir", "b1")
    assert result.exit_code == 1
    assert re.search(r"failed +.*(cannot reach|still failing)", result.stdout), result.stdout
    applied = int(re.search(r"Summary: (\d+) applied", result.stdout)[1])
    assert 1 <= applied <= 3
    # the server comes back (same data, another port)
    live.hooks.clear()
    with WandbServer(live.state, api_key=live.api_key) as back:
        monkeypatch.setenv("WANDB_BASE_URL", back.url)
        assert_whole(run, live, before)
        assert_backed_up([Path("b1")], live, before)
        assert_converges(run, live, before, [Path("b1")])


def test_an_object_deleted_between_plan_and_apply(run, live, before):
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    gone = live.state.find("Token masking")
    with live.state.lock:
        del live.state.views[gone]
    result = run("apply", TARGET, "--plan", "plan.json", "--yes", "--backup-dir", "b1")
    assert result.exit_code == 1
    assert re.search(r'failed +report "Token masking" +no longer exists', result.stdout)
    assert "Summary: 9 applied, 1 failed." in result.stdout
    (views, triggers), changes = before
    trimmed = (({k: v for k, v in views.items() if k != gone}, triggers), changes)
    assert_whole(run, live, trimmed)
    assert_converges(run, live, trimmed, [Path("b1")])


def test_an_unplanned_loss_is_never_written(run, live, before, monkeypatch):
    """A bug that would drop a panel (simulated) trips the data-loss guard for that object."""
    import dataclasses

    import wbmigrate.live.prepare
    from wbmigrate.edit.edits import Set

    real = wbmigrate.live.prepare.rewrite_of

    def losing(text, migration, **kwargs):
        result = real(text, migration, **kwargs)
        if kwargs.get("name") != "Dispatcher legacy":
            return result
        spec = json.loads(text)
        grid = next(i for i, b in enumerate(spec["blocks"]) if b.get("type") == "panel-grid")
        path = ("blocks", grid, "metadata", "panelBankSectionConfig", "panels")
        return dataclasses.replace(result, edits=(Set(path, []),))  # the bug: the grid emptied

    monkeypatch.setattr(wbmigrate.live.prepare, "rewrite_of", losing)
    result = run("apply", TARGET, "--yes", "--backup-dir", "b1")
    assert result.exit_code == 1
    assert re.search(
        r'failed +report "Dispatcher legacy" +data-loss guard: the new spec would lose '
        r"\d+ panels",
        result.stdout,
    ), result.stdout
    (views, _), _ = before
    report = live.state.find("Dispatcher legacy")
    assert live.state.views[report]["spec"] == views[report]  # not written
    monkeypatch.setattr(wbmigrate.live.prepare, "rewrite_of", real)
    assert_converges(run, live, before, [Path("b1")])
