"""`export`: one readable export file per live object, read back as dashboards as code; names
that never collide; an object that cannot be exported reported on its own."""

from __future__ import annotations

import json
import re

import pytest
from helpers import FIXTURES, MIGRATION, TARGET

from testserver import Fault
from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.files import EXPORT_FORMAT, EXPORT_SPEC, read_sources, spec_in
from wbmigrate.live.backup import safe_name, short_hash
from wbmigrate.live.client import View
from wbmigrate.live.export import export_objects, prepare_folder
from wbmigrate.live.objects import LiveObject
from wbmigrate.plan import plan_one
from wbmigrate.plan_json import signature

SPEC = (FIXTURES / "cases" / "report" / "line-metrics" / "before.json").read_text()
WORKSPACE_SPEC = (FIXTURES / "demo-project" / "workspaces" / "overview.json").read_text()
TRIGGER = json.loads((FIXTURES / "demo-project" / "automations" / "token-max.json").read_text())


def view(view_id: str, title: str, spec: str = SPEC, type_: str = "runs") -> LiveObject:
    node = {"id": view_id, "name": f"view-{view_id}", "type": type_, "displayName": title}
    node |= {"spec": spec, "updatedAt": "2026-11-01T00:00:00Z", "description": "about"}
    return LiveObject.of_view(View.from_node(node, "team", "async-rl"))


REPORT = view("V1", "Async health")
DRAFT = view("V2", "Async health", type_="runs/draft")
WORKSPACE = view("V3", "Overview", WORKSPACE_SPEC, "project-view")
AUTOMATION = LiveObject.of_trigger(TRIGGER, "team", "async-rl")
OBJECTS = [REPORT, DRAFT, WORKSPACE, AUTOMATION]


def paths_of(objects, folder):
    """Export, expecting every object to be written; the paths."""
    results = export_objects(objects, folder)
    assert [r.error for r in results] == [""] * len(results)
    return [r.path for r in results]


@pytest.fixture
def exported(tmp_path):
    folder = tmp_path / "out"
    return folder, paths_of(OBJECTS, folder)


def test_one_file_per_object_in_a_folder_per_kind(exported):
    folder, paths = exported
    relative = [p.relative_to(folder).as_posix() for p in paths]
    assert relative == [
        f"reports/async-health--V1-{short_hash('V1')}.json",
        f"reports/draft-async-health--V2-{short_hash('V2')}.json",
        f"workspaces/overview--V3-{short_hash('V3')}.json",
        f"automations/token-max--{safe_name(TRIGGER['id'])}-{short_hash(TRIGGER['id'])}.json",
    ]
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.json")) == sorted(
        relative
    )


def test_the_files_are_export_documents_of_the_right_kind(exported):
    _, paths = exported
    for path, obj in zip(paths, OBJECTS, strict=True):
        document = json.loads(path.read_text(encoding="utf-8"))
        assert spec_in(document) == (EXPORT_SPEC, obj.kind)
        assert list(document)[:4] == ["wbmigrate", "kind", "entity", "project"]
        assert list(document)[-1] == "spec"
        assert (document["wbmigrate"], document["entity"], document["project"]) == (
            EXPORT_FORMAT,
            "team",
            "async-rl",
        )
        assert document["id"] == obj.id
        if obj.view is not None:
            assert document["spec"] == json.loads(obj.view.spec)
            assert {k: document[k] for k in obj.view.node() if k != "spec"} == {
                k: v for k, v in obj.view.node().items() if k != "spec"
            }
        else:
            assert document["spec"] == TRIGGER
            assert document["name"] == "token-max"


def test_the_spec_keeps_the_key_order_w_and_b_stored(exported):
    _, paths = exported
    document = json.loads(paths[0].read_text())
    assert json.dumps(document["spec"]) == json.dumps(json.loads(SPEC))
    assert paths[0].read_text().endswith("}\n")


def test_read_sources_reads_the_files_back(exported):
    folder, _ = exported
    sources = list(read_sources(folder))
    found = {(s.name, s.kind, s.root) for s in sources}
    assert found == {
        ("Async health", "report", EXPORT_SPEC),
        ("Overview", "workspace", EXPORT_SPEC),
        ("token-max", "automation", EXPORT_SPEC),
    }
    assert len(sources) == 4
    assert all(s.error is None for s in sources)


