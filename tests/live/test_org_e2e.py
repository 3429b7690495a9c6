"""History-aware migration across an organisation, end to end against the local server: the
boundary from real runs, blank-panel warnings, `plan ENTITY`, `apply ENTITY` and a rollback
of all three projects (or one), with a project that answers 403 among them."""

from __future__ import annotations

import json
import os
import re
import shutil

import jsonschema
import pytest
import referencing
from helpers import REPO, UNLOGGED, organisation, returns_soon, snapshot

from testserver import WandbServer

SCHEMAS = REPO / "schemas"


def states(server):
    return {f"{s.entity}/{s.project}": s for s in server.states}


def everything(server):
    """Every project's specs and triggers (but W&B's own `updatedAt`, which every save moves)."""
    return {
        target: (
            {i: v["spec"] for i, v in s.views.items()},
            {i: {k: v for k, v in t.items() if k != "updatedAt"} for i, t in s.triggers.items()},
        )
        for target, s in states(server).items()
    }


def note_of(spec: dict) -> str:
    """A report's migration note (after the empty paragraph W&B's SDK puts first)."""
    return next(b["content"] for b in spec["blocks"] if b["type"] == "markdown-block")


# --- the boundary, from the project's runs ---------------------------------------------------


def test_plan_names_the_last_old_and_first_new_run(run, org):
    result = run("plan", "team/async-rl")
    assert result.exit_code == 0
    assert (
        "Runs: 7 read, logging the keys of steps 2025.07.08 (#536) .. 2026.10.25 (#4253). "
        'Boundary: the last run with old keys is "grpo-old-build" '
        '(2026-11-04); the first with new keys is "grpo-upgrade" (2026-11-02).'
    ) in result.stdout


def test_the_note_states_the_projects_own_boundary_with_links(run, org):
    assert run("apply", "team/async-rl", "--yes").exit_code == 0
    demo = states(org)["team/async-rl"]
    spec = json.loads(demo.views[demo.find("Async health")]["spec"])
    note = note_of(spec)
    assert "**Boundary 2026-10-25** (#4253)" in note  # the upstream change, beside it
    assert (
        f"the last run that logged the old keys is [grpo-old-build]"
        f"({org.url}/team/async-rl/runs/grpo-old-build) (2026-11-04)"
    ) in note
    assert f"is [grpo-upgrade]({org.url}/team/async-rl/runs/grpo-upgrade) (2026-11-02)" in note


def test_a_project_without_new_key_runs_has_not_upgraded(run, org):
    result = run("plan", "team/qwen3-8b")
    assert 'Not upgraded: no run logged the new keys; the last run with old keys is "qwen-2"' in (
        result.stdout
    )
    assert run("apply", "team/qwen3-8b", "--yes").exit_code == 0
    qwen = states(org)["team/qwen3-8b"]
    note = note_of(json.loads(qwen.views[qwen.find("Qwen health")]["spec"]))
    assert "**This project has not upgraded yet:** none of its 2 runs logged the new keys" in note


def test_the_blank_panel_warning_fires_on_the_key_nobody_logged_and_no_other(run, org):
    result = run("plan", "team/async-rl")
    blank = [line for line in result.stdout.splitlines() if "no run has logged" in line]
    assert blank
    assert all(UNLOGGED in line for line in blank)


def test_a_dual_companion_nobody_logged_adds_nothing(run, org):
    demo = states(org)["team/async-rl"]
    for run_id in list(demo.runs):
        demo.runs[run_id]["summaryMetrics"] = "{}"
        demo.runs[run_id]["historyKeys"] = {"keys": {"staleness/token/mean": {}}, "lastStep": 1}
    out = run("plan", "team/async-rl").stdout
    assert "no run has logged off_policy/token/mean either (its 7 runs)" in out
    assert "--mode replace would keep only the new key" in out


def test_an_alert_moved_to_a_key_nobody_logs(run, org):
    demo = states(org)["team/async-rl"]
    for run_id in list(demo.runs):
        demo.runs[run_id]["summaryMetrics"] = "{}"
        demo.runs[run_id]["historyKeys"] = {"keys": {"staleness/token/mean": {}}, "lastStep": 1}
    out = run("plan", "team/async-rl").stdout
    assert "no run has logged staleness/rollout/dropped (its 7 runs): the alert cannot fire" in out


def test_runs_0_reads_no_run(run, org):
    result = run("plan", "team/async-rl", "--runs", "0")
    assert "Runs:" not in result.stdout
    assert not [r for r in org.requests if r.operation.startswith("WbmigrateRun")]


