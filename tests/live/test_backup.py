"""Backups of an apply run: private files, a manifest, a journal with chained checksums, and
reading them back: every check a tampered or broken backup fails, in one line."""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import os
import re
import stat
from pathlib import Path

import pytest
from helpers import FIXTURES, TARGET, returns_soon, snapshot, writes

from wbmigrate import __version__, find_mapping
from wbmigrate.live.backup import (
    FORMAT,
    JOURNAL,
    MANIFEST,
    MEMBER,
    Backup,
    BackupError,
    chained,
    digest,
    file_stem,
    genesis,
    safe_name,
)
from wbmigrate.live.baseline import load_baseline
from wbmigrate.live.client import View
from wbmigrate.live.objects import LiveObject
from wbmigrate.live.restore import load_backup, load_backups

TRIGGER = json.loads((FIXTURES / "demo-project" / "automations" / "token-max.json").read_text())
INFO = {"target": "team/async-rl", "mapping": {"id": "prime-rl"}, "mode": "dual"}


def view(view_id: str, title: str, type_: str = "runs", spec: str = '{"blocks":[]}') -> LiveObject:
    node = {"id": view_id, "name": "n", "type": type_, "displayName": title, "spec": spec}
    node |= {"updatedAt": "2026-11-01T00:00:00Z", "parentId": "P1" if "draft" in type_ else None}
    return LiveObject.of_view(View.from_node(node, "team", "async-rl"))


AUTOMATION = LiveObject.of_trigger(TRIGGER, "team", "async-rl")
REPORT, DRAFT = view("V1", "Zeta report"), view("V2", "Alpha", "runs/draft")
WORKSPACE, SECOND = view("V3", "Overview", "project-view"), view("V4", "Beta report")


def mode_of(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def journal(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / JOURNAL).read_text().splitlines()]


def name_of(obj: LiveObject) -> str:
    return f"{file_stem(obj.kind, obj.id)}.json"


def write_journal(folder, events: list[dict]) -> None:
    (folder / JOURNAL).write_text("".join(json.dumps(e) + "\n" for e in events))


@pytest.fixture
def folder(tmp_path):
    """A backup of five objects: all backed up, the report, draft and automation written; the
    run over (its manifest closed)."""
    backup = Backup(tmp_path / "backup", INFO)
    for obj in (AUTOMATION, WORKSPACE, DRAFT, SECOND, REPORT):
        backup.record(backup.keep(obj, obj.text.replace("blocks", "blocks2")))
    for obj in (REPORT, AUTOMATION, DRAFT):
        backup.written(obj)
    backup.close()
    return backup.folder


def test_the_folder_and_its_files_are_private(tmp_path):
    backup = Backup(tmp_path / "parent" / "run", INFO)
    backup.record(backup.keep(REPORT, "{}"))
    assert mode_of(backup.folder) == 0o700
    files = sorted(backup.folder.iterdir())
    assert [f.name for f in files] == [JOURNAL, MANIFEST, name_of(REPORT)]
    assert {f.name: mode_of(f) for f in files} == {f.name: 0o600 for f in files}


def test_an_existing_empty_folder_is_used_and_made_private(tmp_path):
    (tmp_path / "run").mkdir(mode=0o755)
    backup = Backup(tmp_path / "run", INFO)
    assert mode_of(backup.folder) == 0o700


def test_a_folder_holding_files_is_refused(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "notes.txt").write_text("mine")
    with pytest.raises(BackupError, match="exists and is not empty"):
        Backup(tmp_path / "run", INFO)
    assert [p.name for p in (tmp_path / "run").iterdir()] == ["notes.txt"]


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("file/run", r"file/run: cannot make a folder under .*/file, a file"),
        ("file", r"file: a file is in the way, not a folder"),
    ],
    ids=["under-a-file", "a-file"],
)
def test_a_folder_that_cannot_be_made_is_one_line(tmp_path, where, message):
    (tmp_path / "file").write_text("mine")
    with pytest.raises(BackupError, match=message) as error:
        Backup(tmp_path / where, INFO)
    assert "\n" not in str(error.value)
    assert (tmp_path / "file").read_text() == "mine"