def test_an_exported_object_plans_as_the_live_one(exported):
    folder, paths = exported
    by_origin = {s.origin: s for s in read_sources(folder)}
    for path, obj in zip(paths, OBJECTS, strict=True):
        from_file = plan_one(by_origin[str(path)], MIGRATION, Options())
        live = plan_one(obj.source(), MIGRATION, Options())
        assert from_file.result is not None, from_file.error
        assert signature(from_file.result.changes) == signature(live.result.changes)
        assert from_file.result.changes  # the fixtures need migrating


@pytest.mark.parametrize(
    ("title", "object_id"),
    [
        ("../../escape", "V1"),
        ("/etc/passwd", "V1"),
        ("..", ".."),
        ("report", "../../../escape"),
        ("a/../../b", "/abs/id"),
        ("..\\..\\windows", "..\\x"),
    ],
    ids=["title-traversal", "absolute-title", "dotdot", "id-traversal", "both", "backslashes"],
)
def test_no_title_or_id_writes_outside_the_folder(tmp_path, title, object_id):
    folder = tmp_path / "out"
    (path,) = paths_of([view(object_id, title)], folder)
    assert folder.resolve() in path.resolve().parents
    assert path.parent == folder / "reports"
    assert not path.name.startswith(".")
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert [p for p in folder.rglob("*") if p.is_file()] == [path]


def test_a_title_without_letters_is_named_after_its_kind(tmp_path):
    paths = paths_of([view("V1", "日本語"), view("V2", "!!! ---")], tmp_path)
    assert [p.name for p in paths] == [
        f"report--V1-{short_hash('V1')}.json",
        f"report--V2-{short_hash('V2')}.json",
    ]


def test_objects_with_one_title_get_files_of_their_own(tmp_path):
    paths = paths_of([view("V1", "Same"), view("V2", "Same")], tmp_path)
    assert len({p.name for p in paths}) == 2
    assert [json.loads(p.read_text())["id"] for p in paths] == ["V1", "V2"]


@pytest.mark.parametrize(
    "ids",
    [
        ("id+1", "id/1", "id_1", "id 1"),
        ("VmlldzoxMDc=", "vmlldzoxmdc="),  # apart on a case-insensitive disk too
        ("x" * 70 + "a", "x" * 70 + "b"),  # the same first 48 characters
    ],
    ids=["clean-alike", "case", "long"],
)
def test_ids_that_clean_alike_get_files_of_their_own(tmp_path, ids):
    paths = paths_of([view(i, "Same title") for i in ids], tmp_path)
    assert len({p.name.casefold() for p in paths}) == len(ids)
    assert all(len(p.name) <= 130 for p in paths)
    assert [json.loads(p.read_text())["id"] for p in paths] == list(ids)


@pytest.mark.parametrize("spec", ["{not json", "", '{"blocks": ['], ids=["bad", "empty", "cut"])
def test_a_spec_that_is_not_json_is_reported_and_the_others_are_written(tmp_path, spec):
    results = export_objects([view("V9", "Broken", spec), REPORT], tmp_path)
    assert [(r.obj.id, r.path is None, r.error) for r in results] == [
        ("V9", True, "its spec is not valid JSON; not exported"),
        ("V1", False, ""),
    ]
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == [results[1].path]


@pytest.mark.parametrize(
    ("title", "spec"),
    [("Lone \ud800 surrogate", SPEC), ("Fine", '{"blocks": [], "title": "\\udfff"}')],
    ids=["in-the-title", "in-the-spec"],
)
def test_text_utf8_cannot_store_is_reported_never_a_half_file(tmp_path, title, spec):
    results = export_objects([view("V9", title, spec), REPORT], tmp_path)
    assert results[0].path is None
    assert re.fullmatch(
        r"holds '\\ud[8-9a-f]\w\w', which UTF-8 cannot store; not exported", results[0].error
    )
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files == [results[1].path]
    assert all(p.stat().st_size > 0 for p in files)


@pytest.mark.parametrize("where", ["file", "file/below"], ids=["a-file", "under-a-file"])
def test_an_export_folder_that_cannot_be_made_is_one_line(tmp_path, where):
    (tmp_path / "file").write_text("mine")
    with pytest.raises(WbmigrateError, match=r"file") as error:
        prepare_folder(tmp_path / where)
    assert "\n" not in str(error.value)
    assert (tmp_path / "file").read_text() == "mine"


