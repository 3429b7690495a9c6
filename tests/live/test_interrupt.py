"""Ctrl-C (and a kill) during `apply` and `rollback`, on the real command in a process of its
own against the local W&B-compatible server, slowed down so a signal lands mid-batch.

A Ctrl-C starts no new object, lets the writes in flight finish (each with its backup and
journal lines), prints the table of what was done, how many objects were not started and (for
apply) the exact undo command, and exits 130. No object is ever half-written, and the backup
of an interrupted or killed run rolls back completely.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import (
    REPO,
    TARGET,
    expected_spec,
    hold_writes,
    interrupt,
    snapshot,
    until,
    wait_for_writes,
)

SENTINEL = "SENTINEL" + "i" * 40
LATENCY = 0.25  # seconds a request: an object costs three of them


@pytest.fixture
def slow(live, monkeypatch):
    """The live server, answering slowly, with a key that is easy to find."""
    live.api_key = SENTINEL
    monkeypatch.setenv("WANDB_API_KEY", SENTINEL)
    live.latency = LATENCY
    return live


def start(live, cwd: Path, *args: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "WANDB_API_KEY": live.api_key,
        "WANDB_BASE_URL": live.url,
        "PYTHONPATH": str(REPO),
        "HOME": str(cwd / "home"),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "wbmigrate", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def journal(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "journal.jsonl").read_text().splitlines()]


def assert_whole(live, before, migrated) -> None:
    """Every view is as it was or fully migrated; never in between."""
    for view_id, view in live.state.views.items():
        assert view["spec"] in (before[0][view_id], migrated[view_id]), view_id


def assert_restored(live, before) -> None:
    """Every view exactly as it was, every alert's written fields as they were."""
    views, triggers = snapshot(live)
    assert views == before[0]
    for trigger_id, trigger in triggers.items():
        now, then = json.loads(trigger), json.loads(before[1][trigger_id])
        fields = ("name", "description", "enabled", "triggeringCondition", "triggeredAction")
        assert {k: now[k] for k in fields} == {k: then[k] for k in fields}


def assert_clean(outputs: list[str], root: Path) -> None:
    for text in outputs:
        assert "Traceback" not in text
        assert "Aborted!" not in text
        assert SENTINEL not in text
    for path in root.rglob("*"):
        if path.is_file():
            assert SENTINEL.encode() not in path.read_bytes(), path


def test_ctrl_c_during_apply_finishes_the_writes_in_flight_and_says_how_to_undo(
    run, slow, tmp_path
):
    live = slow
    before = snapshot(live)
    migrated = {i: expected_spec(live, i) for i in live.state.views}
    gate = hold_writes(live)
    process = start(live, tmp_path, "apply", TARGET, "--yes", "--jobs", "2", "--backup-dir", "b")
    wait_for_writes(live, 1)
    said = interrupt(process)
    gate.set()
    code, out, err = finish(process)
    err = said + err
    assert code == 130, out + err
    sent = live.mutations()
    applied = re.findall(r"^  applied +(.+?)  ", out, re.MULTILINE)
    assert 1 <= len(applied) == len(sent) <= 4  # the writes in flight, and no new one
    assert f"Summary: {len(applied)} applied." in out
    assert f"Interrupted: {10 - len(applied)} objects not started." in out
    assert out.rstrip().endswith("Backups: b  (undo: wbmigrate rollback b --yes)")
    assert "Interrupted: no new object is started; waiting for the writes in flight" in err
    assert_whole(live, before, migrated)
    events = journal(tmp_path / "b")
    backed_up = {e["id"] for e in events if e["event"] == "backed-up"}
    written = {e["id"] for e in events if e["event"] == "written"}
    assert {r.variables["input"]["id"] for r in sent} == written == backed_up
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["journal"]["lines"] == len(
        events
    )
    live.latency = 0
    undo = run("rollback", "b", "--yes")
    assert undo.exit_code == 0, undo.output
    assert f"Summary: {len(applied)} restored." in undo.stdout
    assert_restored(live, before)
    assert_clean([out, err, undo.output], tmp_path)


def test_ctrl_c_during_apply_leaves_no_backup_file_the_journal_does_not_name(slow, tmp_path):
    """The next batch's files are written ahead while a batch is on the wire: when a Ctrl-C
    keeps that batch from starting, they are removed with it."""
    live = slow
    gate = hold_writes(live)
    process = start(live, tmp_path, "apply", TARGET, "--yes", "--jobs", "2", "--backup-dir", "b")
    wait_for_writes(live, 1)
    said = interrupt(process)
    gate.set()
    code, out, err = finish(process)
    err = said + err
    assert code == 130, out + err
    named = {e["file"] for e in journal(tmp_path / "b") if "file" in e}
    files = {p.name for p in (tmp_path / "b").iterdir()} - {"manifest.json", "journal.jsonl"}
    assert files == named
    assert len(named) == len(live.mutations()) < 10