def test_the_manifest_says_what_was_migrated_how_and_closes_with_the_journal(tmp_path):
    backup = Backup(tmp_path / "run", INFO)
    manifest = json.loads((backup.folder / MANIFEST).read_text())
    assert manifest == {
        "format": FORMAT,
        "wbmigrate": __version__,
        "created": manifest["created"],
        **INFO,
    }
    assert dt.datetime.fromisoformat(manifest["created"]).tzinfo is not None
    assert (backup.folder / JOURNAL).read_text() == ""
    backup.record(backup.keep(REPORT, "{}"))
    backup.close()
    closed = json.loads((backup.folder / MANIFEST).read_text())
    (line,) = journal(backup.folder)
    assert closed == {**manifest, "journal": {"lines": 1, "checksum": line["checksum"]}}


def test_the_journal_gets_a_line_per_event_each_chained_to_the_last(tmp_path):
    backup = Backup(tmp_path / "run", INFO)
    backup.record(backup.keep(REPORT, '{"sent": 1}'))
    (first,) = journal(backup.folder)
    file_sha256 = hashlib.sha256((backup.folder / name_of(REPORT)).read_bytes()).hexdigest()
    assert first == {
        "event": "backed-up",
        "file": name_of(REPORT),
        "kind": "report",
        "id": "V1",
        "file_sha256": file_sha256,
        "title": "Zeta report",
        "sending_sha256": digest(REPORT, '{"sent": 1}'),
        "checksum": first["checksum"],
    }
    backup.record(backup.keep(AUTOMATION, AUTOMATION.text))
    backup.written(REPORT)
    backup.not_written(AUTOMATION, "changed")
    events = journal(backup.folder)
    assert [(e["event"], e["id"]) for e in events] == [
        ("backed-up", "V1"),
        ("backed-up", TRIGGER["id"]),
        ("written", "V1"),
        ("not-written", TRIGGER["id"]),
    ]
    assert events[1]["file"] == name_of(AUTOMATION)
    previous = genesis(json.loads((backup.folder / MANIFEST).read_text()))
    for event in events:
        given = event.pop("checksum")
        previous = chained(previous, event)
        assert given == previous


def test_the_backup_file_holds_the_object_as_fetched(folder):
    stored = json.loads((folder / name_of(REPORT)).read_text())
    assert stored == {"kind": "report", "id": "V1", "entity": "team", "project": "async-rl"} | {
        "view": REPORT.view.node()
    }
    stored = json.loads((folder / name_of(AUTOMATION)).read_text())
    assert stored["trigger"] == TRIGGER


@pytest.mark.parametrize(
    "ids",
    [("id+1", "id/1", "id_1", "ID+1"), ("x" * 70 + "a", "x" * 70 + "b"), ("é", "è", "\ud800")],
    ids=["clean-alike", "long-shared-prefix", "non-ascii"],
)
def test_file_names_are_apart_for_every_id_and_short(tmp_path, ids):
    names = [f"{file_stem('report', i)}.json" for i in ids]
    assert len({n.casefold() for n in names}) == len(ids)
    assert all(MEMBER.fullmatch(n) and len(n) <= 80 for n in names)
    backup = Backup(tmp_path / "run", INFO)
    for object_id in ids:
        backup.record(backup.keep(view(object_id, object_id), "{}"))
    backup.close()
    assert {r.original.id for r in load_backup(backup.folder).items} == set(ids)


