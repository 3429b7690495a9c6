"""Terraform's CI contracts: `plan --detailed-exitcode` (0 nothing to change, 2 changes, 1 any
error; Ctrl-C 130), and `apply` / `rollback --format json`, a versioned document validated
against schemas/live-result.schema.json. End to end, against the local W&B test server."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys

import jsonschema
import pytest
from helpers import FIXTURES, REPO, TARGET, hold_writes, interrupt, until, writes

from wbmigrate.live.outcomes import WriteStatus
from wbmigrate.report.live import RESULT_FORMAT

SCHEMA = json.loads((REPO / "schemas" / "live-result.schema.json").read_text())
DEMO = FIXTURES / "demo-project"
INVALID_MAPPING = FIXTURES / "mappings" / "invalid" / "cycle-self.yaml"


def valid(stdout: str) -> dict:
    """The document on stdout, checked against the schema."""
    document = json.loads(stdout)
    jsonschema.validate(document, SCHEMA)
    return document


# --- plan --detailed-exitcode: 0 / 2 ------------------------------------------------------------


def test_changes_exit_2_and_the_report_is_the_same(run, live):
    plain = run("plan", TARGET)
    detailed = run("plan", TARGET, "--detailed-exitcode")
    assert (plain.exit_code, detailed.exit_code) == (0, 2)
    assert (detailed.stdout, detailed.stderr) == (plain.stdout, plain.stderr)


def test_an_already_migrated_project_exits_0(run, live):
    assert run("apply", TARGET, "--yes").exit_code == 0
    result = run("plan", TARGET, "--detailed-exitcode")
    assert result.exit_code == 0, result.output
    assert "0 to change, 11 unchanged, 0 unreadable" in result.stdout


def test_a_saved_plan_with_changes_exits_2_and_is_saved(run, live, tmp_path):
    result = run("plan", "--detailed-exitcode", TARGET, "--out", "plan.json", "--format", "json")
    assert result.exit_code == 2
    assert (tmp_path / "plan.json").exists()
    assert json.loads(result.stdout)["summary"]["to_change"] == 10


def test_a_folder_with_changes_exits_2(run):
    result = run("plan", str(DEMO), "--detailed-exitcode")
    assert (result.exit_code, result.stderr) == (2, "")
    assert "10 objects: 9 to change, 1 unchanged, 0 unreadable" in result.stdout


def test_a_folder_with_nothing_to_change_exits_0(run, tmp_path):
    shutil.copy(DEMO / "automations" / "eval-regression.json", tmp_path)
    result = run("plan", str(tmp_path), "--detailed-exitcode")
    assert (result.exit_code, result.stderr) == (0, "")
    assert "1 object: 0 to change, 1 unchanged, 0 unreadable" in result.stdout


def test_a_folder_with_no_spec_at_all_exits_0(run, tmp_path):
    (tmp_path / "package.json").write_text('{"name": "x"}')
    assert run("plan", str(tmp_path), "--detailed-exitcode").exit_code == 0


# --- plan --detailed-exitcode: 1, where the plain plan exits 2 -----------------------------------

ERRORS = {
    "unknown-project": (["team/nope"], "Error: project team/nope not found"),
    "invalid-mapping": (
        [TARGET, "--mapping", str(INVALID_MAPPING)],
        f"Error: {INVALID_MAPPING}:13: cycle: metric 'a/x' is renamed to itself [cycle]",
    ),
    "unknown-mapping": ([TARGET, "--mapping", "nope"], "Error: unknown mapping 'nope'"),
    "unknown-version": (
        [TARGET, "--to", "1999.01.01"],
        "Error: mapping prime-rl has no version '1999.01.01'",
    ),
    "bad-format": ([TARGET, "--format", "bogus"], "Error: Invalid value for '--format'"),
    "unknown-option": ([TARGET, "--bogus"], "Error: No such option '--bogus'"),
    "out-into-missing-folder": (
        [TARGET, "--out", "missing/plan.json"],
        "Error: --out missing/plan.json: no such folder; nothing read",
    ),
    "missing-path": (["./missing"], "Error: ./missing: no such file or folder"),
    "out-for-a-folder": ([str(DEMO), "--out", "plan.json"], "Error: --out saves a plan"),
}


@pytest.mark.parametrize(("args", "message"), list(ERRORS.values()), ids=list(ERRORS))
def test_an_error_exits_1_where_plain_plan_exits_2(run, live, args, message):
    plain = run("plan", *args)
    detailed = run("plan", *args, "--detailed-exitcode")
    assert (plain.exit_code, detailed.exit_code) == (2, 1), detailed.output
    assert detailed.stdout == ""
    assert detailed.stderr.splitlines()[-1].startswith(message)
    assert detailed.stderr == plain.stderr  # the same message, only the code differs
    assert writes(live) == []


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"WANDB_API_KEY": "wrong" * 10}, "Error: W&B refused the API key"),
        ({"WANDB_API_KEY": ""}, "Error: no API key for 127.0.0.1:"),
        ({"WANDB_BASE_URL": "http://127.0.0.1:9"}, "Error: cannot reach http://127.0.0.1:9"),
    ],
    ids=["refused-key", "no-key", "connection-refused"],
)
def test_auth_and_connection_errors_exit_1(run, live, monkeypatch, env, message):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = run("plan", TARGET, "--detailed-exitcode", "--retries", "0")
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[-1].startswith(message)


def test_an_unreadable_object_exits_1_with_or_without_the_flag(run, live):
    live.state.add_view("{not json", "runs", "Broken")
    for args in ([], ["--detailed-exitcode"]):
        result = run("plan", TARGET, *args)
        assert result.exit_code == 1
        assert "10 to change, 1 unchanged, 1 unreadable" in result.stdout


def test_an_unreadable_file_exits_1(run, tmp_path):
    shutil.copy(DEMO / "automations" / "eval-regression.json", tmp_path)
    (tmp_path / "broken.json").write_text('{"blocks": [')
    result = run("plan", str(tmp_path), "--detailed-exitcode")
    assert result.exit_code == 1
    assert "0 to change, 1 unchanged, 1 unreadable" in result.stdout


def test_the_help_states_the_contract(run):
    help_text = " ".join(run("plan", "--help").stdout.split())
    assert "--detailed-exitcode Exit 0 when nothing would change, 2 when something would" in (
        help_text
    )
    assert (
        "With --detailed-exitcode (terraform's): 0 when every object was planned and none would "
        "change, 2 when every object was planned and some would change, 1 on any error (usage, "
        "mapping, auth or connection, or an object that could not be read), 130 after Ctrl-C."
    ) in help_text


# --- Ctrl-C -----------------------------------------------------------------------------------


def start(live, cwd, *args: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "WANDB_API_KEY": live.api_key,
        "WANDB_BASE_URL": live.url,
        "PYTHONPATH": str(REPO),
        "HOME": str(cwd / "home"),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "wbmigrate", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("args", [[], ["--detailed-exitcode"]], ids=["plain", "detailed"])
def test_ctrl_c_during_plan_exits_130(live, tmp_path, args):
    live.latency = 2.0
    process = start(live, tmp_path, "plan", TARGET, "--out", "plan.json", *args)
    until(lambda: live.requests, "nothing asked")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, out + err
    assert err.splitlines()[-1] == "Interrupted; nothing written."
    assert "Traceback" not in err
    assert "Aborted!" not in err
    assert not (tmp_path / "plan.json").exists()


# --- apply / rollback --format json ----------------------------------------------------------


def test_the_schema_is_valid_and_knows_every_status_and_the_format():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$defs"]["status"]["enum"] == [s.value for s in WriteStatus]
    assert SCHEMA["$defs"]["summary"]["required"] == ["objects", *(s.value for s in WriteStatus)]
    assert SCHEMA["properties"]["format"]["const"] == RESULT_FORMAT


def test_apply_then_apply_again_then_rollback_as_json(run, live):
    applied = run("apply", TARGET, "--yes", "--backup-dir", "b", "--format", "json")
    assert applied.exit_code == 0, applied.output
    document = valid(applied.stdout)
    assert {k: document[k] for k in ("format", "command", "target", "backup")} == {
        "format": "wbmigrate-result/1",
        "command": "apply",
        "target": TARGET,
        "backup": "b",
    }
    assert document["summary"] == {
        "objects": 10,
        **{s.value: 0 for s in WriteStatus},
        "applied": 10,
    }
    health = next(o for o in document["objects"] if o["name"] == "Async health" and o["draft"])
    assert health == {
        "kind": "report",
        "id": health["id"],
        "name": "Async health",
        "draft": True,
        "status": "applied",
        "detail": "",
        "changes": 17,
    }
    assert (document["interrupted"], document["not_started"]) == (False, 0)
    # the lines after the table go to stderr: stdout is the document alone
    assert applied.stderr.splitlines()[-1] == "Backups: b  (undo: wbmigrate rollback b --yes)"

    again = run("apply", TARGET, "--yes", "--format", "json")
    assert again.exit_code == 0
    nothing = valid(again.stdout)
    assert (nothing["objects"], nothing["backup"], nothing["summary"]["objects"]) == ([], None, 0)
    assert again.stderr.splitlines()[-1] == f"Nothing to migrate in {TARGET}."

    undone = run("rollback", "b", "--yes", "--format", "json")
    assert undone.exit_code == 0, undone.output
    restored = valid(undone.stdout)
    assert (restored["command"], restored["target"], restored["backup"]) == (
        "rollback",
        TARGET,
        "b",
    )
    assert restored["summary"]["restored"] == 10
    assert {o["id"] for o in restored["objects"]} == {o["id"] for o in document["objects"]}


def test_objects_gone_or_unreadable_are_in_the_document_and_exit_1(run, live):
    """A report deleted since the saved plan, and one W&B holds but nobody can parse."""
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    del live.state.views[live.state.find("Token masking")]
    live.state.add_view("{not json", "runs", "Broken")
    result = run("apply", TARGET, "--plan", "plan.json", "--yes", "--format", "json")
    assert result.exit_code == 1
    document = valid(result.stdout)
    outcomes = {o["name"]: (o["status"], o["detail"]) for o in document["objects"]}
    assert outcomes["Token masking"] == ("failed", "no longer exists")
    assert outcomes["Broken"][0] == "skipped"
    assert outcomes["Broken"][1].startswith("not read: not valid JSON")
    summary = document["summary"]
    assert (summary["objects"], summary["applied"], summary["failed"], summary["skipped"]) == (
        11,
        9,
        1,
        1,
    )


def test_nothing_applied_but_failures_is_a_document_and_exit_1(run, live):
    assert run("apply", TARGET, "--yes").exit_code == 0
    live.state.add_view("{not json", "runs", "Broken")
    result = run("apply", TARGET, "--yes", "--format", "json")
    assert result.exit_code == 1
    document = valid(result.stdout)
    assert document["backup"] is None
    assert [o["status"] for o in document["objects"]] == ["skipped"]


def test_rollback_json_with_a_refused_object_exits_1(run, live):
    assert run("apply", TARGET, "--yes", "--backup-dir", "b").exit_code == 0
    report = live.state.find("Dispatcher legacy")
    live.state.edit_view(report, lambda spec: spec.replace("June", "June (edited)"))
    result = run("rollback", "b", "--yes", "--format", "json")
    assert result.exit_code == 1
    document = valid(result.stdout)
    refused = [o for o in document["objects"] if o["status"] != "restored"]
    assert [(o["id"], o["status"]) for o in refused] == [(report, "skipped")]
    assert refused[0]["detail"]
    assert document["summary"]["restored"] == 9


def test_errors_print_no_document(run, live):
    refused = run("apply", TARGET, "--format", "json")  # no --yes and no terminal
    assert (refused.exit_code, refused.stdout) == (2, "")
    missing = run("rollback", "no-such-backup", "--yes", "--format", "json")
    assert (missing.exit_code, missing.stdout) == (2, "")


def test_ctrl_c_during_apply_still_prints_a_valid_document(live, tmp_path):
    args = ["apply", TARGET, "--yes", "--jobs", "2", "--backup-dir", "b", "--format", "json"]
    gate = hold_writes(live)
    process = start(live, tmp_path, *args)
    until(lambda: live.mutations(), "nothing written")
    said = interrupt(process)
    gate.set()
    out, err = process.communicate(timeout=60)
    err = said + err
    assert process.returncode == 130, out + err
    document = valid(out)
    applied = [o for o in document["objects"] if o["status"] == "applied"]
    assert 1 <= len(applied) == len(live.mutations()) <= 4
    assert document["interrupted"] is True
    assert document["not_started"] == 10 - len(applied)
    assert document["backup"] == "b"
    assert f"Interrupted: {10 - len(applied)} objects not started." in err
    assert re.search(r"^Backups: b  \(undo: wbmigrate rollback b --yes\)$", err, re.M)
