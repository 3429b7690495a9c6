"""`export`: one readable export file per live object, read back as dashboards as code."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES, MIGRATION

from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.files import EXPORT_FORMAT, EXPORT_SPEC, read_sources, spec_in
from wbmigrate.live.client import View
from wbmigrate.live.export import export_objects
from wbmigrate.live.objects import LiveObject
from wbmigrate.plan import plan_one, signature

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


@pytest.fixture
def exported(tmp_path):
    folder = tmp_path / "out"
    return folder, export_objects(OBJECTS, folder)


def test_one_file_per_object_in_a_folder_per_kind(exported):
    folder, paths = exported
    relative = [p.relative_to(folder).as_posix() for p in paths]
    assert relative == [
        "reports/async-health--V1.json",
        "reports/draft-async-health--V2.json",
        "workspaces/overview--V3.json",
        f"automations/token-max--{TRIGGER['id']}.json",
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
    (path,) = export_objects([view(object_id, title)], folder)
    assert folder.resolve() in path.resolve().parents
    assert path.parent == folder / "reports"
    assert not path.name.startswith(".")
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert [p for p in folder.rglob("*") if p.is_file()] == [path]


def test_a_title_without_letters_is_named_after_its_kind(tmp_path):
    paths = export_objects([view("V1", "日本語"), view("V2", "!!! ---")], tmp_path)
    assert [p.name for p in paths] == ["report--V1.json", "report--V2.json"]


def test_objects_with_one_title_get_files_of_their_own(tmp_path):
    paths = export_objects([view("V1", "Same"), view("V2", "Same")], tmp_path)
    assert len({p.name for p in paths}) == 2
    assert [json.loads(p.read_text())["id"] for p in paths] == ["V1", "V2"]


@pytest.mark.parametrize("spec", ["{not json", "", '{"blocks": ['], ids=["bad", "empty", "cut"])
def test_a_spec_that_is_not_json_is_a_one_line_error(tmp_path, spec):
    with pytest.raises(WbmigrateError, match="report V9: its spec is not valid JSON") as error:
        export_objects([view("V9", "Broken", spec)], tmp_path)
    assert "\n" not in str(error.value)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_draft_file_names_start_with_draft(exported):
    _, paths = exported
    drafts = [p.name for p, obj in zip(paths, OBJECTS, strict=True) if obj.is_draft]
    assert drafts == ["draft-async-health--V2.json"]
    assert [p.name for p in paths if p.name.startswith("draft-")] == drafts


def test_exporting_again_replaces_the_files(exported):
    folder, paths = exported
    changed = view("V1", "Async health", '{"version": 5, "blocks": []}')
    (again,) = export_objects([changed], folder)
    assert again == paths[0]
    assert json.loads(again.read_text())["spec"] == {"version": 5, "blocks": []}
