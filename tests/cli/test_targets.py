"""What a TARGET and `--only` name: chosen objects of a live project, a report's or saved
workspace's W&B URL, a folder mistyped, a project or command mistyped ("did you mean")."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import TARGET, snapshot, writes

HEALTH = "VmlldzoxMDc="  # the sandbox's report "Async health" (View:107)


def report_url(host: str, view_id: str = HEALTH, title: str = "Async-health") -> str:
    return f"{host}/team/async-rl/reports/{title}--{view_id.rstrip('=')}"


def changed(server, before):
    """The ids of the views and triggers whose stored state differs from `before`."""
    now = snapshot(server)
    return {i for part, old in zip(now, before, strict=True) for i in part if part[i] != old[i]}


# --- --only -----------------------------------------------------------------------------------


def test_only_migrates_one_report_and_its_draft_and_leaves_the_rest_untouched(run, live):
    before = snapshot(live)
    draft = next(i for i, v in live.state.views.items() if v["parentId"] == HEALTH)
    result = run("apply", TARGET, "--only", "Async health", "--yes")
    assert result.exit_code == 0, result.output
    assert "Summary: 2 applied." in result.stdout
    sent = {json.loads(r.body)["variables"]["input"]["id"] for r in live.mutations()}
    assert sent == {HEALTH, draft}
    assert changed(live, before) == {HEALTH, draft}


def test_apply_of_a_plan_saved_with_only_sums_up_that_plan(run, live):
    """With --yes the summary line is the saved plan's, as `show` prints it (and as the plan
    shown at the question ends): it was the whole project's, planned again."""
    assert run("plan", TARGET, "--only", "Token masking", "--out", "plan.json").exit_code == 0
    result = run("apply", TARGET, "--plan", "plan.json", "--yes")
    assert result.exit_code == 0, result.output
    shown = run("show", "plan.json").stdout.splitlines()[-1]
    assert shown.startswith("Summary: 1 object: 1 to change, 0 unchanged, 0 unreadable.")
    assert shown in result.stderr.splitlines()
    assert "Summary: 1 applied." in result.stdout


def test_only_by_id_plans_that_report_and_its_draft(run, live):
    result = run("plan", TARGET, "--only", HEALTH)
    assert result.exit_code == 0, result.output
    named = [line for line in result.stdout.splitlines() if line.startswith(("report", "autom"))]
    assert [line.split("  http")[0] for line in named] == [  # each with its link
        f'report "Async health"  ({HEALTH})',
        'report "Async health (draft)"  (VmlldzoxMTE=)',
    ]
    assert "Found 2 reports (1 draft), 0 saved workspaces, 0 automations." in result.stderr


def test_only_several_kinds_by_name_and_url(run, live):
    url = report_url(live.url)
    result = run("plan", TARGET, "--only", url, "--only", "token-max", "--only", "Overview", "-v")
    assert result.exit_code == 0, result.output
    assert "Found 2 reports (1 draft), 1 saved workspace, 1 automation." in result.stderr


def test_only_that_matches_nothing_is_an_error_that_says_what_is_close(run, live):
    result = run("plan", TARGET, "--only", "Async helth", "--only", "token-max")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.splitlines()[-1] == (
        "Error: --only 'Async helth': team/async-rl has no report, workspace or automation "
        "of that title or id; did you mean 'Async health'?"
    )


def test_only_on_verify_and_export(run, live, tmp_path):
    verified = run("verify", TARGET, "--only", "token-max")
    assert "Found 0 reports (0 drafts), 0 saved workspaces, 1 automation." in verified.stderr
    assert "automation" in verified.stdout
    assert "report" not in verified.stdout
    assert run("export", TARGET, "out", "--only", "Overview").exit_code == 0
    files = [p.relative_to(tmp_path / "out").parts[0] for p in (tmp_path / "out").rglob("*.json")]
    assert files == ["workspaces"]


def test_only_of_files_several_projects_or_a_saved_plan_is_refused(run, live, tmp_path):
    (tmp_path / "specs").mkdir()
    for args in (
        ["plan", "specs", "--only", "x"],
        ["plan", "team", "--only", "x"],
        ["apply", TARGET, "--plan", __file__, "--only", "x"],
        ["apply", report_url(live.url), "--plan", __file__],
    ):
        result = run(*args)
        assert (result.exit_code, result.stdout) == (2, ""), args
        assert result.stderr.startswith("Error: --only "), result.stderr
    assert writes(live) == []