def test_ctrl_c_during_rollback_stops_it_and_a_second_rollback_finishes(run, slow, tmp_path):
    live = slow
    live.latency = 0
    before = snapshot(live)
    assert run("apply", TARGET, "--yes", "--backup-dir", "b").exit_code == 0
    done = len(live.mutations())
    live.latency = LATENCY
    gate = hold_writes(live)
    process = start(live, tmp_path, "rollback", "b", "--yes", "--jobs", "2")
    wait_for_writes(live, done + 1)
    said = interrupt(process)
    gate.set()
    code, out, err = finish(process)
    err = said + err
    assert code == 130, out + err
    restored = len(re.findall(r"^  restored ", out, re.MULTILINE))
    assert 1 <= restored == len(live.mutations()) - done <= 4
    assert f"Interrupted: {10 - restored} objects not started." in out
    assert "wbmigrate rollback" not in out + err  # no undo hint for an undo
    live.latency = 0
    again = run("rollback", "b", "--yes")
    assert again.exit_code == 0, again.output
    assert len(re.findall(r"already as it was", again.stdout)) == restored
    assert_restored(live, before)
    assert_clean([out, err, again.output], tmp_path)


def test_ctrl_c_before_any_write_writes_nothing(slow, tmp_path):
    live = slow
    process = start(live, tmp_path, "apply", TARGET, "--yes", "--backup-dir", "b")
    until(lambda: live.requests, "nothing asked")
    process.send_signal(signal.SIGINT)
    code, out, err = finish(process)
    assert code == 130
    assert err.splitlines()[-1] == "Interrupted; nothing written."
    assert live.mutations() == []
    assert not (tmp_path / "b").exists()
    assert_clean([out, err], tmp_path)


def test_a_killed_apply_still_rolls_back_completely(run, slow, tmp_path):
    """kill -9 mid-batch: no summary, no closing line in the manifest, maybe a write whose
    confirmation never reached the journal; the backup still restores every object."""
    live = slow
    before = snapshot(live)
    migrated = {i: expected_spec(live, i) for i in live.state.views}
    process = start(live, tmp_path, "apply", TARGET, "--yes", "--jobs", "2", "--backup-dir", "b")
    wait_for_writes(live, 3)
    process.kill()
    process.communicate(timeout=60)
    assert live.idle()  # the writes in flight have landed
    assert_whole(live, before, migrated)
    assert "journal" not in json.loads((tmp_path / "b" / "manifest.json").read_text())
    live.latency = 0
    undo = run("rollback", "b", "--yes")
    assert undo.exit_code == 0, undo.output
    assert "Warning: the apply run did not finish" in undo.stderr
    assert_restored(live, before)
    assert_clean([undo.output], tmp_path)


def test_run_all_cancels_what_has_not_started_and_waits_for_what_has():
    """The library side of a Ctrl-C, in-process: SIGINT arrives in the main thread (here
    raised by the progress callback) when one task is done, two run and five wait."""
    import signal
    import threading

    from wbmigrate.live.objects import ObjectRef
    from wbmigrate.live.outcomes import Outcome, WriteStatus
    from wbmigrate.live.run import run_all

    release, started, finished = threading.Event(), [], []

    def task(n: int) -> Outcome:
        started.append(n)
        if n:  # in flight when the Ctrl-C comes, until the run says it stops
            released.append(release.wait(30))
        finished.append(n)
        return Outcome(ObjectRef("report", str(n), f"r{n}"), WriteStatus.APPLIED)

    def progress(outcome: Outcome) -> None:
        until(lambda: len(started) >= 3, "no next task taken")  # by the first worker
        signal.raise_signal(signal.SIGINT)

    def stopping() -> None:
        stops.append(len(started))
        release.set()

    stops: list[int] = []
    released: list[bool] = []
    batch = run_all(range(8), task, 2, progress, stopping)
    assert batch.interrupted
    assert stops == [3]
    assert released == [True, True]  # told before waiting for the two in flight
    assert sorted(finished) == sorted(started) == [0, 1, 2]
    assert [o.obj.id for o in batch.outcomes] == ["0", "1", "2"]
    assert batch.not_started == 5


def test_a_ctrl_c_while_writes_run_is_told_not_raised():
    """A Ctrl-C during a run sets an event the loop reads: raised as KeyboardInterrupt it
    could land between two lines (as the driver starts, in the loop's condition) and leave
    writes in flight unfollowed. Ctrl-C is an exception again once the run has ended."""
    from wbmigrate.live.run import on_ctrl_c

    pressed = threading.Event()
    with on_ctrl_c(lambda *_: pressed.set()):  # as `run` sets it
        signal.raise_signal(signal.SIGINT)
        assert pressed.is_set()
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)


def test_ctrl_cs_at_every_task_never_escape_the_run():
    """Every task sends SIGINT as it starts: the run ends interrupted, told once, and every
    task started has finished."""
    from wbmigrate.live.objects import ObjectRef
    from wbmigrate.live.outcomes import Outcome, WriteStatus
    from wbmigrate.live.run import run_all

    started, finished, stops = [], [], []

    def task(n: int) -> Outcome:
        started.append(n)
        os.kill(os.getpid(), signal.SIGINT)
        finished.append(n)
        return Outcome(ObjectRef("report", str(n), f"r{n}"), WriteStatus.APPLIED)

    batch = run_all(range(50), task, 4, None, lambda: stops.append(len(started)))
    assert batch.interrupted
    assert len(stops) == 1
    assert sorted(finished) == sorted(started)
    assert len(batch.outcomes) + batch.not_started == 50
