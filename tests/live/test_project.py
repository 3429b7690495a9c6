"""A live project as library calls: read, plan (streaming, saved), prepare an apply, back up."""

from __future__ import annotations

import gc
import json
import threading
import types
from pathlib import Path

import pytest
from helpers import FIXTURES, MIGRATION, TARGET

from testserver import Fault
from wbmigrate.engine.history import History
from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.live import project as live_project
from wbmigrate.live.backup import MANIFEST, BackupError
from wbmigrate.live.client import Client, View
from wbmigrate.live.objects import LiveObject, ObjectRef
from wbmigrate.live.outcomes import Expected, Outcome, Rewritten, WriteStatus
from wbmigrate.live.planfile import load_plan
from wbmigrate.live.prepare import backup_folder, plan_write, prepare_apply, start_backup
from wbmigrate.live.project import (
    Counts,
    Project,
    Selector,
    meanwhile,
    plan_project,
    selector,
    walking,
)
from wbmigrate.live.transport import ApiError
from wbmigrate.plan import Status, plan_one
from wbmigrate.rewrite import rewrite_text


@pytest.fixture
def project(live):
    return Project(Client(live.url, live.api_key), "team", "async-rl")


def changing(planned) -> list[str]:
    return [p.source.origin for p in planned if p.status is Status.CHANGES]


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "home")


def test_read_counts_every_object_into_the_census(project, live):
    counts = Counts()
    objects = list(project.read(counts))
    assert counts == Counts(reports=4, drafts=1, workspaces=1, automations=6)
    assert {o.id for o in objects} == set(live.state.views) | set(live.state.triggers)
    assert [o.kind for o in objects] == ["report"] * 4 + ["workspace"] + ["automation"] * 6


def test_read_without_drafts_skips_them(project):
    counts = Counts()
    without = Project(project.client, "team", "async-rl", drafts=False)
    assert not any(o.is_draft for o in without.read(counts))
    assert counts == Counts(reports=3, drafts=0, workspaces=1, automations=6)


def test_plan_project_streams_every_object(project):
    counts = Counts()
    planned = list(plan_project(project, MIGRATION, Options(), counts))
    assert len(planned) == 11
    assert [p.status for p in planned].count(Status.CHANGES) == 10
    assert counts.reports + counts.workspaces + counts.automations == 11


def test_plan_project_saves_a_plan_load_plan_reads(project, live, tmp_path):
    out = tmp_path / "plan.json"
    planned = list(plan_project(project, MIGRATION, Options(), out=out))
    saved = load_plan(out)
    assert saved.target == TARGET
    assert saved.drafts is True
    assert list(saved.objects) == changing(planned)
    report = saved.objects[live.state.find("Async health")]
    assert report.fingerprint.updated_at == live.state.views[report.id]["updatedAt"]
    assert files_in(tmp_path) == ["plan.json"]


def test_a_consumer_that_stops_early_leaves_no_plan(project, tmp_path):
    stream = plan_project(project, MIGRATION, Options(), out=tmp_path / "plan.json")
    first = next(stream)
    assert first.status is Status.CHANGES
    assert not (tmp_path / "plan.json").exists()
    stream.close()
    assert files_in(tmp_path) == []


def test_an_error_while_planning_leaves_no_plan(live, tmp_path):
    project = Project(Client(live.url, live.api_key, retries=0), "team", "async-rl")
    live.faults.append(Fault(status=500, operation="WbmigrateTriggers"))
    stream = plan_project(project, MIGRATION, Options(), out=tmp_path / "plan.json")
    with pytest.raises(WbmigrateError, match="HTTP 500"):
        list(stream)
    assert files_in(tmp_path) == []


def test_prepare_apply_lists_exactly_the_objects_to_change(project):
    expected = changing(plan_project(project, MIGRATION, Options()))
    counts = Counts()
    work = prepare_apply(project, MIGRATION, Options(), counts=counts)
    assert [queued.id for queued in work.todo] == expected
    for queued in work.todo:
        assert queued.expected == Expected(queued.load()[0].fingerprint)
    assert work.settled == []
    assert (work.tally.total, work.tally.statuses[Status.CHANGES]) == (11, 10)
    assert counts.automations == 6