def test_load_backup_reads_back_every_object_in_a_stable_order(folder):
    loaded = load_backup(folder)
    assert loaded.manifest == json.loads((folder / MANIFEST).read_text())
    assert loaded.notes == ()
    restorables = loaded.items
    assert [r.original for r in restorables] == [SECOND, REPORT, DRAFT, WORKSPACE, AUTOMATION]
    sent = {obj.id: digest(obj, obj.text.replace("blocks", "blocks2")) for obj in (REPORT, DRAFT)}
    assert {r.original.id: r.sent_sha256 for r in restorables if r.original.view} == {
        **sent,
        "V3": digest(WORKSPACE, WORKSPACE.text.replace("blocks", "blocks2")),
        "V4": digest(SECOND, SECOND.text.replace("blocks", "blocks2")),
    }
    assert {r.original.id: r.confirmed for r in restorables} == {
        "V4": False,
        "V1": True,
        "V2": True,
        "V3": False,
        TRIGGER["id"]: True,
    }


def test_an_object_not_written_after_all_is_left_alone_and_a_conflict_keeps_both(tmp_path):
    backup = Backup(tmp_path / "run", INFO)
    backup.record(backup.keep(REPORT, "{}"))
    backup.record(backup.keep(SECOND, "{}"))
    backup.not_written(REPORT, "changed")
    theirs = view("V4", "Beta report", spec='{"blocks":["theirs"]}')
    backup.conflict(SECOND, theirs)
    backup.close()
    items = {r.original.id: r for r in load_backup(backup.folder).items}
    assert items["V1"].sent_sha256 is None
    assert items["V4"].theirs_sha256 == digest(theirs)
    assert items["V4"].original == SECOND
    (conflict,) = [e for e in journal(backup.folder) if e["event"] == "conflict"]
    assert conflict["file"] == f"{file_stem('report', 'V4')}.theirs.json"
    assert json.loads((backup.folder / conflict["file"]).read_text())["view"] == theirs.view.node()


def test_a_file_kept_ahead_counts_only_once_journaled_and_is_removed_if_never(tmp_path):
    """apply writes a batch's files while the batch before waits: one whose turn never comes
    (a Ctrl-C) is removed, and a stray one left behind is never read by rollback."""
    backup = Backup(tmp_path / "run", INFO)
    used, dropped, stray = (backup.keep(obj, "{}") for obj in (REPORT, SECOND, DRAFT))
    assert all((backup.folder / kept["file"]).exists() for kept in (used, dropped, stray))
    backup.record(used)
    backup.discard(dropped)
    backup.close()
    assert not (backup.folder / dropped["file"]).exists()
    assert [e["id"] for e in journal(backup.folder)] == ["V1"]
    assert [r.original.id for r in load_backup(backup.folder).items] == ["V1"]


def unfinished(folder):
    """The backup as a run killed before its end leaves it: no closing line in the manifest."""
    manifest = json.loads((folder / MANIFEST).read_text())
    del manifest["journal"]
    (folder / MANIFEST).write_text(json.dumps(manifest))
    return folder


def test_a_journal_cut_short_on_its_last_line_is_tolerated_for_a_run_that_did_not_finish(folder):
    expected = load_backup(unfinished(folder))
    assert expected.notes == ("the apply run did not finish; restoring what its journal records",)
    with (folder / JOURNAL).open("a") as out:
        out.write('{"event": "backed-up", "file": "report-V9.js')
    assert load_backup(folder) == expected


def test_a_journal_cut_inside_a_character_is_tolerated(folder):
    expected = load_backup(unfinished(folder))
    with (folder / JOURNAL).open("ab") as out:
        out.write('{"event": "backed-up", "title": "Ü'.encode()[:-1])
    assert load_backup(folder) == expected


def test_a_bad_line_in_the_middle_of_the_journal_is_an_error(folder):
    lines = (folder / JOURNAL).read_text().splitlines(keepends=True)
    lines.insert(2, '{"event": "backed-up", "file": \n')
    (folder / JOURNAL).write_text("".join(lines))
    with pytest.raises(BackupError, match=r"journal\.jsonl:3: not a journal line"):
        load_backup(folder)


def drop_line(number: int):
    def tamper(folder):
        lines = (folder / JOURNAL).read_text().splitlines(keepends=True)
        del lines[number]
        (folder / JOURNAL).write_text("".join(lines))

    return tamper


