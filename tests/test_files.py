"""Spec files on disk for `plan DIR` (`wbmigrate.files`): JSON and YAML read by the same readers
`check` uses, every spec in them planned wherever `check` finds it, and nothing that is a spec
dropped from the count."""

from __future__ import annotations

import json

import pytest
import yaml
from helpers import FIXTURES

from wbmigrate.files import EXPORT_FORMAT, Unreadable, read_json, read_sources, read_yaml

REPORT = json.loads((FIXTURES / "cases/report/line-metrics/before.json").read_text())
LEGACY = (FIXTURES / "cases/report/legacy-2019/before.json").read_text()
EXPORT = {"wbmigrate": EXPORT_FORMAT, "kind": "report", "displayName": "Async", "spec": REPORT}
CI = "name: ci\non:\n  push:\njobs:\n  test:\n    runs-on: ubuntu-latest\n"


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def specs(here):
    """Specs as JSON and YAML, a 2019 report, and files that are no spec."""
    (here / "report.yaml").write_text(yaml.safe_dump(REPORT))
    (here / "export.yml").write_text(yaml.safe_dump(EXPORT))
    (here / "two.yaml").write_text(yaml.safe_dump(REPORT) + "---\n" + CI)
    (here / "legacy.json").write_text(LEGACY)
    (here / "ci.yml").write_text(CI)  # no spec: skipped
    (here / "broken.yaml").write_text("blocks: [off_policy/mean\n")  # a spec's key, unreadable
    (here / "future.json").write_text(json.dumps({**EXPORT, "kind": "dashboard"}))
    return here


def test_plan_dir_reads_yaml_specs_and_a_2019_report_and_skips_what_is_no_spec(run, specs):
    result = run("plan", ".", "--format", "json")
    planned = {(o["origin"], o["name"]): o for o in json.loads(result.stdout)["objects"]}
    assert {key: o["status"] for key, o in planned.items()} == {
        ("broken.yaml", "broken"): "error",
        ("export.yml", "Async"): "changes",
        ("future.json", "future"): "error",
        ("legacy.json", "legacy"): "changes",
        ("report.yaml", "report"): "changes",
        ("two.yaml", "two (1)"): "changes",
    }
    assert planned["broken.yaml", "broken"]["error"] == (
        "not valid YAML: expected ',' or ']', but got '<stream end>' (line 2, column 1)"
    )
    assert planned["future.json", "future"]["error"] == "an export file of unknown kind 'dashboard'"
    assert result.exit_code == 1  # the two unreadable files, each counted and named


def test_plan_and_check_find_the_same_changes_in_a_yaml_spec(run, here):
    (here / "report.yaml").write_text(yaml.safe_dump(REPORT))
    planned = json.loads(run("plan", "report.yaml", "--format", "json").stdout)["objects"]
    checked = run("check", "report.yaml").stdout
    changes = [c for c in planned[0]["changes"] if c["action"] != "annotated"]
    assert len(changes) == checked.count("renamed-metric") > 0


def test_a_yaml_file_named_alone_that_is_no_spec_says_so(run, here):
    (here / "ci.yml").write_text(CI)
    result = run("plan", "ci.yml")
    assert "not a W&B report, workspace or automation spec" in result.stdout
    assert result.exit_code == 1


def test_every_document_of_a_yaml_file_that_holds_a_spec_is_one_object(here):
    (here / "two.yaml").write_text(yaml.safe_dump(REPORT) + "---\n" + yaml.safe_dump(EXPORT))
    sources = list(read_sources(here / "two.yaml"))
    assert [(s.name, s.kind, s.root) for s in sources] == [
        ("two (1)", "report", ()),
        ("Async", "report", ("spec",)),
    ]


@pytest.mark.parametrize(
    ("read", "text", "problem", "offset", "message"),
    [
        (read_json, '{"blocks": [', "not valid JSON: Expecting value", 12,
         "not valid JSON: Expecting value (line 1, column 13)"),
        (read_yaml, "a: [b\n", "not valid YAML: expected ',' or ']', but got '<stream end>'", 6,
         "not valid YAML: expected ',' or ']', but got '<stream end>' (line 2, column 1)"),
        (read_json, "[" * 100_000, "JSON nested too deeply to read", 0,
         "JSON nested too deeply to read"),
    ],
    ids=["json", "yaml", "too-deep"],
)  # fmt: skip
def test_the_readers_say_what_is_wrong_and_where(read, text, problem, offset, message):
    with pytest.raises(Unreadable) as caught:
        read(text)
    assert (caught.value.problem, caught.value.offset, str(caught.value)) == (
        problem,
        offset,
        message,
    )


def test_specs_below_the_top_are_found_where_check_finds_them(here):
    """A list of specs, a saved view's wrapper holding its spec as JSON text, and such text
    that does not parse (an object that cannot be read, never skipped)."""
    views = [
        {"displayName": "A", "spec": json.dumps(REPORT)},
        {"displayName": "B", "spec": '{"blocks": ['},
    ]
    document = {"views": views, "more": [REPORT]}
    (here / "views.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    sources = list(read_sources(here))
    assert [(s.name, s.kind, s.error) for s in sources] == [
        ("views /views/0/spec", "report", None),
        ("views /views/1/spec", None, "a spec kept as JSON text cannot be read: "
         "not valid JSON: Expecting value (line 1, column 13)"),
        ("views /more/0", "report", None),
    ]  # fmt: skip
    assert sources[0].document == REPORT


def test_a_spec_kept_as_escaped_json_text_in_yaml_is_found_by_plan_and_check(run, here):
    view = {"displayName": "Old report", "spec": LEGACY}  # multi-line: its quotes escaped
    (here / "views.yaml").write_text(yaml.safe_dump({"views": [view]}, default_style='"'))
    planned = json.loads(run("plan", ".", "--format", "json").stdout)["objects"]
    assert [(o["name"], o["status"]) for o in planned] == [("views /views/0/spec", "changes")]
    assert "renamed-metric" in run("check", ".").stdout


def test_a_spec_kept_as_json_text_in_a_json_file_is_found_by_plan_and_check(run, here):
    """Its keys' quotes are escaped: `plan DIR` passed over such a file as holding no spec."""
    view = {"name": "v", "displayName": "Async", "spec": json.dumps(REPORT)}
    (here / "view.json").write_text(json.dumps(view, indent=2))
    (here / "whole.json").write_text(json.dumps(json.dumps(REPORT)))
    planned = json.loads(run("plan", ".", "--format", "json").stdout)["objects"]
    assert sorted((o["origin"], o["status"]) for o in planned) == [
        ("view.json", "changes"),
        ("whole.json", "changes"),
    ]
    renamed = [c for o in planned for c in o["changes"] if c["action"] != "annotated"]
    assert run("check", ".").stdout.count("renamed-metric") == len(renamed) > 0


def test_an_export_file_whose_kind_is_no_name_is_an_error_not_a_crash(here):
    (here / "odd.json").write_text(json.dumps({**EXPORT, "kind": ["report"]}))
    (source,) = read_sources(here / "odd.json")
    assert source.error == "an export file of unknown kind ['report']"


def test_an_export_inside_a_document_is_one_object_named_by_its_title(here):
    (here / "list.json").write_text(json.dumps([EXPORT, {**EXPORT, "kind": "dashboard"}]))
    assert [(s.name, s.kind, s.root, s.error) for s in read_sources(here / "list.json")] == [
        ("Async", "report", ("spec",), None),
        ("list /1", None, (), "an export file of unknown kind 'dashboard'"),
    ]
