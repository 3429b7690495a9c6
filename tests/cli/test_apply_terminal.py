"""`apply` as a person at a terminal meets it: the plan shown before the question (`-v`: its
details too), a saved plan given as TARGET (terraform's `apply PLANFILE`), and `-q` on `plan`
and `apply`. The terminal runs are real: wbmigrate in a pseudo-terminal against the local
test server, read through a bounded `select`."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys

from helpers import TARGET, writes

BOUND = 60  # seconds without output before a terminal run is taken for hung (never waited)
QUESTION = b"[y/N]"
DETAIL = "~ metric  off_policy/dropped -> staleness/rollout/dropped"


def in_terminal(args: list[str], answer: bytes, cwd) -> tuple[int, str, str]:
    """`wbmigrate ARGS` at a pseudo-terminal (stdin, stdout and stderr), answering `answer` to
    its question: the exit code, what it printed up to the question, and after it."""
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "wbmigrate", *args],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env={
            **os.environ,
            "COLUMNS": "100",
            "NO_COLOR": "1",
        },  # colour: tests/report/test_colour.py
        cwd=cwd,
        close_fds=True,
    )
    os.close(secondary)
    shown = [b"", b""]  # before the question, after it
    try:
        while True:
            ready, _, _ = select.select([primary], [], [], BOUND)
            assert ready, f"no output for {BOUND} s: {b''.join(shown)!r}"
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # EIO: the program ended and closed its side of the terminal
                break
            if not chunk:
                break
            asked = QUESTION in shown[0]
            shown[asked] += chunk
            if not asked and QUESTION in shown[0]:
                os.write(primary, answer)
        code = process.wait(timeout=BOUND)
    finally:
        os.close(primary)
        if process.poll() is None:
            process.kill()
    before, after = (part.decode(errors="replace").replace("\r\n", "\n") for part in shown)
    return code, before, after


# --- the plan before the question --------------------------------------------------------------


def test_at_a_terminal_apply_shows_each_object_before_it_asks(run, live, tmp_path):
    planned = run("plan", TARGET).stdout  # what `plan` prints for the project
    code, before, after = in_terminal(["apply", TARGET], b"y\n", tmp_path)
    assert code == 0, before + after
    assert 'report "Async health (draft)"  (VmlldzoxMTE=)' in planned
    assert DETAIL in planned
    assert 'automation "eval-regression"' not in planned  # unchanged: shown with -v only
    head, _, question = before.partition(planned)
    assert head.endswith("Found 4 reports (1 draft), 1 saved workspace, 6 automations.\n")
    assert question == "Write 10 objects in team/async-rl? [y/N]: "
    assert "Summary: 10 applied." in after
    assert len(writes(live)) == 10


def test_at_a_terminal_only_one_report_is_shown_asked_and_written(run, live, tmp_path):
    """The canary: `--only` one report of the sandbox's project at a terminal shows that
    report alone, asks for one object, writes it, and leaves every other object as it was."""
    report = live.state.find("Token masking")
    others = {i: v["spec"] for i, v in live.state.views.items() if i != report}
    triggers = json.dumps(live.state.triggers, sort_keys=True)
    code, before, after = in_terminal(
        ["apply", TARGET, "--only", "Token masking"], b"y\n", tmp_path
    )
    assert code == 0, before + after
    assert f'report "Token masking"  ({report})' in before
    assert 'report "Async health"' not in before
    assert before.endswith("Write 1 object in team/async-rl? [y/N]: ")
    assert [r.variables["input"]["id"] for r in writes(live)] == [report]
    assert {i: v["spec"] for i, v in live.state.views.items() if i != report} == others
    assert json.dumps(live.state.triggers, sort_keys=True) == triggers
    assert "Summary: 1 applied." in after


def test_verbose_also_shows_unchanged_objects_and_info_notes(run, live, tmp_path):
    planned = run("plan", TARGET, "-v").stdout
    assert 'automation "eval-regression"  (VHJpZ2dlcjoxMDM=)' in planned
    assert "i metrics[0]: off_policy/token/max is no longer logged" in planned
    code, before, _ = in_terminal(["apply", TARGET, "-v"], b"n\n", tmp_path)
    assert code == 1
    assert planned in before
    assert writes(live) == []


def test_with_yes_apply_prints_the_summary_alone_as_before(run, live):
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0
    assert "Summary: 11 objects: 10 to change" in result.stderr
    assert 'report "Async health"' not in result.stderr + result.stdout.split("Applied")[0]
    assert DETAIL not in result.stderr


def test_apply_entity_at_a_terminal_shows_each_projects_plan_before_it_asks(org, tmp_path):
    code, before, after = in_terminal(["apply", "team", "--runs", "0"], b"n\n", tmp_path)
    assert code == 1
    demo, _, qwen = before.partition("== team/qwen3-8b")
    assert "== team/async-rl" in demo
    assert DETAIL in demo
    assert 'report "' in qwen
    assert "Summary:" in qwen
    assert "in 2 projects? [y/N]" in before.splitlines()[-1]
    assert "Cancelled; nothing written." in after
    assert writes(org) == []


# --- a saved plan as TARGET -----------------------------------------------------------------------


def test_apply_a_saved_plan_given_as_target(run, live, tmp_path):
    assert run("plan", TARGET, "--mode", "replace", "--out", "plan.json").exit_code == 0
    result = run("apply", "plan.json", "--yes")
    assert result.exit_code == 0, result.output
    assert "Applied to team/async-rl:" in result.stdout
    assert "Summary: 10 applied." in result.stdout
    folder = result.stdout.split("Backups: ", 1)[1].split("  (undo", 1)[0]
    manifest = json.loads((tmp_path / folder / "manifest.json").read_text())
    assert manifest["mode"] == "replace"  # the plan's, not the default


def test_apply_plan_option_without_target(run, live):
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    result = run("apply", "--plan", "plan.json", "--yes")
    assert result.exit_code == 0, result.output
    assert "Summary: 10 applied." in result.stdout


def test_apply_without_target_or_plan_is_a_usage_error(run):
    result = run("apply")
    assert result.exit_code == 2
    assert result.stderr.endswith("Error: Missing argument 'TARGET...'.\n")


def test_a_target_other_than_the_saved_plans_is_still_refused(run, live):
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    result = run("apply", "team/other", "--plan", "plan.json", "--yes")
    assert result.exit_code == 2
    assert "Error: the plan is for team/async-rl, not team/other" in result.stderr
    assert writes(live) == []


def test_a_file_that_is_no_plan_given_as_target_is_one_line(run, live, tmp_path):
    (tmp_path / "notes.json").write_text("{}")
    result = run("apply", "notes.json", "--yes")
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: notes.json is not a wbmigrate plan (write one with `plan --out`)\n"
    )
    assert writes(live) == []


def test_at_a_terminal_a_saved_plan_is_shown_then_applied(live, tmp_path, run):
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    saved = run("show", "plan.json").stdout  # the saved plan, as `show` prints it
    code, before, after = in_terminal(["apply", "plan.json"], b"y\n", tmp_path)
    assert code == 0, before + after
    assert DETAIL in saved
    assert before.endswith(saved + "Write 10 objects in team/async-rl? [y/N]: ")
    assert "Summary: 10 applied." in after
    assert len(writes(live)) == 10


# --- -q ----------------------------------------------------------------------------------------


def test_plan_quiet_prints_the_objects_alone(run, live):
    full, quiet = run("plan", TARGET), run("plan", TARGET, "-q")
    assert quiet.exit_code == 0
    objects = full.stdout.split("review\n\n", 1)[1].rsplit("Summary:", 1)[0]
    assert quiet.stdout == objects
    assert quiet.stderr == ""


def test_plan_quiet_of_files_prints_the_objects_alone(run):
    from helpers import FIXTURES

    folder = str(FIXTURES / "demo-project")
    full, quiet = run("plan", folder), run("plan", folder, "--quiet")
    assert quiet.exit_code == 0
    assert quiet.stdout == full.stdout.split("review\n\n", 1)[1].rsplit("Summary:", 1)[0]


def test_plan_quiet_keeps_warnings(run, live):
    result = run("plan", TARGET, "-q", "--drafts", "skip")
    assert result.stderr == (
        "Warning: drafts are skipped; publishing a stale draft undoes its report's migration.\n"
    )


def test_apply_quiet_prints_only_the_record_of_the_writes(run, live):
    result = run("apply", TARGET, "--yes", "-q")
    assert result.exit_code == 0
    assert result.stderr == ""
    assert "Applied to team/async-rl:" in result.stdout
    assert "Backups: " in result.stdout


def test_a_fifo_as_the_plan_is_refused_never_opened(run, live, tmp_path):
    os.mkfifo(tmp_path / "plan.json")  # opening it would wait for a writer forever
    for command in (["apply", "--plan", "plan.json", "--yes"], ["show", "plan.json"]):
        result = run(*command)
        assert result.exit_code == 2
        assert result.stderr.startswith("Error: cannot read plan plan.json: ")
        assert result.stderr.count("\n") == 1


def test_apply_quiet_at_a_terminal_draws_no_progress_bar(live, tmp_path):
    code, before, _ = in_terminal(["apply", TARGET, "--yes", "-q"], b"", tmp_path)
    assert code == 0, before
    assert "Applying" not in before
    assert before.startswith("Applied to team/async-rl:\n")


def test_the_plans_are_kept_for_the_question_alone_and_without_their_specs(live):
    from helpers import MIGRATION

    from wbmigrate.engine.model import Options
    from wbmigrate.live.client import Client
    from wbmigrate.live.prepare import prepare_apply
    from wbmigrate.live.project import Project, plan_project

    project = Project(Client(live.url, live.api_key), "team", "async-rl")
    assert prepare_apply(project, MIGRATION, Options()).planned is None  # --yes, or piped
    shown = prepare_apply(project, MIGRATION, Options(), shown=True).planned
    assert shown is not None
    full = list(plan_project(project, MIGRATION, Options()))
    assert [(p.title, p.status, p.result.changes, p.result.notes) for p in shown] == [
        (p.title, p.status, p.result.changes, p.result.notes) for p in full
    ]
    assert all(p.result.original is None and p.result.edits == () for p in shown)


def test_the_progress_bar_is_drawn_at_a_terminal_not_printed_escaped(live, tmp_path):
    code, before, _ = in_terminal(["apply", TARGET, "--yes"], b"", tmp_path)
    assert code == 0, before
    assert "Applying  [" in before
    assert "\\u000d" not in before  # its carriage returns reach the terminal as such
    assert "\\u001b" not in before