def test_the_cap_reads_the_newest_runs_only(run, org):
    result = run("plan", "team/async-rl", "--runs", "2")
    assert "Runs: the 2 newest of 7 read, logging the keys of step 2026.10.25 (#4253)." in (
        result.stdout
    )


def test_a_saved_plan_keeps_its_census(run, org):
    assert run("plan", "team/async-rl", "--out", "plan.json").exit_code == 0
    demo = states(org)["team/async-rl"]
    demo.add_run("grpo-new-3", "2026-11-20T08:00:00Z", ["loss"])  # a run after the plan
    result = run("apply", "team/async-rl", "--plan", "plan.json", "--yes")
    assert result.exit_code == 0, result.stdout
    assert "skipped" not in result.stdout


def test_finished_runs_are_read_once(run, org):
    run("plan", "team/async-rl")
    before = len([r for r in org.requests if r.operation == "WbmigrateRunKeys"])
    run("plan", "team/async-rl")
    after = len([r for r in org.requests if r.operation == "WbmigrateRunKeys"])
    assert (before, after) == (1, 1)


# --- an organisation ----------------------------------------------------------------------------


def test_plan_entity_prints_the_table_then_the_details(run, org):
    result = run("plan", "team")
    lines = result.stdout.splitlines()
    assert result.exit_code == 1  # one project could not be read
    table = lines[lines.index("") + 1 : lines.index("") + 5]
    assert table[0].split() == [
        "project",
        "objects",
        "to",
        "change",
        "warnings",
        "review",
        "upgraded",
        "boundary",
    ]
    assert table[1].split()[:7] == ["team/async-rl", "10", "9", "16", "3", "yes", "last"]
    assert table[2].split()[:7] == ["team/qwen3-8b", "1", "1", "3", "1", "no", "last"]
    assert table[3].startswith("team/locked")
    assert "HTTP 403" in table[3]
    assert "== team/async-rl" in lines
    assert "== team/qwen3-8b" in lines
    assert "3 projects (1 could not be read), 1 upgraded." in result.stdout


def test_plan_a_glob_and_a_list(run, org):
    assert run("plan", "team/qwen3-*").stdout.count("== ") == 1
    both = run("plan", "team/qwen3-8b", "team/async-rl")
    assert both.exit_code == 0
    assert [line for line in both.stdout.splitlines() if line.startswith("== ")] == [
        "== team/qwen3-8b",
        "== team/async-rl",
    ]


def test_a_glob_matching_nothing_is_one_line(run, org):
    result = run("plan", "team/llama-*")
    assert (result.exit_code, result.stdout) == (2, "")
    assert (
        result.stderr.strip().splitlines()[-1] == "Error: team/llama-*: no project of team matches"
    )


def test_plan_entity_json_and_markdown(run, org):
    document = json.loads(run("plan", "team", "--format", "json").stdout)
    assert document["format"] == "wbmigrate-plan-projects/2"
    projects = {p["target"]: p for p in document["projects"]}
    assert projects["team/async-rl"]["history"]["first_new"]["name"] == "grpo-upgrade"
    assert projects["team/qwen3-8b"]["history"]["upgraded"] is False
    assert "HTTP 403" in projects["team/locked"]["error"]
    assert document["summary"]["projects"] == 3
    markdown = run("plan", "team", "--format", "markdown").stdout
    assert "| team/async-rl | 10 | 9 | 16 | 3 | yes |" in markdown


def test_apply_entity_then_rollback_restores_all_three_exactly(run, org):
    before = everything(org)
    result = run("apply", "team", "--yes", "--backup-dir", "backups")
    assert result.exit_code == 1  # team/locked could not be read: reported, the others done
    assert "team/locked: not read (W&B refused access" in result.stdout
    assert "Applied to team/async-rl:" in result.stdout
    assert "Applied to team/qwen3-8b:" in result.stdout
    after = everything(org)
    assert after["team/async-rl"] != before["team/async-rl"]
    assert after["team/qwen3-8b"] != before["team/qwen3-8b"]
    assert after["team/locked"] == before["team/locked"]
    restored = run("rollback", "backups", "--yes")
    assert restored.exit_code == 0, restored.stdout
    assert everything(org) == before


def test_rollback_one_project_of_the_set(run, org):
    before = everything(org)
    run("apply", "team", "--yes", "--backup-dir", "backups")
    migrated = everything(org)
    result = run("rollback", "backups", "--project", "team/qwen3-8b", "--yes")
    assert result.exit_code == 0
    now = everything(org)
    assert now["team/qwen3-8b"] == before["team/qwen3-8b"]
    assert now["team/async-rl"] == migrated["team/async-rl"]
    stranger = run("rollback", "backups", "--project", "team/nope", "--yes")
    assert stranger.exit_code == 2
    assert "holds no backup of team/nope" in stranger.stderr


