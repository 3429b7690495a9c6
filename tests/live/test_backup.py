"""Backups of an apply run: private files, a manifest, a journal, and reading them back."""

from __future__ import annotations

import copy
import datetime as dt
import json
import stat

import pytest
from helpers import FIXTURES

from wbmigrate import __version__
from wbmigrate.live.backup import (
    FORMAT,
    JOURNAL,
    MANIFEST,
    Backup,
    BackupError,
    digest,
    load_backup,
    safe_name,
)
from wbmigrate.live.client import View
from wbmigrate.live.objects import LiveObject

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


@pytest.fixture
def folder(tmp_path):
    """A backup of five objects: all backed up, the report, draft and automation written."""
    backup = Backup(tmp_path / "backup", INFO)
    for obj in (AUTOMATION, WORKSPACE, DRAFT, SECOND, REPORT):
        backup.save(obj, obj.text.replace("blocks", "blocks2"))
    for obj in (REPORT, AUTOMATION, DRAFT):
        backup.written(obj)
    return backup.folder


def test_the_folder_and_its_files_are_private(tmp_path):
    backup = Backup(tmp_path / "parent" / "run", INFO)
    backup.save(REPORT, "{}")
    assert mode_of(backup.folder) == 0o700
    files = sorted(backup.folder.iterdir())
    assert [f.name for f in files] == [JOURNAL, MANIFEST, "report-V1.json"]
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


def test_the_manifest_says_what_was_migrated_how(tmp_path):
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


def test_the_journal_gets_a_line_per_event(tmp_path):
    backup = Backup(tmp_path / "run", INFO)
    backup.save(REPORT, '{"sent": 1}')
    assert journal(backup.folder) == [
        {
            "event": "backed-up",
            "file": "report-V1.json",
            "kind": "report",
            "id": "V1",
            "title": "Zeta report",
            "sending_sha256": digest(REPORT, '{"sent": 1}'),
        }
    ]
    backup.save(AUTOMATION, AUTOMATION.text)
    backup.written(REPORT)
    events = journal(backup.folder)
    assert [(e["event"], e["id"]) for e in events] == [
        ("backed-up", "V1"),
        ("backed-up", TRIGGER["id"]),
        ("written", "V1"),
    ]
    assert events[1]["file"] == f"automation-{safe_name(TRIGGER['id'])}.json"


def test_the_backup_file_holds_the_object_as_fetched(folder):
    stored = json.loads((folder / "report-V1.json").read_text())
    assert stored == {"kind": "report", "id": "V1", "entity": "team", "project": "async-rl"} | {
        "view": REPORT.view.node()
    }
    stored = json.loads((folder / f"automation-{safe_name(TRIGGER['id'])}.json").read_text())
    assert stored["trigger"] == TRIGGER


def test_load_backup_reads_back_every_object_in_a_stable_order(folder):
    manifest, restorables = load_backup(folder)
    assert manifest == json.loads((folder / MANIFEST).read_text())
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


def test_a_journal_cut_short_on_its_last_line_is_tolerated(folder):
    expected = load_backup(folder)
    with (folder / JOURNAL).open("a") as out:
        out.write('{"event": "backed-up", "file": "report-V9.js')
    assert load_backup(folder) == expected


def test_a_journal_cut_inside_a_character_is_tolerated(folder):
    expected = load_backup(folder)
    with (folder / JOURNAL).open("ab") as out:
        out.write('{"event": "backed-up", "title": "Ü'.encode()[:-1])
    assert load_backup(folder) == expected


def test_a_bad_line_in_the_middle_of_the_journal_is_an_error(folder):
    lines = (folder / JOURNAL).read_text().splitlines(keepends=True)
    lines.insert(2, '{"event": "backed-up", "file": \n')
    (folder / JOURNAL).write_text("".join(lines))
    with pytest.raises(BackupError, match=r"journal\.jsonl:3: not a journal line"):
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
    with pytest.raises(BackupError, match="not a wbmigrate backup folder") as error:
        load_backup(folder)
    assert "\n" not in str(error.value)


def test_a_missing_object_file_is_an_error(folder):
    (folder / "report-V1.json").unlink()
    with pytest.raises(BackupError, match=r"report-V1\.json: cannot read the backup"):
        load_backup(folder)


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
