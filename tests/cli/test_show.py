"""`wbmigrate show PLAN.json`: a saved plan shown as `plan` showed it, from the file alone, in
every format; a damaged or foreign file is one line and exit 2."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES, MIGRATION, TARGET

from wbmigrate import find_mapping
from wbmigrate.engine.history import History, RunRef, Span
from wbmigrate.engine.model import Mode, Options
from wbmigrate.live.client import View
from wbmigrate.live.objects import LiveObject
from wbmigrate.live.planfile import PlanFile, load_plan, saved_report
from wbmigrate.plan import Plan, plan_one
from wbmigrate.report import plan as plan_report

FORMATS = ["text", "markdown", "json"]
SPEC = (FIXTURES / "cases" / "report" / "line-metrics" / "before.json").read_text()
TRIGGER = json.loads((FIXTURES / "demo-project" / "automations" / "token-max.json").read_text())
HOST = "https://api.wandb.ai"
SHOWN = f"Saved plan for {TARGET} (W&B not contacted).\n"


def view(view_id: str, title: str, spec: str, type_: str = "runs") -> LiveObject:
    node = {"id": view_id, "name": view_id.lower(), "type": type_, "displayName": title}
    node |= {"spec": spec, "updatedAt": "2026-11-01T00:00:00Z"}
    return LiveObject.of_view(View.from_node(node, "team", "async-rl"))


OBJECTS = [
    view("V1", "Line metrics", SPEC),
    view("V2", "Empty", '{"version": 5, "blocks": []}'),
    view("V3", "Broken", "{not json"),
    view("V44", "Line metrics", SPEC, "runs/draft"),
    LiveObject.of_trigger(TRIGGER, "team", "async-rl"),
]


@pytest.fixture
def broken(live):
    """The demo project plus a report whose spec W&B cannot parse either: planned as an error."""
    live.state.add_view("{not json", "runs", "Broken")
    return live


@pytest.fixture
def saved(run, broken):
    result = run("plan", TARGET, "--out", "plan.json")
    assert result.exit_code == 1, result.output  # the broken report
    return "plan.json"


# --- the library: a saved plan rendered back ---------------------------------------------------


OLD_RUN = RunRef("run-7", "r7", "2026-09-01T10:00:00Z")
NEW_RUN = RunRef("run-9", "r9", "2026-10-30T10:00:00Z")
HISTORY = History(
    frozenset({"off_policy/mean", "staleness/rollout/mean"}),
    12,
    40,
    OLD_RUN,
    NEW_RUN,
    {"off_policy/mean": Span(OLD_RUN, OLD_RUN)},
)


@pytest.mark.parametrize(
    "options",
    [Options(), Options(mode=Mode.REPLACE, annotate=False), Options(history=HISTORY)],
    ids=["dual", "replace", "with-history"],
)
@pytest.mark.parametrize("verbose", [False, True])
def test_a_saved_plan_renders_as_the_plan_it_was_saved_from(tmp_path, options, verbose):
    planned = [plan_one(obj.source(), MIGRATION, options) for obj in OBJECTS]
    out = PlanFile(tmp_path / "plan.json", MIGRATION, options, TARGET, True, HOST)
    for p, obj in zip(planned, OBJECTS, strict=True):
        out.add(p, obj)
    out.close()
    made, shown = Plan(MIGRATION, options, tuple(planned)), saved_report(load_plan(out.path))
    assert plan_report.to_text(shown, verbose) == plan_report.to_text(made, verbose)
    assert plan_report.to_markdown(shown, verbose) == plan_report.to_markdown(made, verbose)
    assert plan_report.to_json(shown) == plan_report.to_json(made)
    assert [p.status for p in shown.objects] == [p.status for p in planned]


def test_a_plan_of_one_step_names_it_once(tmp_path):
    one = find_mapping("prime-rl").migration("2026.08.21", "2026.08.21")
    out = PlanFile(tmp_path / "plan.json", one, Options(), TARGET, True, HOST)
    out.close()
    shown = saved_report(load_plan(out.path))
    assert plan_report.header(shown.migration, shown.options) == plan_report.header(one, Options())
    assert len(shown.migration.steps) == 1


# --- the command -------------------------------------------------------------------------------


@pytest.mark.parametrize("format_", FORMATS)
def test_show_prints_what_plan_printed(run, saved, format_):
    planned = run("plan", TARGET, "--format", format_)
    shown = run("show", saved, "--format", format_)
    assert (shown.exit_code, shown.stderr) == (0, SHOWN)
    assert shown.stdout == planned.stdout
    assert "Broken" in shown.stdout  # the object that could not be read is shown too


def test_show_is_text_by_default_and_verbose_as_plan(run, saved):
    assert run("show", saved).stdout == run("plan", TARGET).stdout
    verbose = run("show", saved, "--verbose")
    assert verbose.stdout == run("plan", TARGET, "--verbose").stdout
    assert 'automation "eval-regression"' in verbose.stdout  # an unchanged object


def test_show_json_is_the_plan_document_without_what_apply_needs(run, saved):
    document = json.loads(run("show", saved, "--format", "json").stdout)
    assert list(document) == ["mapping", "mode", "history", "objects", "summary"]
    assert document["history"]["runs"] == 0  # the census: the demo project has no runs
    assert document["mapping"] == {"id": "prime-rl", "from": "2025.07.07", "to": "2026.10.25"}
    assert document["summary"]["to_change"] == 10
    assert document["summary"]["unreadable"] == 1
    assert all("fingerprint" not in o and "id" not in o for o in document["objects"])
    broken = next(o for o in document["objects"] if o["name"] == "Broken")
    assert broken["status"] == "error"
    assert broken["error"].startswith("not valid JSON")


def test_show_does_not_contact_wandb(run, saved, broken, monkeypatch):
    monkeypatch.setenv("WANDB_BASE_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("WANDB_API_KEY")
    before = len(broken.requests)
    result = run("show", saved)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1].startswith("Summary: 12 objects: 10 to change")
    assert len(broken.requests) == before


def test_show_an_empty_plan(run, live, tmp_path):
    PlanFile(tmp_path / "empty.json", MIGRATION, Options(), TARGET, False, HOST).close()
    result = run("show", "empty.json")
    assert (result.exit_code, result.stderr) == (0, SHOWN)
    assert result.stdout == (
        "Plan: prime-rl 2025.07.07 .. 2026.10.25, dual mode\n"
        f"{plan_report.LEGEND}\n"
        "\n"
        "Summary: 0 objects: 0 to change, 0 unchanged, 0 unreadable. "
        "0 warnings, 0 need review.\n"
    )


def _entry(document: dict, name: str) -> dict:
    return next(o for o in document["objects"] if o["name"] == name)


DAMAGE = {
    "where-not-a-list": lambda d: _entry(d, "Async health")["changes"][0].update(where="panel"),
    "where-of-numbers": lambda d: _entry(d, "Async health")["notes"][0].update(where=[1, 2]),
    "unknown-action": lambda d: _entry(d, "Async health")["changes"][0].update(action="moved"),
    "unknown-note-kind": lambda d: _entry(d, "Async health")["notes"][0].update(kind="shout"),
    "unknown-status": lambda d: _entry(d, "Overview").update(status="maybe"),
    "error-without-message": lambda d: _entry(d, "Broken").pop("error"),
    "name-a-number": lambda d: _entry(d, "Overview").update(name=7),
    "no-notes": lambda d: _entry(d, "Overview").pop("notes"),
    "changes-a-string": lambda d: _entry(d, "Overview").update(changes="all"),
    "object-a-list": lambda d: d["objects"].append([]),
    "target-null": lambda d: d.update(target=None),
    "mapping-version-number": lambda d: d["mapping"].update(to=2026),
}


@pytest.mark.parametrize("damage", list(DAMAGE.values()), ids=list(DAMAGE))
def test_a_damaged_plan_is_one_line_and_exit_2(run, saved, damage, tmp_path):
    document = json.loads((tmp_path / saved).read_text())
    damage(document)
    (tmp_path / saved).write_text(json.dumps(document))
    result = run("show", saved)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"Error: {saved}: damaged plan (")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "Error: cannot read plan plan.json: Expecting property name"),
        (b"", "Error: cannot read plan plan.json: Expecting value"),
        (b"\xff\xfe\x00plan", "Error: cannot read plan plan.json: 'utf-8' codec"),
        (b"[" * 100_000 + b"]" * 100_000, "Error: cannot read plan plan.json: nested too deeply"),
        (b'{"version": 1, "findings": []}', "Error: plan.json is not a wbmigrate plan"),
        (b'{"format": "wbmigrate-result/1"}', "Error: plan.json is not a wbmigrate plan"),
        (None, "Error: cannot read plan plan.json: [Errno 2] No such file or directory"),
    ],
    ids=["not-json", "empty", "not-utf8", "too-deep", "check-report", "apply-result", "missing"],
)
def test_a_file_that_is_no_plan_is_one_line_and_exit_2(
    run, tmp_path, monkeypatch, content, message
):
    monkeypatch.chdir(tmp_path)
    if content is not None:
        (tmp_path / "plan.json").write_bytes(content)
    result = run("show", "plan.json")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def test_a_folder_is_no_plan(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("show", ".")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: cannot read plan .: [Errno 21] Is a directory")
    assert result.stderr.count("\n") == 1