def test_each_sub_folder_is_a_whole_backup(run, org, tmp_path):
    before = everything(org)
    run("apply", "team", "--yes", "--backup-dir", "backups")
    manifest = json.loads((tmp_path / "backups" / "manifest.json").read_text())
    assert manifest["format"] == "wbmigrate-backup-set/1"
    sub = tmp_path / "backups" / manifest["projects"]["team/qwen3-8b"]
    assert run("rollback", str(sub), "--yes").exit_code == 0
    assert everything(org)["team/qwen3-8b"] == before["team/qwen3-8b"]


# --- a damaged set restores nothing --------------------------------------------------------


def sub_backup(tmp_path, target: str):
    """The sub-folder of `target` in the set `apply team` wrote to `backups`."""
    manifest = json.loads((tmp_path / "backups" / "manifest.json").read_text())
    return tmp_path / "backups" / manifest["projects"][target]


def assert_refused(result, *problems: str) -> None:
    """Exit 2 before anything is restored, with one `Error:` line per problem, in order."""
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == len(problems), result.stderr
    for line, problem in zip(errors, problems, strict=True):
        assert re.search(problem, line), line
    assert errors[-1].endswith("; nothing restored")
    assert "Restoring" not in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "only",
    [(), ("--project", "team/qwen3-8b"), ("--project", "team/async-rl")],
    ids=["all", "the-missing-one", "another-one"],
)
def test_a_set_missing_a_sub_backup_the_run_started_restores_nothing(run, org, tmp_path, only):
    """Once exit 0, "2 restored" (of one project) and no warning; with --project on the
    deleted one, "Restoring nothing" and exit 0."""
    run("apply", "team", "--yes", "--backup-dir", "backups")
    migrated = everything(org)
    shutil.rmtree(sub_backup(tmp_path, "team/qwen3-8b"))
    result = run("rollback", "backups", *only, "--yes")
    assert_refused(
        result, r"team-qwen3-8b-\w+: missing, but the set's journal says team/qwen3-8b was started"
    )
    assert everything(org) == migrated


def test_swapped_sub_backups_restore_nothing(run, org, tmp_path):
    """Once `--project team/qwen3-8b` restored team/async-rl's objects, exit 0."""
    run("apply", "team", "--yes", "--backup-dir", "backups")
    migrated = everything(org)
    async_rl, qwen = sub_backup(tmp_path, "team/async-rl"), sub_backup(tmp_path, "team/qwen3-8b")
    async_rl.rename(tmp_path / "aside")
    qwen.rename(async_rl)
    (tmp_path / "aside").rename(qwen)
    result = run("rollback", "backups", "--project", "team/qwen3-8b", "--yes")
    assert_refused(
        result,
        r"team-async-rl-\w+: the backup of 'team/qwen3-8b', not of team/async-rl",
        r"team-qwen3-8b-\w+: the backup of 'team/async-rl', not of team/qwen3-8b",
    )
    assert everything(org) == migrated


def test_a_sub_backup_cut_short_with_its_own_end_record_restores_nothing(run, org, tmp_path):
    """Lines cut from a sub-backup's journal, and its manifest's record of where the journal
    ended deleted with them, read alone as a run that did not finish (a warning): in the set,
    whose journal says where it ended, it is refused."""
    run("apply", "team", "--yes", "--backup-dir", "backups")
    migrated = everything(org)
    sub = sub_backup(tmp_path, "team/async-rl")
    journal = sub / "journal.jsonl"
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:-2]))
    manifest = json.loads((sub / "manifest.json").read_text())
    del manifest["journal"]
    (sub / "manifest.json").write_text(json.dumps(manifest))
    result = run("rollback", "backups", "--yes")
    assert_refused(
        result, r"team-async-rl-\w+: its journal does not end where the set's journal says it did"
    )
    assert everything(org) == migrated


