"""What `apply` sends per object: a write, and a share of one read per batch.

A batch is as many objects as are written at once (`--jobs`): its views are read again in one
request (GraphQL aliases, the ids as variables), its automations by name in one request per
project (the entity's automations filtered by name, never a listing of them all per batch);
the read-back of a batch rides on the read of the batch after next (the last two batches' are
one request of their own); a server that refuses batched reads is read one view per request,
said once. Each object is planned once, and its backup costs one fsync of its file, the folder
and the journal being synced once per batch, always before the batch's writes leave. Each object
to write waits on disk with its plan until its turn: a run holds the batches in flight alone.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import stat
import tempfile
import weakref
from concurrent.futures import ThreadPoolExecutor
from itertools import chain

import pytest
from helpers import FIXTURES, TARGET

import wbmigrate.live.prepare
import wbmigrate.live.reader
from testserver import Fault, WandbServer, WandbState, replace_at
from wbmigrate.live.client import Client
from wbmigrate.live.objects import LiveObject
from wbmigrate.live.outcomes import Queued
from wbmigrate.live.reader import Reader

REPORT = json.dumps(json.loads((FIXTURES / "demo-project/reports/async-health.json").read_text()))
ALERT = json.loads((FIXTURES / "demo-project/automations/token-max.json").read_text())


@pytest.fixture
def made(tmp_path, monkeypatch):
    """A server holding `views` copies of a report and `alerts` copies of an alert, each
    needing the migration; the environment pointed at it, as the `live` fixture does."""
    servers = []

    def make(views: int, alerts: int = 0) -> WandbServer:
        state = WandbState()
        for n in range(views):
            state.add_view(REPORT, "runs", f"Report {n}")
        for _ in range(alerts):
            state.add_trigger(ALERT)
        server = WandbServer(state).__enter__()
        servers.append(server)
        (tmp_path / "home").mkdir(exist_ok=True)
        monkeypatch.setenv("WANDB_API_KEY", server.api_key)
        monkeypatch.setenv("WANDB_BASE_URL", server.url)
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        monkeypatch.chdir(tmp_path)
        return server

    yield make
    for server in servers:
        server.stop()


def ids(request) -> list[str]:
    """The views a read asks for: `id0`, `id1`, ... of a batched read, or `id`."""
    found = [v for k, v in request.variables.items() if re.fullmatch(r"id\d+", k)]
    return found or [request.variables["id"]]


def after_reading(server) -> list:
    """The requests after the project was read (its listings, the first automations listing),
    but the key census's and the view listings' (both may still run while the automations'
    answer arrives: the listings are read side by side)."""
    listings = [i for i, r in enumerate(server.requests) if r.operation == "WbmigrateTriggers"]
    reading = ("WbmigrateRuns", "WbmigrateRunKeys", "WbmigrateViews")
    return [r for r in server.requests[listings[0] + 1 :] if r.operation not in reading]


# --- batched reads ------------------------------------------------------------------------------


def test_a_batch_is_read_in_one_request_and_read_back_with_the_next(run, made):
    server = made(9)
    result = run("apply", TARGET, "--yes", "--jobs", "4")
    assert result.exit_code == 0, result.output
    assert "Summary: 9 applied." in result.stdout
    sent = after_reading(server)
    reads = [r for r in sent if r.operation == "WbmigrateView"]
    writes = [r for r in sent if r.operation == "WbmigrateUpsertView"]
    assert len(writes) == 9
    assert len(sent) == 9 + 4  # a write each, four reads in all
    # Batch 2's read goes out while batch 1 is written, so it cannot carry batch 1's read-back:
    # that rides on batch 3's read, and batches 2 and 3 are read back together at the end. The
    # same four reads, in other sizes: batch 1 fresh; batch 2 fresh; batch 3 (one view) +
    # batch 1 back; batches 2 and 3 back.
    # (batch 2's read may reach the server before batch 1's: both are out at once)
    assert sorted(len(ids(r)) for r in reads) == [4, 4, 5, 5]
    for request in reads:  # ids travel as variables, never in the query text
        query = json.loads(request.body)["query"]
        assert not any(view_id in query for view_id in ids(request))
    order = {id(r): i for i, r in enumerate(sent)}
    for write in writes:
        view_id = write.variables["input"]["id"]
        about = [order[id(r)] for r in reads if view_id in ids(r)]
        assert len(about) == 2  # read right before its write, then read back once
        assert about[0] < order[id(write)] < about[1]


def test_the_automations_of_a_batch_come_from_one_request(run, made):
    server = made(0, alerts=8)
    result = run("apply", TARGET, "--yes", "--jobs", "4")
    assert result.exit_code == 0, result.output
    assert "Summary: 8 applied." in result.stdout
    operations = [r.operation for r in after_reading(server)]
    # batch 1 fresh; batch 2 fresh; batches 1 and 2 back: 3 reads, not 2 per alert
    assert operations.count("WbmigrateTriggers") == 3
    assert operations.count("WbmigrateUpdateTrigger") == 8
    assert all(by_name(r) for r in after_reading(server) if r.operation == "WbmigrateTriggers")


def by_name(request) -> bool:
    """Whether a read of automations asked for them by name (not for the project's all)."""
    return "name0" in request.variables


def trigger_reads(server) -> list[str]:
    """How each read of automations after the project was read asked: by name, or listing."""
    found = [r for r in after_reading(server) if r.operation == "WbmigrateTriggers"]
    return ["name" if by_name(r) else "listing" for r in found]


def test_an_automation_renamed_since_planned_is_found_in_its_listing(run, made, tmp_path):
    """Not found by the name it was planned with: its project's listing shows it changed (not
    gone), and it is not written; the reads after stay by name."""
    server = made(0, alerts=8)
    renamed: list[str] = []

    def colleague_renames(variables):
        if "name0" in variables and not renamed:
            renamed.append(sorted(server.state.triggers)[1])
            server.state.edit(renamed[0], lambda t: t.update(name="renamed by a colleague"))

    server.hooks["WbmigrateTriggers"] = colleague_renames
    result = run("apply", TARGET, "--yes", "--jobs", "4", "--backup-dir", "b")
    assert result.exit_code == 1
    assert "Summary: 7 applied, 1 skipped." in result.stdout
    assert re.search(r'skipped +automation "token-max" +changed since', result.stdout)
    assert server.state.triggers[renamed[0]]["name"] == "renamed by a colleague"
    assert trigger_reads(server) == ["name", "listing", "name", "name"]


def test_a_server_refusing_reads_by_name_is_read_by_listing(run, made):
    """A server without `entity { triggers(filters:) }` (W&B before 0.83): one try."""
    server = made(0, alerts=8)

    def refuse(payload, variables):
        if "name0" in variables:
            return {"data": None, "errors": [{"message": 'Cannot query field "triggers"'}]}
        return payload

    server.faults.append(Fault(answer=refuse, operation="WbmigrateTriggers", sticky=True))
    result = run("apply", TARGET, "--yes", "--jobs", "4")
    assert result.exit_code == 0, result.output
    assert "Summary: 8 applied." in result.stdout
    assert trigger_reads(server) == ["name", "listing", "listing", "listing"]


def test_a_server_whose_name_filter_misses_is_read_by_listing_from_then_on(run, made):
    """An answer by name without an automation that still has that name: the filter is not
    to be trusted, and nothing is decided from it (the listing shows every one unchanged)."""
    server = made(0, alerts=8)

    def answer_none(payload, variables):
        if "name0" in variables:
            payload["data"]["entity"]["t0"]["edges"] = []
        return payload

    server.faults.append(Fault(answer=answer_none, operation="WbmigrateTriggers", sticky=True))
    result = run("apply", TARGET, "--yes", "--jobs", "4")
    assert result.exit_code == 0, result.output
    assert "Summary: 8 applied." in result.stdout
    assert trigger_reads(server) == ["name", "listing", "listing", "listing"]


def test_a_server_refusing_batched_reads_is_read_one_view_at_a_time(run, made):
    server = made(9)

    def refuse_batches(payload, variables):
        if "id0" in variables:
            return {"data": None, "errors": [{"message": "too many aliases"}]}
        return payload

    server.faults.append(Fault(answer=refuse_batches, operation="WbmigrateView", sticky=True))
    result = run("apply", TARGET, "--yes", "--jobs", "4")
    assert result.exit_code == 0, result.output
    assert "Summary: 9 applied." in result.stdout
    notes = [line for line in result.stderr.splitlines() if "one view per request" in line]
    assert notes == [
        "Note: W&B refused to read several views in one request (W&B answered with an "
        "error: too many aliases); reading one view per request from now on"
    ]
    reads = [r for r in after_reading(server) if r.operation == "WbmigrateView"]
    assert len(ids(reads[0])) == 4  # the one batched read tried
    assert all(list(r.variables) == ["id"] for r in reads[1:])
    assert len(reads) == 1 + 9 + 9  # then each view alone, before its write and after


def test_the_reader_falls_back_on_a_4xx_and_not_on_a_failure_of_the_moment(live):
    client = Client(live.url, live.api_key, retries=0)
    views = [
        LiveObject.of_view(v)
        for v in chain.from_iterable(client.view_pages("team", "async-rl", "runs"))
    ]
    notes: list[str] = []
    with ThreadPoolExecutor(4) as pool:
        reader = Reader(client, pool, notes.append)
        live.faults.append(Fault(status=500, operation="WbmigrateView"))
        failed = reader.read(views)  # a server error fails the batch's objects, and that is all
        assert set(failed.failed) == {v.id for v in views}
        assert reader.batched
        live.faults.append(Fault(status=400, operation="WbmigrateView"))
        fresh = reader.read(views)
    assert fresh.failed == {}
    assert not reader.batched
    assert {i: o.text for i, o in fresh.found.items() if o} == {v.id: v.text for v in views}
    assert len(notes) == 1
    assert "HTTP 400" in notes[0]


def test_an_answer_by_name_of_another_shape_is_read_from_the_listing(made):
    server = made(0, alerts=2)
    client = Client(server.url, server.api_key, retries=0)
    alerts = [
        LiveObject.of_trigger(t, "team", "async-rl") for t in client.triggers(*TARGET.split("/"))
    ]
    server.faults.append(replace_at(("data", "entity"), None, "WbmigrateTriggers"))
    with ThreadPoolExecutor(4) as pool:
        reader = Reader(client, pool)
        fresh = reader.read(alerts)
    assert fresh.failed == {}
    assert {i: o.text for i, o in fresh.found.items() if o} == {a.id: a.text for a in alerts}
    assert not reader.by_name


def test_a_batched_read_holds_a_bounded_size_of_specs(made, monkeypatch):
    server = made(5)
    client = Client(server.url, server.api_key)
    views = [
        LiveObject.of_view(v)
        for v in chain.from_iterable(client.view_pages("team", "async-rl", "runs"))
    ]
    monkeypatch.setattr(wbmigrate.live.reader, "BATCH_BYTES", 2 * len(REPORT))
    with ThreadPoolExecutor(4) as pool:
        fresh = Reader(client, pool).read(views)
    assert set(fresh.found) == {v.id for v in views}
    reads = [r for r in server.requests if r.operation == "WbmigrateView"]
    assert sorted(len(ids(r)) for r in reads) == [1, 2, 2]


def test_a_batch_whose_read_fails_is_not_written_and_the_others_go_on(run, made, tmp_path):
    server = made(9)
    server.faults.append(Fault(status=500, operation="WbmigrateView"))
    result = run("apply", TARGET, "--yes", "--jobs", "4", "--retries", "0", "--backup-dir", "b")
    assert result.exit_code == 1
    assert "Summary: 5 applied, 4 failed." in result.stdout
    events = [json.loads(line) for line in (tmp_path / "b/journal.jsonl").read_text().splitlines()]
    unread = {e["id"] for e in events if e.get("reason") == "could not be read again"}
    assert len(unread) == 4
    assert all(server.state.views[i]["spec"] == REPORT for i in unread)
    assert "Summary: 4 applied." in run("apply", TARGET, "--yes").stdout


# --- planned once -------------------------------------------------------------------------------


def test_each_object_is_planned_once(run, live, monkeypatch):
    real = wbmigrate.live.prepare.rewrite_of
    planned: list[str] = []

    def counting(text, migration, **kwargs):
        planned.append(kwargs["name"])
        return real(text, migration, **kwargs)

    monkeypatch.setattr(wbmigrate.live.prepare, "rewrite_of", counting)
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0, result.output
    assert "Summary: 10 applied." in result.stdout
    assert len(planned) == 11  # every object read, once; none planned again to be written


# --- what is made durable, and when -------------------------------------------------------------


@pytest.fixture
def fsyncs(monkeypatch):
    """Every fsync: the inode and size of what was synced, and whether it was a folder."""
    calls: list[tuple[int, int, bool]] = []
    real = os.fsync

    def recording(fd):
        real(fd)
        info = os.fstat(fd)
        calls.append((info.st_ino, info.st_size, stat.S_ISDIR(info.st_mode)))

    monkeypatch.setattr(os, "fsync", recording)
    return calls


def test_one_fsync_per_backup_file_and_one_of_folder_and_journal_per_batch(
    run, made, fsyncs, tmp_path
):
    made(9)
    result = run("apply", TARGET, "--yes", "--jobs", "4", "--backup-dir", "b")
    assert result.exit_code == 0, result.output
    folder = tmp_path / "b"
    files = [p.stat().st_ino for p in folder.glob("report-*.json")]
    synced = [ino for ino, _, _ in fsyncs]
    assert len(files) == 9
    assert all(synced.count(ino) == 1 for ino in files)
    assert synced.count(folder.stat().st_ino) == 3  # each batch's new files, once
    assert synced.count((folder / "journal.jsonl").stat().st_ino) == 3 + 1  # and at the end
    # before: three per object (its file, its backed-up line, its written line)
    assert 9 + 3 + 4 < 3 * 9


def test_every_write_leaves_after_its_backup_is_durable(run, made, fsyncs, tmp_path):
    """The crash-safety guarantee: when a write is sent, the backup file it would be undone
    from, that file's name in the folder, and the journal line with the digest of what is
    sent are all on disk."""
    server = made(9)
    folder, checked = tmp_path / "b", []

    def at_the_write(variables):
        lines = (folder / "journal.jsonl").read_bytes().splitlines(keepends=True)
        events = [json.loads(line) for line in lines]
        (n,) = [
            i
            for i, e in enumerate(events)
            if e["id"] == variables["input"]["id"] and e["event"] == "backed-up"
        ]
        end, backup_file = sum(map(len, lines[: n + 1])), folder / events[n]["file"]
        so_far = list(fsyncs)
        file_at = [i for i, (ino, _, _) in enumerate(so_far) if ino == backup_file.stat().st_ino]
        folder_after = [i for i, (_, _, is_dir) in enumerate(so_far[file_at[0] :]) if is_dir]
        journal = (folder / "journal.jsonl").stat().st_ino
        line_on_disk = any(ino == journal and size >= end for ino, size, _ in so_far)
        checked.append(len(file_at) == 1 and bool(folder_after) and line_on_disk)

    server.hooks["WbmigrateUpsertView"] = at_the_write
    result = run("apply", TARGET, "--yes", "--jobs", "4", "--backup-dir", "b")
    assert result.exit_code == 0, result.output
    assert checked == [True] * 9


def test_a_backup_that_cannot_be_made_durable_writes_nothing(run, made, monkeypatch, tmp_path):
    server = made(5)
    real = os.fsync

    def failing(fd):
        journal = tmp_path / "b" / "journal.jsonl"
        if journal.exists() and os.fstat(fd).st_ino == journal.stat().st_ino:
            raise OSError(5, "Input/output error")
        real(fd)

    monkeypatch.setattr(os, "fsync", failing)
    result = run("apply", TARGET, "--yes", "--jobs", "4", "--backup-dir", "b")
    assert result.exit_code == 1
    refused = re.findall(r"failed +report .*the backup cannot be made durable", result.stdout)
    assert len(refused) == 5
    assert [r for r in server.requests if r.operation == "WbmigrateUpsertView"] == []


# --- what is held in memory ---------------------------------------------------------------------


def test_a_run_holds_the_objects_of_the_batches_in_flight_only(run, made, monkeypatch):
    """Each object and its plan wait on disk from planning to their turn, and are let go once
    written and read back: however many objects, a run holds those of the batches in flight
    (of one object each here: the one read, the one written, the one read back)."""
    made(24)
    real, loaded, alive = Queued.load, [], []

    def load(self):
        obj, plan = real(self)
        alive.append(sum(ref() is not None for ref in loaded))
        loaded.append(weakref.ref(obj))
        return obj, plan

    monkeypatch.setattr(Queued, "load", load)
    result = run("apply", TARGET, "--yes", "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert "Summary: 24 applied." in result.stdout
    assert len(loaded) == 24
    assert max(alive) <= 4  # and one whose read's task a pool thread has not let go yet


def test_no_room_for_the_objects_to_write_is_one_line_and_nothing_written(
    run, made, monkeypatch, tmp_path
):
    server = made(3)

    class Full(io.BytesIO):
        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(tempfile, "TemporaryFile", lambda **_: Full())
    result = run("apply", TARGET, "--yes", "--backup-dir", "b")
    assert result.exit_code == 2
    assert re.fullmatch(
        r"Error: .+: cannot keep the objects to write there \(No space left on device\)\n",
        result.stderr.splitlines(keepends=True)[-1],
    )
    assert "Traceback" not in result.output
    assert not [r for r in server.requests if r.operation == "WbmigrateUpsertView"]
    assert not (tmp_path / "b").exists()