def edit_json(name: str, change):
    def tamper(folder):
        path = folder / (name if name in (MANIFEST, JOURNAL) else name_of(REPORT))
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data, indent=2))

    return tamper


def edit_journal(folder):
    events = journal(folder)
    events[0]["sending_sha256"] = "0" * 64
    write_journal(folder, events)


TAMPERED = {
    "entity-edited": (
        edit_json("file", lambda d: d.update(entity="other")),
        r"report-V1-\w+\.json: an object of other/async-rl, but the backup is of team/async-rl",
    ),
    "id-edited": (
        edit_json("file", lambda d: (d.update(id="V9"), d["view"].update(id="V9"))),
        r"report-V1-\w+\.json: holds report V9, not the one journaled",
    ),
    "spec-edited": (
        edit_json("file", lambda d: d["view"].update(spec='{"blocks":["mine"]}')),
        r"report-V1-\w+\.json: changed since it was backed up \(checksum mismatch\)",
    ),
    "middle-line-deleted": (
        drop_line(2),
        r"journal\.jsonl:3: checksum mismatch \(lines edited or deleted\)",
    ),
    "first-line-deleted": (
        drop_line(0),
        r"journal\.jsonl:1: checksum mismatch \(lines edited or deleted\)",
    ),
    "last-line-deleted": (drop_line(-1), r"journal\.jsonl: 7 lines, but the run wrote 8"),
    "line-edited": (edit_journal, r"journal\.jsonl:1: checksum mismatch"),
    "target-edited": (
        edit_json(MANIFEST, lambda d: d.update(target="other/async-rl")),
        r"journal\.jsonl:1: checksum mismatch",
    ),
    # One character of the manifest once turned every check off, with only a warning.
    "relabelled-format-2": (
        edit_json(MANIFEST, lambda d: d.update(format="wbmigrate-backup/2")),
        r"journal\.jsonl:1: checksummed, but manifest\.json says wbmigrate-backup/2",
    ),
    "relabelled-format-1": (
        edit_json(MANIFEST, lambda d: d.update(format="wbmigrate-backup/1")),
        r"journal\.jsonl:1: checksummed, but manifest\.json says wbmigrate-backup/1",
    ),
    "file-missing": (
        lambda folder: (folder / name_of(REPORT)).unlink(),
        r"report-V1-\w+\.json: missing from the backup",
    ),
}


@pytest.mark.parametrize(("tamper", "message"), list(TAMPERED.values()), ids=list(TAMPERED))
def test_a_tampered_backup_is_refused_in_one_line(folder, tamper, message):
    tamper(folder)
    with pytest.raises(BackupError, match=message) as error:
        load_backup(folder)
    assert "\n" not in str(error.value)


def as_format_2(folder):
    """The backup as wbmigrate wrote it before checksums: format /2, a journal without them."""
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["format"] = "wbmigrate-backup/2"
    manifest.pop("journal", None)
    (folder / MANIFEST).write_text(json.dumps(manifest))
    events = journal(folder)
    for event in events:
        event.pop("checksum")
        event.pop("file_sha256", None)
    write_journal(folder, events)
    return folder


def test_a_format_2_backup_still_loads_and_is_said_to_be_unverified(folder):
    expected = load_backup(folder)
    loaded = load_backup(as_format_2(folder))
    assert loaded.items == expected.items
    assert loaded.notes == ("wbmigrate-backup/2 keeps no checksums: unverified",)


def test_a_format_2_backup_of_an_object_of_another_project_is_refused(folder):
    edit_json("file", lambda d: d.update(project="elsewhere"))(as_format_2(folder))
    with pytest.raises(BackupError, match="an object of team/elsewhere, but the backup is of"):
        load_backup(folder)


