"""End to end against the local W&B-compatible server: plan, apply, rollback, export.

Every test drives the CLI as a user would (`WANDB_API_KEY` and `WANDB_BASE_URL` set) and checks
what the server stores, byte for byte.
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest
from helpers import FIXTURES, TARGET, expected_spec, snapshot, writes


def test_plan_writes_nothing(run, live):
    before = snapshot(live)
    result = run("plan", TARGET)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1].startswith("Summary: 11 objects: 10 to change")
    assert 'report "Async health (draft)"' in result.stdout
    assert "Found 4 reports (1 draft), 1 saved workspace, 6 automations." in result.stderr
    assert writes(live) == []
    assert snapshot(live) == before
    assert all(r.authorized for r in live.requests)


def test_plan_out_saves_fingerprints(run, live, tmp_path):
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["format"] == "wbmigrate-plan/2"
    assert plan["target"] == TARGET
    report = next(o for o in plan["objects"] if o["name"] == "Async health")
    view = live.state.views[report["id"]]
    assert report["fingerprint"]["updatedAt"] == view["updatedAt"]
    assert report["changes"][0]["pointer"].startswith("/blocks/")


def test_apply_migrates_every_object_exactly(run, live):
    originals = {i: v["spec"] for i, v in live.state.views.items()}
    expected = {i: expected_spec(live, i) for i in live.state.views}
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0, result.output
    assert "Summary: 10 applied." in result.stdout
    for view_id, view in live.state.views.items():
        assert view["spec"] == expected[view_id]
        assert (view["spec"] != originals[view_id]) or view["displayName"] == "Eval"
    disabled = live.state.triggers[live.state.find("dispatcher-stuck")]
    assert disabled["enabled"] is False
    assert disabled["description"].startswith("[wbmigrate] Disabled: dispatcher/off_policy/mean")
    moved = live.state.triggers[live.state.find("token-max")]
    assert '"name":"staleness/rollout/max"' in moved["triggeringCondition"]["filter"]


def test_mutations_copy_every_field_and_never_rename(run, live):
    before = {i: dict(v) for i, v in live.state.views.items()}
    assert run("apply", TARGET, "--yes").exit_code == 0
    for request in writes(live):
        sent = request.variables["input"]
        if "upsertView" in request.body:
            original = before[sent["id"]]
            assert {k: sent[k] for k in ("name", "type", "displayName", "description")} == {
                k: original[k] for k in ("name", "type", "displayName", "description")
            }
            assert sent.get("parentId") == original["parentId"]
        else:
            assert set(sent) >= {
                "id",
                "name",
                "description",
                "enabled",
                "scopeType",
                "scopeID",
                "triggeringEventType",
                "eventFilter",
                "triggeredActionType",
                "triggeredActionConfig",
            }


def test_second_apply_makes_no_mutation(run, live):
    assert run("apply", TARGET, "--yes").exit_code == 0
    count = len(writes(live))
    result = run("apply", TARGET, "--yes")
    assert (result.exit_code, result.stdout) == (0, f"Nothing to migrate in {TARGET}.\n")
    assert len(writes(live)) == count


def test_apply_without_yes_and_without_a_terminal_refuses(run, live):
    result = run("apply", TARGET)
    assert result.exit_code == 2
    assert "Error: refusing to write without --yes (no terminal to ask); nothing written" in (
        result.stderr
    )
    assert writes(live) == []


def test_drafts_are_migrated_by_default_and_can_be_skipped(run, live):
    draft = next(i for i, v in live.state.views.items() if v["type"] == "runs/draft")
    original = live.state.views[draft]["spec"]
    result = run("apply", TARGET, "--yes", "--drafts", "skip")
    assert result.exit_code == 0
    assert "Warning: drafts are skipped" in result.stderr
    assert live.state.views[draft]["spec"] == original
    assert run("apply", TARGET, "--yes").exit_code == 0
    assert live.state.views[draft]["spec"] != original
    assert live.state.views[draft]["type"] == "runs/draft"


def test_backups_are_private_complete_and_written_first(run, live, tmp_path):
    seen_backups = []
    live.hooks["WbmigrateUpsertView"] = lambda variables: seen_backups.append(
        sorted(p.name for p in (tmp_path / "backups").glob("report-*.json"))
    )
    before = {i: v["spec"] for i, v in live.state.views.items()}
    assert run("apply", TARGET, "--yes", "--backup-dir", "backups").exit_code == 0
    folder = tmp_path / "backups"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = list(folder.iterdir())
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["mapping"] == {"id": "prime-rl", "from": "2025.07.07", "to": "2026.10.25"}
    assert manifest["mode"] == "dual"
    journal = [json.loads(line) for line in (folder / "journal.jsonl").read_text().splitlines()]
    backed_up = [e for e in journal if e["event"] == "backed-up"]
    assert len(backed_up) == 10
    assert {e["id"] for e in journal if e["event"] == "written"} == {e["id"] for e in backed_up}
    for entry in backed_up:
        stored = json.loads((folder / entry["file"]).read_text())
        if entry["kind"] != "automation":
            assert stored["view"]["spec"] == before[entry["id"]]
    # every upsert found the backup of its report already on disk
    assert all(seen for seen in seen_backups)


def test_backup_file_names_stay_inside_the_folder(tmp_path):
    from wbmigrate.live.backup import Backup
    from wbmigrate.live.objects import LiveObject

    backup = Backup(tmp_path / "backups", {})
    trigger = json.loads((FIXTURES / "demo-project/automations/staleness-high.json").read_text())
    hostile = LiveObject.of_trigger({**trigger, "id": "../../outside"}, "team", "async-rl")
    backup.record(backup.keep(hostile, hostile.text))
    assert [p.name for p in tmp_path.iterdir()] == ["backups"]
    assert sorted(p.name for p in (tmp_path / "backups").iterdir()) == [
        "automation-_.._outside-e28b700f24.json",  # one name, no separator; the id's hash
        "journal.jsonl",
        "manifest.json",
    ]


def test_rollback_restores_exact_originals(run, live):
    before = snapshot(live)
    assert run("apply", TARGET, "--yes", "--backup-dir", "backups").exit_code == 0
    assert snapshot(live) != before
    result = run("rollback", "backups", "--yes")
    assert result.exit_code == 0, result.output
    assert "Summary: 10 restored." in result.stdout
    assert snapshot(live)[0] == before[0]
    for trigger_id, trigger in live.state.triggers.items():
        original = json.loads(before[1][trigger_id])
        for key in ("name", "description", "enabled", "triggeringCondition"):
            assert trigger[key] == original[key]
    assert (
        run("plan", TARGET).stdout.splitlines()[-1].startswith("Summary: 11 objects: 10 to change")
    )


def test_rollback_refuses_objects_edited_after_the_migration(run, live):
    assert run("apply", TARGET, "--yes", "--backup-dir", "backups").exit_code == 0
    report = live.state.find("Token masking")
    live.state.edit_view(report, lambda spec: spec.replace("Token masking", "Tokens (edited)"))
    result = run("rollback", "backups", "--yes")
    assert result.exit_code == 1
    assert re.search(r'skipped +report "Token masking"', result.stdout)
    assert "changed after the migration; --force overwrites that change" in result.stdout
    assert "Tokens (edited)" in live.state.views[report]["spec"]
    assert run("rollback", "backups", "--yes", "--force").exit_code == 0
    assert "Tokens (edited)" not in live.state.views[report]["spec"]


def test_a_run_killed_after_writing_is_still_rolled_back(run, live, tmp_path):
    """The digest of what is sent is journaled before the write: a run that died before
    confirming its writes (and a last line cut short) still leaves a complete undo."""
    before = snapshot(live)
    assert run("apply", TARGET, "--yes", "--backup-dir", "backups").exit_code == 0
    folder = tmp_path / "backups"
    journal = folder / "journal.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    assert '"written"' in lines[-1]
    # killed while confirming the last write, its line cut short, before the run's end record
    journal.write_text("".join(lines[:-1]) + '{"event": "backed-up", "fi')
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["journal"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    result = run("rollback", "backups", "--yes")
    assert result.exit_code == 0, result.output
    assert "Warning: the apply run did not finish" in result.stderr
    assert "Summary: 10 restored." in result.stdout
    assert snapshot(live)[0] == before[0]


def test_edit_between_plan_and_apply_is_refused_for_that_object_only(run, live):
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    report = live.state.find("Token masking")
    live.state.edit_view(report, lambda spec: spec.replace("Token masking", "Edited"))
    edited = live.state.views[report]["spec"]
    result = run("apply", TARGET, "--plan", "plan.json", "--yes")
    assert result.exit_code == 1
    assert re.search(
        r'skipped +report "Token masking" +changed since the saved plan; plan again', result.stdout
    )
    assert "Summary: 9 applied, 1 skipped." in result.stdout
    assert live.state.views[report]["spec"] == edited


def test_edit_between_read_and_write_is_refused(run, live):
    report = live.state.find("Dispatcher legacy")

    def colleague_edits(variables):
        if variables.get("id") == report and "edited" not in live.state.views[report]["spec"]:
            live.state.edit_view(report, lambda spec: spec.replace("June", "June (edited)"))

    live.hooks["WbmigrateView"] = colleague_edits
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 1
    assert re.search(
        r'skipped +report "Dispatcher legacy" +changed since it was read', result.stdout
    )
    assert "(edited)" in live.state.views[report]["spec"]
    assert "off_policy_level_max" in live.state.views[report]["spec"]


def test_saved_plan_for_another_project_or_mapping_is_refused(run, live, tmp_path):
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    result = run("apply", "team/other", "--plan", "plan.json", "--yes")
    assert result.exit_code == 2
    assert "Error: the plan is for team/async-rl, not team/other" in result.stderr
    plan = json.loads((tmp_path / "plan.json").read_text())
    plan["migration_sha256"] = "0" * 64
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    result = run("apply", TARGET, "--plan", "plan.json", "--yes")
    assert result.exit_code == 2
    assert "changed since the plan was made" in result.stderr
    assert writes(live) == []


def test_export_then_plan_the_files(run, live, tmp_path):
    live.state.add_view('{"blocks":[]}', "runs", "../../escape attempt")
    result = run("export", TARGET, "exported")
    assert result.exit_code == 0
    files = sorted(
        p.relative_to(tmp_path / "exported") for p in (tmp_path / "exported").rglob("*.json")
    )
    assert Path("reports/escape-attempt--VmlldzoxMTI_-bc7b27a6c3.json") in files
    assert all(".." not in str(f) for f in files)
    assert len(files) == 12
    document = json.loads((tmp_path / "exported" / files[-1]).read_text())
    assert document["wbmigrate"] == "wbmigrate-export/1"
    assert isinstance(document["spec"], dict)
    live_plan = run("plan", TARGET).stdout.splitlines()[-1]
    file_plan = run("plan", "exported").stdout.splitlines()[-1]
    assert file_plan == live_plan.replace("11 objects", "12 objects").replace(
        "1 unchanged", "2 unchanged"
    )


def test_the_wandb_sdk_reads_back_what_was_written(run, live, tmp_path, monkeypatch):
    assert run("apply", TARGET, "--yes").exit_code == 0
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    import wandb
    from wandb.automations import MetricThresholdFilter

    api = wandb.Api(api_key=live.api_key, overrides={"base_url": live.url, "entity": "team"})
    reports = {r.display_name: r for r in api.reports(TARGET)}
    metrics = reports["Async health"].spec["blocks"][4]["metadata"]["panelBankSectionConfig"][
        "panels"
    ][0]["config"]["metrics"]
    assert metrics == [
        "off_policy/mean",
        "staleness/rollout/mean",
        "off_policy/max",
        "staleness/rollout/max",
    ]
    automations = {a.name: a for a in api.automations(entity="team")}
    threshold = automations["staleness-high"].event.filter.metric.threshold_filter
    assert isinstance(threshold, MetricThresholdFilter)
    assert threshold.name == "staleness/rollout/max"
    assert automations["dispatcher-stuck"].enabled is False
    assert automations["eval-regression"].enabled is True


def test_api_key_never_appears_anywhere(run, wandb_server, tmp_path, monkeypatch):
    sentinel = "SENTINEL" + "s" * 40
    wandb_server.api_key = sentinel
    monkeypatch.setenv("WANDB_API_KEY", sentinel)
    monkeypatch.setenv("WANDB_BASE_URL", wandb_server.url)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    from testserver import Fault

    wandb_server.faults.append(Fault(status=500, operation="WbmigrateUpsertView"))
    outputs = [
        run("plan", TARGET, "-v", "--out", "plan.json", "--format", "json"),
        run("plan", TARGET, "-v"),
        run("plan", TARGET, "-v", "--format", "markdown"),
        run("apply", TARGET, "--yes", "--retries", "0", "--backup-dir", "backups"),  # one fails
        run("apply", TARGET, "--yes", "--backup-dir", "backups2"),
        run("export", TARGET, "exported"),
        run("rollback", "backups", "--yes"),
    ]
    outputs += [run("check", "exported", "--format", f) for f in ("text", "json", "sarif")]
    wandb_server.api_key = "another" + "k" * 40  # now the server refuses the key
    outputs.append(run("plan", TARGET))
    assert outputs[-1].exit_code == 2
    wandb_server.stop()  # and now it is gone
    outputs.append(run("apply", TARGET, "--yes", "--retries", "0"))
    assert outputs[-1].exit_code == 2
    for result in outputs:
        assert sentinel not in result.stdout + result.stderr
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert sentinel.encode() not in path.read_bytes(), path


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"WANDB_API_KEY": "wrong" * 10},
            "Error: W&B refused the API key for 127.0.0.1 (HTTP 401)",
        ),
        (
            {"WANDB_API_KEY": ""},
            "Error: no API key for 127.0.0.1:",  # with its port, as `wandb login` stores it
        ),
        (
            {"WANDB_BASE_URL": "http://wandb.example.com"},
            "Error: refusing to send the API key over plain http to wandb.example.com",
        ),
    ],
)
def test_connection_errors_exit_2(run, live, monkeypatch, env, message):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = run("plan", TARGET)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].startswith(message)


def test_key_from_netrc(run, live, monkeypatch, tmp_path):
    monkeypatch.delenv("WANDB_API_KEY")
    netrc = tmp_path / "home" / ".netrc"
    port = live.url.rpartition(":")[2]  # `wandb login --host` names the machine with its port
    netrc.write_text(f"machine 127.0.0.1:{port}\n  login user\n  password {live.api_key}\n")
    netrc.chmod(0o600)
    assert run("plan", TARGET).exit_code == 0


def test_unknown_project(run, live):
    result = run("plan", "team/nope")
    assert result.exit_code == 2
    assert "Error: project team/nope not found" in result.stderr


def test_demo_files_and_live_project_plan_the_same(run, live):
    """The demo folder is the live project: the same changes either way."""
    files = json.loads(run("plan", str(FIXTURES / "demo-project"), "--format", "json").stdout)
    remote = json.loads(run("plan", TARGET, "--format", "json", "--drafts", "skip").stdout)
    assert files["summary"] == remote["summary"]


def test_429_waits_as_long_as_retry_after_says(run, live, clock):
    from testserver import Fault

    live.faults.append(Fault(status=429, headers={"Retry-After": "1"}))
    result = run("plan", TARGET)
    assert result.exit_code == 0
    assert clock.waits == [1]  # the wait W&B asked for
    # the refused request is sent again (listings run side by side, so not necessarily next)
    refused = live.requests[0]
    again = [
        r
        for r in live.requests[1:]
        if (r.operation, r.variables) == (refused.operation, refused.variables)
    ]
    assert len(again) == 1


def test_transient_errors_and_dropped_connections_are_retried(run, live):
    from testserver import Fault

    live.faults += [Fault(status=500), Fault(status=502), Fault(drop=True), Fault(status=503)]
    assert run("plan", TARGET, "--retries", "4").exit_code == 0
    assert live.faults == []


def test_a_failing_object_never_stops_the_batch_and_rerun_converges(run, live):
    from testserver import Fault

    live.faults += [Fault(status=500, operation="WbmigrateUpsertView")] * 2
    result = run("apply", TARGET, "--yes", "--jobs", "1", "--retries", "1")
    assert result.exit_code == 1
    assert re.search(r"failed +report \"Async health\" +.*HTTP 500", result.stdout)
    assert "Summary: 9 applied, 1 failed." in result.stdout
    rerun = run("apply", TARGET, "--yes")
    assert rerun.exit_code == 0
    assert "Summary: 1 applied." in rerun.stdout
    assert run("apply", TARGET, "--yes").stdout == f"Nothing to migrate in {TARGET}.\n"


def _in_terminal(args, answer, env_from, cwd):
    """Run the real console script in a pseudo-terminal and answer its prompt."""
    import os
    import pty
    import subprocess
    import sys

    primary, secondary = pty.openpty()
    env = {
        **os.environ,
        "WANDB_API_KEY": env_from.api_key,
        "WANDB_BASE_URL": env_from.url,
        "COLUMNS": "100",
    }
    script = Path(sys.executable).parent / "wbmigrate"
    process = subprocess.Popen(
        [str(script), *args],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env=env,
        cwd=cwd,
        close_fds=True,
    )
    os.close(secondary)
    output = b""
    answered = False
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
        if not answered and b"[y/N]" in output:
            os.write(primary, answer)
            answered = True
    os.close(primary)
    return process.wait(timeout=60), output.decode(errors="replace")


def test_at_a_terminal_apply_asks_and_shows_progress(live, tmp_path):
    code, output = _in_terminal(["apply", TARGET], b"n\n", live, tmp_path)
    assert code == 1
    assert "Write 10 objects in team/async-rl? [y/N]" in output
    assert "Cancelled; nothing written." in output
    assert writes(live) == []
    code, output = _in_terminal(["apply", TARGET], b"y\n", live, tmp_path)
    assert code == 0, output
    assert "Applying" in output  # the progress bar, on a terminal
    assert "Summary: 10 applied." in output
