"""`wbmigrate plan` over dashboards kept as files: the dry-run report, its formats, exit codes."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from helpers import FIXTURES

from wbmigrate import find_mapping

DEMO = FIXTURES / "demo-project"


def _digest(folder):
    return {
        p: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def small(tmp_path):
    shutil.copy(FIXTURES / "cases/report/line-metrics/before.json", tmp_path / "staleness.json")
    return tmp_path


def test_plan_text_exact(run, small):
    result = run("plan", str(small))
    assert (result.exit_code, result.stderr) == (0, "")
    assert (
        result.stdout
        == f"""\
Plan: prime-rl 2025.07.07 .. 2026.10.25, dual mode
~ renamed  + added beside the old key  - removed  x disabled  * note  ! warning  ? review

report "staleness"  ({small / "staleness.json"})
  panel grid (block 1) › panel "Staleness" (Run History Line Plot)
    + metrics[0]  staleness/rollout/mean (beside off_policy/mean)
    + metrics[1]  staleness/rollout/max (beside off_policy/max)
  (the report itself)
    * migration note  note added at the top

Summary: 1 object: 1 to change, 0 unchanged, 0 unreadable. 3 changes (2 added, 1 annotated). \
0 warnings, 0 need review.
"""
    )


def test_plan_writes_nothing(run):
    before = _digest(DEMO)
    assert run("plan", str(DEMO)).exit_code == 0
    assert _digest(DEMO) == before


def test_demo_project_uses_every_old_key():
    """Every old name of the 3-step mapping of 2026 the demo was made for (the whole history
    has 602)."""
    text = "".join(p.read_text() for p in DEMO.rglob("*.json"))
    mapping = find_mapping(FIXTURES / "mappings/valid/prime-rl-2026.yaml")
    for name in mapping.migration().old_names:
        assert name in text, name


def test_plan_demo_summary(run):
    result = run("plan", str(DEMO))
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == (
        "Summary: 10 objects: 9 to change, 1 unchanged, 0 unreadable. 50 changes (11 renamed, "
        "30 added, 3 removed, 2 disabled, 4 annotated). 14 warnings, 3 need review."
    )
    assert 'automation "eval-regression"' not in result.stdout  # unchanged objects are omitted
    # the 14th warning: the whole history knows the demo's async_level filter key is gone
    assert (
        "    ! filters[0]: orchestrator.async_level was removed in step 2026.05.25-2631 (#2631): "
        "runs after it have no value. The async barrier is hardcoded to one step"
    ) in result.stdout


def test_plan_json(run):
    plan = json.loads(run("plan", str(DEMO), "--format", "json").stdout)
    assert plan["mapping"] == {"id": "prime-rl", "from": "2025.07.07", "to": "2026.10.25"}
    assert plan["summary"]["actions"]["disabled"] == 2
    by_name = {o["name"]: o for o in plan["objects"]}
    assert by_name["eval-regression"]["status"] == "unchanged"
    (disabled, description) = by_name["dispatcher-stuck"]["changes"]
    assert (disabled["pointer"], disabled["old"], disabled["new"]) == ("/enabled", True, False)
    assert description["new"].startswith("[wbmigrate] Disabled: dispatcher/off_policy/mean")


def test_plan_markdown(run):
    out = run("plan", str(DEMO), "--format", "markdown").stdout
    assert out.startswith("## wbmigrate plan: prime-rl 2025.07.07 .. 2026.10.25, dual mode\n")
    assert (
        '| panel grid (block 3) › panel "Rollout staleness" (Run History Line Plot) | '
        "`metrics[0]` | added: staleness/rollout/mean (beside off_policy/mean) |"
    ) in out


def test_plan_replace_mode(run, small):
    out = run("plan", str(small), "--mode", "replace").stdout
    assert "~ metrics[0]  off_policy/mean -> staleness/rollout/mean" in out


def test_plan_to_an_earlier_step(run):
    plan = json.loads(run("plan", str(DEMO), "--to", "2026.08.21", "--format", "json").stdout)
    changed = {o["name"] for o in plan["objects"] if o["status"] == "changes"}
    assert changed == {"dispatcher-legacy"}


def test_plan_unreadable_objects_exit_1_and_the_rest_is_planned(run, small):
    (small / "broken.json").write_text('{"blocks": [')
    (small / "other.json").write_text('{"hello": 1}')
    (small / "latin1.json").write_bytes(b'{"x": "caf\xe9"}')
    result = run("plan", str(small))
    assert result.exit_code == 1
    assert "error: not valid JSON: Expecting value (line 1, column 13)" in result.stdout
    assert "error: not UTF-8 text" in result.stdout
    assert "2 unreadable" in result.stdout  # other.json is no spec: skipped, as check skips it
    assert 'report "staleness"' in result.stdout
    named = run("plan", str(small / "other.json"))  # a file named on its own is reported
    assert named.exit_code == 1
    assert "error: not a W&B report, workspace or automation spec (an object with keys hello)" in (
        named.stdout
    )


def test_a_bare_name_is_an_entity_and_the_error_says_it_is_no_folder_either(run, monkeypatch):
    """`plan NAME` plans every project of entity NAME; a mistyped folder name gets the W&B
    error and the hint that no such folder exists."""
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("HOME", "/nonexistent")
    result = run("plan", "nowhere")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith("Error: no API key for ")
    assert result.stderr.rstrip().endswith("(nowhere is no file or folder either)")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no/where/x"], "Error: no/where/x: no such file or folder, and not ENTITY/PROJECT\n"),
        ([str(DEMO), "--to", "1999"], "Error: mapping prime-rl has no version '1999'"),
        (
            [str(DEMO), "--mapping", str(FIXTURES / "mappings/invalid/cycle-self.yaml")],
            "Error: " + str(FIXTURES / "mappings/invalid/cycle-self.yaml") + ":13: cycle",
        ),
    ],
)
def test_plan_user_errors_exit_2(run, args, message):
    result = run("plan", *args)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(message)
    assert len(result.stderr.splitlines()) == 1


# --- streaming --------------------------------------------------------------------------------