@pytest.mark.parametrize(
    ("name", "key", "value"),
    [
        (MANIFEST, "target", "team/async-rl\nError: forged"),
        (MANIFEST, "base_url", "http://127.0.0.1:1\nError: forged"),
        ("file", "project", "a\nError: x"),
    ],
    ids=["target", "host", "object"],
)
def test_a_name_that_could_forge_a_line_is_refused(folder, name, key, value):
    """A format /2 backup is read unchecked: such a name reached an error line whole (the
    host: `rollback`'s "the backup is from ...")."""
    edit_json(name, lambda d: d.update({key: value}))(as_format_2(folder))
    with pytest.raises(BackupError, match=r"not a wbmigrate backup|not a backup of one") as error:
        load_backup(folder)
    assert "\n" not in str(error.value)


def test_a_format_2_backup_with_a_long_id_is_read_back(tmp_path):
    """Format /2 named files `kind-<id cleaned, cut at 80>.json`, then cut the name itself at
    80 when reading: a 70-character id lost its `.json` and the whole backup was unreadable."""
    long_id = "V" * 70
    backup = Backup(tmp_path / "run", INFO)
    backup.record(backup.keep(view(long_id, "Long"), "{}"))
    folder = as_format_2(tmp_path / "run")
    old_name = f"report-{safe_name(long_id)}.json"
    (folder / name_of(view(long_id, "Long"))).rename(folder / old_name)
    events = journal(folder)
    events[0]["file"] = old_name
    write_journal(folder, events)
    assert [r.original.id for r in load_backup(folder).items] == [long_id]


@pytest.mark.parametrize(
    "change",
    [lambda e: e.pop("sending_sha256"), lambda e: e.pop("event"), lambda e: e.update(file=7)],
    ids=["no-digest", "no-event", "file-not-text"],
)
def test_a_journal_of_the_wrong_shape_is_one_line(folder, change):
    as_format_2(folder)  # no checksums to catch it first
    events = journal(folder)
    change(events[0])
    write_journal(folder, events)
    with pytest.raises(BackupError, match=r"damaged backup|cannot be a backup") as error:
        load_backup(folder)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    "name", ["../outside.json", "/etc/passwd", ".hidden.json", "report-V1"], ids=str
)
def test_a_journal_naming_a_file_outside_the_folder_is_refused(folder, name):
    as_format_2(folder)
    events = journal(folder)
    events[0]["file"] = name
    write_journal(folder, events)
    with pytest.raises(BackupError, match="names a file that cannot be a backup"):
        load_backup(folder)


@pytest.mark.parametrize(
    "manifest",
    ['{"format": "wbmigrate-backup/9"}', '{"target": "team/async-rl"}', "[]", "{not json", None],
    ids=["unknown-format", "no-format", "not-an-object", "not-json", "missing"],
)
def test_a_folder_without_a_known_manifest_is_refused(folder, manifest):
    if manifest is None:
        (folder / MANIFEST).unlink()
    else:
        (folder / MANIFEST).write_text(manifest)
    with pytest.raises(BackupError, match="not a wbmigrate backup") as error:
        load_backup(folder)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (MANIFEST, r"not a wbmigrate backup \(manifest\.json is not JSON\)"),
        (JOURNAL, r"journal\.jsonl:2: not a journal line"),
        ("file", r"report-V1-\w+\.json: not a backup of one object"),
    ],
    ids=["manifest", "journal-line", "object-file"],
)
def test_json_nested_deeper_than_python_reads_is_one_line(folder, name, message):
    """`json` raises RecursionError, not ValueError, on such a file: it was a traceback."""
    path = folder / (name if name in (MANIFEST, JOURNAL) else name_of(REPORT))
    lines = path.read_text().splitlines(keepends=True)
    deep = "[" * 100_000 + "\n"
    path.write_text("".join([*lines[:1], deep, *lines[1:]]) if name == JOURNAL else deep)
    with pytest.raises(BackupError, match=message) as error:
        load_backups(folder)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir(), "an empty folder, not a wbmigrate backup"),
        (lambda p: None, "no such folder"),
        (lambda p: p.write_text("x"), "not a folder"),
    ],
    ids=["empty", "missing", "a-file"],
)
def test_a_backup_folder_that_is_not_one_is_refused(tmp_path, make, message):
    make(tmp_path / "b")
    with pytest.raises(BackupError, match=message):
        load_backup(tmp_path / "b")