def test_a_sub_backup_of_another_host_in_a_set_restores_nothing_even_forced(
    run, org, tmp_path, monkeypatch
):
    """Alone it is refused (exit 2); in the set it was restored, and with --force host B's
    title and description landed on host A's object."""
    run("apply", "team", "--yes", "--backup-dir", "backups")
    migrated = everything(org)
    other = organisation()[1]
    [(view_id, view)] = other.views.items()
    view.update(displayName="Host B's title", description="Host B's description")
    with WandbServer(other) as host_b:
        monkeypatch.setenv("WANDB_BASE_URL", host_b.url)
        assert run("apply", "team/qwen3-8b", "--yes", "--backup-dir", "b").exit_code == 0
    monkeypatch.setenv("WANDB_BASE_URL", org.url)
    shutil.rmtree(sub_backup(tmp_path, "team/qwen3-8b"))
    (tmp_path / "b").rename(sub_backup(tmp_path, "team/qwen3-8b"))
    sent = len([r for r in org.requests if "mutation" in r.body])
    alone = run("rollback", str(sub_backup(tmp_path, "team/qwen3-8b")), "--yes", "--force")
    assert alone.exit_code == 2
    result = run("rollback", "backups", "--yes", "--force")
    assert_refused(result, rf"made on '{host_b.url}', but the set on '{org.url}'")
    assert everything(org) == migrated
    assert states(org)["team/qwen3-8b"].views[view_id]["displayName"] == "Qwen health"
    assert len([r for r in org.requests if "mutation" in r.body]) == sent


def test_apply_entity_json_matches_its_schema(run, org):
    result = run("apply", "team", "--yes", "--backup-dir", "backups", "--format", "json")
    document = json.loads(result.stdout)
    registry = referencing.Registry().with_resources(
        [
            (schema["$id"], referencing.Resource.from_contents(schema))
            for schema in (
                json.loads((SCHEMAS / name).read_text())
                for name in ("live-result.schema.json", "live-results.schema.json")
            )
        ]
    )
    schema = json.loads((SCHEMAS / "live-results.schema.json").read_text())
    jsonschema.Draft202012Validator(schema, registry=registry).validate(document)
    assert document["unreadable"][0]["target"] == "team/locked"
    restored = json.loads(run("rollback", "backups", "--yes", "--format", "json").stdout)
    jsonschema.Draft202012Validator(schema, registry=registry).validate(restored)
    assert restored["summary"]["restored"] == document["summary"]["applied"]


def test_a_project_failing_never_stops_the_others_even_first(run, org):
    """The forbidden project listed first: the others are still planned and migrated."""
    before = snapshot(org)
    result = run("apply", "team/locked", "team/async-rl", "--yes")
    assert result.exit_code == 1
    assert snapshot(org) != before


def test_three_readable_projects_are_all_migrated_and_restored_exactly(run, org):
    states(org)["team/locked"].forbidden = False
    before = everything(org)
    assert run("apply", "team", "--yes", "--backup-dir", "backups").exit_code == 0
    migrated = everything(org)
    assert all(migrated[t] != before[t] for t in ("team/async-rl", "team/qwen3-8b"))
    assert run("rollback", "backups", "--yes").exit_code == 0
    assert everything(org) == before


def test_the_wandb_sdk_reads_back_the_boundary_note(run, org, tmp_path, monkeypatch):
    assert run("apply", "team/qwen3-8b", "team/async-rl", "--yes").exit_code == 0
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    import wandb

    api = wandb.Api(api_key=org.api_key, overrides={"base_url": org.url, "entity": "team"})
    assert {p.name for p in api.projects("team")} == {"async-rl", "qwen3-8b", "locked"}
    reports = {r.display_name: r for r in api.reports("team/async-rl")}
    note = note_of(reports["Async health"].spec)
    assert "**This project's boundary:**" in note
    assert "[grpo-old-build]" in note
    qwen = {r.display_name: r for r in api.reports("team/qwen3-8b")}
    assert "has not upgraded yet" in note_of(qwen["Qwen health"].spec)


def test_verify_over_the_entity_reports_the_403_project_and_verifies_the_others(run, org):
    assert run("apply", "team", "--yes").exit_code == 1
    result = run("verify", "team", "--format", "json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert [u["origin"] for u in document["unreadable"]] == ["team/locked"]
    assert document["summary"]["objects"] == 12  # 10 + 1 verified, and the project not read
    assert {f["check"] for f in document["findings"]} == {"unlogged-key"}


def test_a_fifo_in_place_of_the_census_cache_is_ignored_in_one_line(run, org, tmp_path):
    first = run("plan", "team")
    folder = tmp_path / "home" / ".cache" / "wbmigrate" / "census"
    for cached in folder.iterdir():
        cached.unlink()
        os.mkfifo(cached)
    result = returns_soon(run, "plan", "team")
    assert (result.exit_code, result.stdout) == (first.exit_code, first.stdout)
    ignored = [line for line in result.stderr.splitlines() if "census cache" in line]
    assert len(ignored) == 2  # one per project whose runs were read (the third answers 403)
    assert all(line.endswith("ignored: a FIFO is not a regular file") for line in ignored)