def reachable(root: object) -> list[object]:
    """Every object reachable from `root`, classes and modules aside."""
    seen, todo, found = set(), [root], []
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type | types.ModuleType):
            continue
        seen.add(id(obj))
        found.append(obj)
        todo += gc.get_referents(obj)
    return found


def test_prepare_apply_holds_no_spec_until_the_objects_turn(project, live):
    """10,015 objects' specs held from the plan to the last write made `apply` take 780 MB where
    `plan` took 61: each object to write, and its plan, wait on disk; the work holds what names
    it and what it must still be, and gets it back whole at its turn."""
    work = prepare_apply(project, MIGRATION, Options())
    assert len(work.todo) == 10
    held = reachable(work)
    assert not [o for o in held if isinstance(o, LiveObject | View | Rewritten)]
    specs = {view["spec"] for view in live.state.views.values()}
    assert not specs & {o for o in held if isinstance(o, str)}
    for queued in work.todo:
        obj, plan = queued.load()
        assert (obj.id, obj.fingerprint, obj.ref) == (
            queued.id,
            queued.expected.fingerprint,
            queued.ref,
        )
        assert obj.text in specs or obj.kind == "automation"
        assert plan.changes


def test_prepare_apply_follows_a_saved_plan(project, tmp_path):
    list(plan_project(project, MIGRATION, Options(), out=tmp_path / "plan.json"))
    saved = load_plan(tmp_path / "plan.json")
    work = prepare_apply(project, MIGRATION, Options(), saved)
    assert [queued.id for queued in work.todo] == list(saved.objects)
    for queued in work.todo:
        entry = saved.objects[queued.id]
        assert queued.expected == Expected(entry.fingerprint, entry.changes)
        assert queued.expected.fingerprint == queued.load()[0].fingerprint  # nothing changed since
    assert work.settled == []


def test_an_object_deleted_since_the_saved_plan_is_settled_as_failed(project, live, tmp_path):
    list(plan_project(project, MIGRATION, Options(), out=tmp_path / "plan.json"))
    saved = load_plan(tmp_path / "plan.json")
    gone = live.state.find("Token masking")
    with live.state.lock:
        del live.state.views[gone]
    work = prepare_apply(project, MIGRATION, Options(), saved)
    assert work.settled == [
        Outcome(ObjectRef("report", gone, "Token masking"), WriteStatus.FAILED, "no longer exists")
    ]
    assert gone not in [queued.id for queued in work.todo]
    assert len(work.todo) == len(saved.objects) - 1


def test_an_unreadable_object_is_settled_as_skipped(project, live):
    broken = live.state.add_view("{not json", "runs", "Broken")
    work = prepare_apply(project, MIGRATION, Options())
    (outcome,) = work.settled
    assert (outcome.obj.id, outcome.obj.title, outcome.status) == (
        broken,
        "Broken",
        WriteStatus.SKIPPED,
    )
    assert outcome.message.startswith("not read: ")
    assert broken not in [queued.id for queued in work.todo]


def test_start_backup_writes_a_manifest(project, live, tmp_path):
    backup = start_backup(project, MIGRATION, Options(), tmp_path / "backup")
    assert backup.folder == tmp_path / "backup"
    manifest = json.loads((backup.folder / MANIFEST).read_text())
    assert manifest["target"] == TARGET
    assert manifest["base_url"] == live.url
    assert manifest["mapping"] == {"id": "prime-rl", "from": "2025.07.07", "to": "2026.10.25"}
    assert manifest["mode"] == "dual"


def test_start_backup_picks_a_fresh_default_folder_each_run(project):
    first = start_backup(project, MIGRATION, Options(), backup_folder("team-async-rl"))
    second = start_backup(project, MIGRATION, Options(), backup_folder("team-async-rl"))
    assert first.folder != second.folder
    for backup in (first, second):
        assert backup.folder.parent == Path("wbmigrate-backups")
        assert backup.folder.name.startswith("team-async-rl-")
        assert (backup.folder / MANIFEST).is_file()