def edited(path: tuple[str, ...], value) -> str:
    """The trigger's JSON with the field at `path` set to `value`."""
    trigger = copy.deepcopy(TRIGGER)
    *parents, key = path
    target = trigger
    for part in parents:
        target = target[part]
    target[key] = value
    return json.dumps(trigger)


UNWRITTEN = {
    "updatedAt": (("updatedAt",), "2030-01-01T00:00:00Z"),
    "createdAt": (("createdAt",), "2020-01-01T00:00:00Z"),
    "scope-name": (("scope", "name"), "renamed-project"),
    "channel-name": (("action", "integration", "channelName"), "#elsewhere"),
    "event-typename": (("event", "__typename"), "Other"),
}
WRITTEN = {
    "name": (("name",), "other"),
    "description": (("description",), "other"),
    "enabled": (("enabled",), False),
    "filter": (("event", "filter"), "{}"),
    "event-type": (("event", "eventType"), "RUN_METRIC_ZSCORE"),
    "title": (("action", "title"), "other"),
    "severity": (("action", "severity"), "ERROR"),
    "integration": (("action", "integration", "id"), "other"),
    "scope-id": (("scope", "id"), "other"),
}


@pytest.mark.parametrize(("path", "value"), list(UNWRITTEN.values()), ids=list(UNWRITTEN))
def test_a_trigger_digest_ignores_fields_wbmigrate_does_not_write(path, value):
    assert digest(AUTOMATION, edited(path, value)) == digest(AUTOMATION)


@pytest.mark.parametrize(("path", "value"), list(WRITTEN.values()), ids=list(WRITTEN))
def test_a_trigger_digest_changes_with_every_written_field(path, value):
    assert digest(AUTOMATION, edited(path, value)) != digest(AUTOMATION)


def test_a_view_digest_is_of_its_exact_text():
    assert digest(REPORT) == REPORT.fingerprint.sha256
    assert digest(REPORT, '{"blocks": []}') != digest(REPORT, '{"blocks":[]}')


@pytest.mark.parametrize(
    "text",
    ["../../etc/passwd", ".hidden", "..", "...", "a/b\\c", "/abs", "", "VmlldzoxMjM=", "x" * 300],
    ids=["traversal", "hidden", "dotdot", "dots", "separators", "absolute", "empty", "b64", "long"],
)
def test_safe_name_never_yields_a_separator_or_a_leading_dot(text):
    name = safe_name(text)
    assert name
    assert "/" not in name
    assert "\\" not in name
    assert not name.startswith(".")
    assert len(name) <= 80
    assert safe_name(name) == name  # already safe: kept


# --- through the command line, against the local W&B-compatible server --------------------------

SENTINEL = "SENTINEL" + "b" * 40


@pytest.fixture
def keyed(live, monkeypatch):
    """The live server, with an API key that is easy to find in any output or file."""
    live.api_key = SENTINEL
    monkeypatch.setenv("WANDB_API_KEY", SENTINEL)
    return live


def assert_key_nowhere(results, root) -> None:
    """No traceback, and the key in 0 bytes of output and of the files under `root`."""
    for result in results:
        assert "Traceback" not in result.output
        assert SENTINEL not in result.output
    for path in root.rglob("*"):
        if path.is_file():
            assert SENTINEL.encode() not in path.read_bytes(), path


def assert_one_line_refusal(result, message: str, root) -> None:
    """Exit 2, one `Error:` line naming the problem, no traceback, and the key nowhere."""
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    assert re.search(message, errors[0]), errors[0]
    assert_key_nowhere([result], root)


