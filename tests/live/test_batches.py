"""The batch pipeline: the new text of each object to write is spliced, and the data-loss guard
run on it, once per object, once the run has begun (not while the project is planned, which
every write waits for), and an object either trips over fails alone, unwritten and not backed
up; a batch is read while the batch before is written, with never more than `--jobs` writes in
flight.
"""

from __future__ import annotations

import json
import re
import threading

from helpers import TARGET

import wbmigrate.guard
import wbmigrate.live.batches
import wbmigrate.rewrite
from wbmigrate.rewrite import SpecError


def journal(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "journal.jsonl").read_text().splitlines()]


def test_the_guard_runs_once_per_object_written_after_planning(run, live, monkeypatch, tmp_path):
    real = wbmigrate.guard.check_write
    calls: list[bool] = []  # per call: whether the run had begun (its backup folder made)

    def counting(original, edits, new_text):
        calls.append((tmp_path / "b" / "manifest.json").exists())
        return real(original, edits, new_text)

    monkeypatch.setattr(wbmigrate.guard, "check_write", counting)
    result = run("apply", TARGET, "--yes", "--backup-dir", "b")
    assert result.exit_code == 0, result.output
    assert "Summary: 10 applied." in result.stdout
    assert calls == [True] * 10
    assert len(live.mutations()) == 10


def test_a_bug_in_the_checks_fails_that_object_alone(run, live, monkeypatch, tmp_path):
    real = wbmigrate.guard.check_write
    report = live.state.find("Dispatcher legacy")
    spec = live.state.views[report]["spec"]

    def buggy(original, edits, new_text):
        if original == json.loads(spec):
            raise KeyError("a bug")
        return real(original, edits, new_text)

    monkeypatch.setattr(wbmigrate.guard, "check_write", buggy)
    result = run("apply", TARGET, "--yes", "--backup-dir", "b")
    assert result.exit_code == 1
    assert re.search(
        r'failed +report "Dispatcher legacy" +wbmigrate failed on it \(KeyError\); please '
        r"report it",
        result.stdout,
    )
    assert "Summary: 9 applied, 1 failed." in result.stdout
    assert live.state.views[report]["spec"] == spec  # not written
    assert report not in {e["id"] for e in journal(tmp_path / "b")}  # nor backed up


def test_the_new_text_is_spliced_once_per_object_written_after_planning(
    run, live, monkeypatch, tmp_path
):
    real = wbmigrate.rewrite.spliced
    calls: list[bool] = []  # per call: whether the run had begun (its backup folder made)

    def counting(text, edits, root=()):
        calls.append((tmp_path / "b" / "manifest.json").exists())
        return real(text, edits, root)

    monkeypatch.setattr(wbmigrate.rewrite, "spliced", counting)
    result = run("apply", TARGET, "--yes", "--backup-dir", "b")
    assert result.exit_code == 0, result.output
    assert "Summary: 10 applied." in result.stdout
    assert calls == [True] * 10


def test_a_splice_that_fails_fails_that_object_alone(run, live, monkeypatch, tmp_path):
    real = wbmigrate.rewrite.spliced
    report = live.state.find("Dispatcher legacy")
    spec = live.state.views[report]["spec"]

    def failing(text, edits, root=()):
        if text == spec:
            raise SpecError("spec nested too deeply to rewrite")
        return real(text, edits, root)

    monkeypatch.setattr(wbmigrate.rewrite, "spliced", failing)
    result = run("apply", TARGET, "--yes", "--backup-dir", "b")
    assert result.exit_code == 1
    assert re.search(
        r'failed +report "Dispatcher legacy" +spec nested too deeply to rewrite', result.stdout
    ), result.stdout
    assert "Summary: 9 applied, 1 failed." in result.stdout
    assert live.state.views[report]["spec"] == spec  # not written
    assert report not in {e["id"] for e in journal(tmp_path / "b")}  # nor backed up


def test_a_batch_is_read_while_the_batch_before_is_written(run, live, monkeypatch):
    """The server holds the first writes until a read arrives: a read that waited for them to
    be answered would never come (each write would give up waiting, and say so)."""
    a_read_came = threading.Event()
    held: list[bool] = []

    def reading(_variables):
        # A read sent after some write: one the server saw after a write, or the second
        # batch's read (of views or automations), sent just after the first batch's writes and
        # which may overtake them on the way (the first batch's read is answered before any
        # write). Counted from the server's log: the hook is called once per id of a read.
        batch_reads = sum("id0" in r.variables or "name0" in r.variables for r in live.requests)
        if live.mutations() or batch_reads >= 2:
            a_read_came.set()

    def holding(variables):
        held.append(a_read_came.wait(10))

    for operation in ("WbmigrateView", "WbmigrateTriggers"):
        live.hooks[operation] = reading
    for operation in ("WbmigrateUpsertView", "WbmigrateUpdateTrigger"):
        live.hooks[operation] = holding
    real, lock = wbmigrate.live.batches.write, threading.Lock()
    in_flight, most = [0], [0]

    def counting(*args):
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        try:
            return real(*args)
        finally:
            with lock:
                in_flight[0] -= 1

    monkeypatch.setattr(wbmigrate.live.batches, "write", counting)
    result = run("apply", TARGET, "--yes", "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert "Summary: 10 applied." in result.stdout
    assert held == [True] * 10  # the first batch's writes were answered after the next read
    assert most == [2]  # and no more writes in flight than asked