# --- a URL as TARGET --------------------------------------------------------------------------


def test_a_report_url_as_target_plans_that_report_of_its_project(run, live):
    result = run("plan", report_url(live.url))
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("Reading team/async-rl from ")
    assert "Found 2 reports (1 draft), 0 saved workspaces, 0 automations." in result.stderr


def test_a_saved_workspace_url_as_target_applies_that_workspace_alone(run, live):
    (view_id,) = [i for i, v in live.state.views.items() if v["type"] == "project-view"]
    live.state.views[view_id]["name"] = "nw-a0b1c2d3-v"  # as W&B names saved views
    before = snapshot(live)
    result = run("apply", f"{live.url}/team/async-rl/workspace?nw=a0b1c2d3", "--yes")
    assert result.exit_code == 0, result.output
    assert changed(live, before) == {view_id}


def test_a_url_on_another_host_is_refused_in_one_line_naming_both(run, live):
    result = run("plan", report_url("https://wandb.ai"))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"Error: {report_url('https://wandb.ai')}: this URL is on wandb.ai, but the W&B host "
        f"is {live.url} (WANDB_BASE_URL)\n"
    )
    assert live.requests == []


def test_an_only_url_of_another_project_is_refused(run, live):
    result = run("plan", TARGET, "--only", f"{live.url}/team/other/reports/X--{HEALTH}")
    assert (result.exit_code, result.stdout) == (2, "")
    assert "is of team/other, not team/async-rl" in result.stderr
    assert live.requests == []


def test_a_report_url_without_an_id_is_refused(run, live):
    result = run("plan", f"{live.url}/team/async-rl/reports/Async-health")
    assert result.exit_code == 2
    assert "no report id" in result.stderr


# --- mistyped TARGETs and commands ------------------------------------------------------------


@pytest.mark.parametrize("target", ["dashbords/", "./dashbords"])
def test_a_folder_mistyped_is_no_such_folder_and_never_goes_to_wandb(run, live, target):
    result = run("plan", target)
    assert (result.exit_code, result.stdout) == (2, "")
    what = "folder" if target.endswith("/") else "file or folder"
    assert result.stderr == f"Error: {target}: no such {what}\n"
    assert live.requests == []


def test_a_project_mistyped_says_which_of_the_entitys_projects_is_close(run, live):
    result = run("plan", "team/async_rl")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.splitlines()[-1] == (
        "Error: project team/async_rl not found; did you mean 'team/async-rl'?"
    )


def test_a_command_mistyped_says_which_is_close():
    """In a process of its own: there no command has been loaded yet (they load lazily)."""
    result = subprocess.run(
        [sys.executable, "-m", "wbmigrate", "plna", TARGET], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == "Error: No such command 'plna'. Did you mean 'plan'?"


def test_a_plan_saved_with_only_applies_to_that_object_alone(run, live):
    before = snapshot(live)
    assert run("plan", TARGET, "--only", "token-max", "--out", "plan.json").exit_code == 0
    result = run("apply", TARGET, "--plan", "plan.json", "--yes")
    assert result.exit_code == 0, result.output
    assert changed(live, before) == {live.state.find("token-max")}


def test_a_title_suggested_is_shown_escaped(run, live):
    live.state.add_view('{"blocks":[]}', "runs", "Async health\x1b[2J\nError: forged")
    result = run("plan", TARGET, "--only", "Async health\x1b[2J")
    assert result.exit_code == 2
    assert "\x1b" not in result.stderr
    *_, last = result.stderr.splitlines()
    assert last.startswith("Error: --only ")
    assert last.endswith(" or 'Async health\\x1b[2J\\nError: forged'?")


def test_a_url_with_white_space_in_it_is_refused(run, live):
    result = run("plan", f"{live.url}/team/async-rl\n/reports/X--{HEALTH}")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.count("\n") == 1
    assert live.requests == []


def test_a_project_with_no_close_name_is_not_found_without_a_guess(run, live):
    result = run("plan", "nobody/async_rl")
    assert result.stderr.splitlines()[-1] == "Error: project nobody/async_rl not found"