LIVE_TAMPERING = {
    "entity-edited": (
        lambda d: d.update(entity="other"),
        r"an object of other/async-rl, but the backup is of team/async-rl; nothing restored",
    ),
    "spec-edited": (
        lambda d: d["view"].update(spec='{"blocks": []}'),
        r"changed since it was backed up \(checksum mismatch\); nothing restored",
    ),
    "journal-line-deleted": (None, r"journal\.jsonl:2: checksum mismatch"),
}


@pytest.mark.parametrize(
    ("change", "message"), list(LIVE_TAMPERING.values()), ids=list(LIVE_TAMPERING)
)
def test_rollback_refuses_a_tampered_backup_before_writing_anything(
    run, keyed, tmp_path, change, message
):
    assert run("apply", TARGET, "--yes", "--backup-dir", "b").exit_code == 0
    after = snapshot(keyed)
    folder = tmp_path / "b"
    if change is None:
        lines = (folder / JOURNAL).read_text().splitlines(keepends=True)
        (folder / JOURNAL).write_text("".join(lines[:1] + lines[2:]))
    else:
        entry = next(e for e in journal(folder) if e["event"] == "backed-up")
        path = folder / entry["file"]
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data, indent=2))
    count = len(writes(keyed))
    result = run("rollback", "b", "--yes")
    assert_one_line_refusal(result, message, tmp_path)
    assert len(writes(keyed)) == count
    assert snapshot(keyed) == after


def test_a_format_2_backup_rolls_back_with_a_warning(run, keyed, tmp_path):
    before = snapshot(keyed)[0]
    assert run("apply", TARGET, "--yes", "--backup-dir", "b").exit_code == 0
    as_format_2(tmp_path / "b")
    result = run("rollback", "b", "--yes")
    assert result.exit_code == 0, result.output
    assert "Warning: wbmigrate-backup/2 keeps no checksums: unverified" in result.stderr
    assert "Summary: 10 restored." in result.stdout
    assert snapshot(keyed)[0] == before
    assert_key_nowhere([result], tmp_path)


def test_ids_that_clean_alike_and_a_long_id_are_backed_up_apart_and_roll_back(run, keyed, tmp_path):
    """`id+1` and `id/1` used to share `report-id_1.json` (one original lost), and a
    70-character id made the backup unreadable: rollback exited 2 after apply exited 0."""
    state = keyed.state
    template = state.views[state.find("Async health")]
    for view_id, title in (("id+1", "Plus"), ("id/1", "Slash"), ("W" * 70, "Long")):
        spec = template["spec"].replace("Async health", title)
        state.views[view_id] = {**template, "id": view_id, "displayName": title, "spec": spec}
    before = snapshot(keyed)[0]
    result = run("apply", TARGET, "--yes", "--backup-dir", "b")
    assert result.exit_code == 0, result.output
    assert "Summary: 13 applied." in result.stdout
    files = [p.name for p in (tmp_path / "b").iterdir()]
    assert len(files) == 13 + 2
    assert all(len(name) <= 80 for name in files)
    undo = run("rollback", "b", "--yes")
    assert undo.exit_code == 0, undo.output
    assert "Summary: 13 restored." in undo.stdout
    assert snapshot(keyed)[0] == before
    assert_key_nowhere([result, undo], tmp_path)


def sys_is_read_only() -> bool:
    """Whether even root cannot make a folder in /sys (a container's, a CI runner's)."""
    try:
        os.mkdir("/sys/wbmigrate-probe")
    except OSError:
        return Path("/sys").is_dir()
    os.rmdir("/sys/wbmigrate-probe")
    return False