def test_backup_folder_is_checked_before_anything_is_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert backup_folder("team-async-rl", str(tmp_path / "b")) == tmp_path / "b"
    default = backup_folder("team-async-rl")
    assert default.parent == Path("wbmigrate-backups")
    assert default.name.startswith("team-async-rl-")
    assert not default.exists()  # checked, not made: a cancelled run leaves nothing behind
    (tmp_path / "wbmigrate-backups").write_text("in the way")
    with pytest.raises(BackupError, match=r"under .*wbmigrate-backups, a file"):
        backup_folder("team-async-rl")


HISTORY = History(frozenset({"off_policy/mean"}), 2, None, None, None)


def live_view(path: Path, text: str | None = None) -> LiveObject:
    node = {"id": path.parent.name, "name": "n", "type": "runs", "displayName": path.parent.name}
    node |= {"spec": path.read_text() if text is None else text, "updatedAt": "t"}
    return LiveObject.of_view(View.from_node(node, "team", "async-rl"))


@pytest.mark.parametrize("history", [None, HISTORY], ids=["no-runs", "runs"])
def test_apply_sends_the_text_the_engine_rewrites_byte_for_byte(history):
    """The text apply splices when an object's turn comes is the engine's `rewrite_text`."""
    final, changed = Options(history=history), 0
    for path in sorted(FIXTURES.glob("cases/report/*/before.json")):
        obj = live_view(path)
        planned, plan = plan_write(obj, MIGRATION, final)
        _, text = rewrite_text(obj.text, MIGRATION, kind=obj.kind, name=obj.title, options=final)
        assert plan is not None
        assert plan.text == (text if planned.result.changed else None), path.parent.name
        changed += planned.result.changed
    assert changed > 10


def test_objects_are_walked_while_the_census_is_on_its_way(project, monkeypatch):
    """The census arrives only once an object has been walked (an event, no clock); each
    object's plan is then finished with it, as if it had come first."""
    walked, walk_one = threading.Event(), live_project.walk_one

    def walk_and_tell(*args):
        try:
            return walk_one(*args)
        finally:
            walked.set()

    def late() -> Options:
        assert walked.wait(60)  # bounded, in case the walk never comes
        return Options(history=HISTORY)

    monkeypatch.setattr(live_project, "walk_one", walk_and_tell)
    objects = walking(project.read(), MIGRATION, Options(), project.client.base_url)
    census, objects = meanwhile(late, objects)
    planned = list(plan_project(project, MIGRATION, census, walked=objects))
    host = project.client.base_url
    assert planned == [plan_one(o.source(host), MIGRATION, census) for o in project.read()]
    notes = [
        c.new for p in planned if p.result for c in p.result.changes if c.field == "migration note"
    ]
    assert notes
    assert all("This project has not upgraded yet" in note for note in notes)


def test_a_census_error_comes_first_and_a_listing_error_where_it_came():
    def objects():
        yield "walked"
        raise ApiError("the listing failed")

    def refused():
        raise ApiError("the census was refused")

    with pytest.raises(ApiError, match="census"):
        meanwhile(refused, objects())
    value, rest = meanwhile(lambda: "census", objects())
    assert value == "census"
    assert next(rest) == "walked"
    with pytest.raises(ApiError, match="listing"):
        next(rest)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("team", Selector("team")),
        ("team/async-rl", Selector("team", "async-rl")),
        ("wandb://team/qwen3-*", Selector("team", "qwen3-*")),
        ("team/qwen3-[48]b", Selector("team", "qwen3-[48]b")),
        ("team/", Selector("team")),
    ],
)
def test_selectors(text, expected):
    assert selector(text) == expected


@pytest.mark.parametrize("text", ["", "a/b/c", "team/x y", "../etc", "team/..", "team/$(id)"])
def test_not_a_selector(text):
    assert selector(text) is None