def test_draft_file_names_start_with_draft(exported):
    _, paths = exported
    drafts = [p.name for p, obj in zip(paths, OBJECTS, strict=True) if obj.is_draft]
    assert drafts == [f"draft-async-health--V2-{short_hash('V2')}.json"]
    assert [p.name for p in paths if p.name.startswith("draft-")] == drafts


def test_exporting_again_replaces_the_files(exported):
    folder, paths = exported
    changed = view("V1", "Async health", '{"version": 5, "blocks": []}')
    (again,) = paths_of([changed], folder)
    assert again == paths[0]
    assert json.loads(again.read_text())["spec"] == {"version": 5, "blocks": []}


# --- through the command line, against the local W&B-compatible server --------------------------

SENTINEL = "SENTINEL" + "e" * 40


def test_export_reports_what_it_cannot_write_and_writes_the_rest(run, live, tmp_path, monkeypatch):
    """Objects whose ids clean alike used to overwrite each other's file ("Exported 21 objects",
    19 files); a spec UTF-8 cannot store or that is not JSON stopped the export with a
    traceback."""
    live.api_key = SENTINEL
    monkeypatch.setenv("WANDB_API_KEY", SENTINEL)
    state = live.state
    template = state.views[state.find("Async health")]
    added = {
        "id+1": ("Twin", template["spec"]),
        "id/1": ("Twin", template["spec"]),
        "bad-title": ("Lone \ud800", template["spec"]),
        "bad-spec": ("Broken", "{not json"),
    }
    for view_id, (title, spec) in added.items():
        state.views[view_id] = {**template, "id": view_id, "displayName": title, "spec": spec}
    result = run("export", TARGET, "out")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        "Error: report \"Lone \\ud800\" (bad-title): holds '\\ud800', which UTF-8 cannot store; "
        "not exported",
        'Error: report "Broken" (bad-spec): its spec is not valid JSON; not exported',
    ]
    assert result.stderr.splitlines()[-1] == "Exported 13 of 15 objects to out."
    files = sorted(p for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert len(files) == 13 == len(result.stdout.splitlines())
    assert all(p.stat().st_size > 0 and not p.name.startswith(".") for p in files)
    ids = [json.loads(p.read_text())["id"] for p in files]
    assert {"id+1", "id/1"} <= set(ids)
    assert SENTINEL not in result.output
    assert all(SENTINEL.encode() not in p.read_bytes() for p in files)


def test_an_export_folder_that_cannot_be_made_is_refused_before_reading(run, live, tmp_path):
    (tmp_path / "file").write_text("mine")
    result = run("export", TARGET, "file/out")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "Error: file/out: cannot make the export folder (Not a directory)"
    ]
    assert live.requests == []


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_a_spec_nested_100000_deep_is_reported_alone_and_the_rest_exported(run, live):
    """It stopped `export` with a RecursionError traceback."""
    state = live.state
    template = state.views[state.find("Async health")]
    state.views["deep"] = {**template, "id": "deep", "displayName": "Deep", "spec": nested(100_000)}
    result = run("export", TARGET, "out")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == ['Error: report "Deep" (deep): its spec is nested too deeply; not exported']
    assert result.stderr.splitlines()[-1] == "Exported 11 of 12 objects to out."


def deep_triggers_answer(live, run, depth: int) -> bytes:
    """The automations listing as the server gives it, one message nested `depth` deep
    (the server's own encoder cannot write that)."""
    assert run("export", TARGET, "first").exit_code == 0
    (asked,) = [r for r in live.requests if r.operation == "WbmigrateTriggers"]
    body = json.loads(asked.body)
    data = live.execute(body["query"], body.get("variables") or {}).data
    text = json.dumps({"data": data}).replace('"See the Async health report."', nested(depth), 1)
    assert nested(depth) in text
    return text.encode()


@pytest.mark.parametrize("depth", [500, 995, 1_020, 100_000])
def test_an_automation_nested_deep_is_one_line_never_a_traceback(run, live, depth):
    """orjson reads an answer up to 1,024 levels deep, the standard library about 990 (both
    refuse deeper): at every depth `export` ends in one line, never a traceback."""
    body = deep_triggers_answer(live, run, depth)
    live.faults.append(Fault(operation="WbmigrateTriggers", body=body, sticky=True))
    result = run("export", TARGET, "out")
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == (depth > 900), result.output