@pytest.mark.parametrize(
    ("backup_dir", "message"),
    [
        ("/etc/passwd/x", r"/etc/passwd/x: cannot make a folder under /etc/passwd, a file"),
        ("a-file", r"a-file: a file is in the way, not a folder"),
        ("full", r"full exists and is not empty"),
        ("/sys/wbmigrate-backups", r"/sys/wbmigrate-backups: cannot make the backup folder"),
    ],
    ids=["under-a-file", "a-file", "not-empty", "not-writable"],
)
def test_a_backup_dir_that_cannot_be_used_is_refused_before_any_write(
    run, keyed, tmp_path, backup_dir, message
):
    if backup_dir.startswith("/sys") and not sys_is_read_only():
        pytest.skip("needs a /sys where no folder can be made")
    (tmp_path / "a-file").write_text("mine")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes").write_text("mine")
    result = run("apply", TARGET, "--yes", "--backup-dir", backup_dir)
    assert_one_line_refusal(result, message, tmp_path)
    assert writes(keyed) == []
    if not backup_dir.startswith("/sys"):  # root passes the early check there; mkdir fails
        assert keyed.requests == []  # refused before the project was even read
    assert (tmp_path / "a-file").read_text() == "mine"


def test_rollback_of_a_folder_that_is_no_backup_is_one_line(run, keyed, tmp_path):
    (tmp_path / "empty").mkdir()
    assert_one_line_refusal(
        run("rollback", "empty", "--yes"), r"an empty folder, not a wbmigrate backup", tmp_path
    )
    assert_one_line_refusal(run("rollback", "nowhere", "--yes"), r"no such folder", tmp_path)
    assert run("apply", TARGET, "--yes", "--backup-dir", "b").exit_code == 0
    entry = next(e for e in journal(tmp_path / "b") if e["event"] == "backed-up")
    (tmp_path / "b" / entry["file"]).unlink()
    count = len(writes(keyed))
    result = run("rollback", "b", "--yes")
    assert_one_line_refusal(result, r"missing from the backup; nothing restored", tmp_path)
    assert len(writes(keyed)) == count


def test_a_backup_of_another_host_is_refused(run, keyed, tmp_path, monkeypatch):
    assert run("apply", TARGET, "--yes", "--backup-dir", "b").exit_code == 0
    count = len(writes(keyed))
    monkeypatch.setenv("WANDB_BASE_URL", "http://127.0.0.1:9")
    result = run("rollback", "b", "--yes")
    assert_one_line_refusal(result, rf"the backup is from {keyed.url}", tmp_path)
    assert len(writes(keyed)) == count


def test_a_title_holding_the_key_never_reaches_the_journal(tmp_path):
    from wbmigrate.redact import forget, register

    secret = "k" * 39 + "Z"
    register(secret)
    try:
        backup = Backup(tmp_path / "run", INFO)
        backup.record(backup.keep(view("V9", f"leaked {secret}"), '{"sent": 1}'))
        backup.not_written(view("V9", "x"), f"changed by {secret}")
        assert backup.close() is None
        text = (backup.folder / "journal.jsonl").read_text()
        assert secret not in text
        assert len(load_backup(backup.folder).items) == 1  # the chain holds, redacted
    finally:
        forget()


@pytest.mark.parametrize("member", [MANIFEST, JOURNAL, "backed-up file"])
def test_a_fifo_in_a_backup_is_refused_without_waiting(folder, member):
    if member == "backed-up file":
        member = journal(folder)[0]["file"]
    (folder / member).unlink()
    os.mkfifo(folder / member)
    with pytest.raises(BackupError, match="a FIFO is not a regular file") as error:
        returns_soon(load_backup, folder)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("spec", ["{not json", "[" * 100_000], ids=["not-json", "too-deep"])
def test_a_baseline_from_a_backed_up_spec_that_does_not_parse_is_one_line(tmp_path, spec):
    """Its checksums hold (a backup made by hand, or recomputed): `verify --baseline` was a
    traceback."""
    broken = view("V9", "Broken", spec=spec)
    backup = Backup(tmp_path / "backup", INFO)
    backup.record(backup.keep(broken, broken.text))
    backup.written(broken)
    backup.close()
    with pytest.raises(BackupError, match=r"\Athe backed-up spec of view V9 is not JSON\Z"):
        load_baseline(backup.folder, find_mapping("prime-rl").migration())
