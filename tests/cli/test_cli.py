"""The command line as a user sees it: exact output, stdout/stderr apart, exact exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from helpers import FIXTURES, REPO

from wbmigrate import __version__, find_mapping
from wbmigrate.exit_codes import exit_code

INVALID = sorted((FIXTURES / "mappings/invalid").glob("*.yaml"))
# the 3-step prime-rl mapping of 2026: for tests of output shape, not of prime-rl's history
PRIME_RL_2026 = FIXTURES / "mappings/valid/prime-rl-2026.yaml"
# the whole history's three reviewed merges, which `show` and `validate` warn of
PRIME_RL_WARNINGS = "".join(
    f"Warning: {REPO / 'mappings/prime-rl.yaml'}:{line}: irreversible: {olds} are all renamed "
    f"to '{new}'; after migration their series cannot be told apart [many-to-one]\n"
    for line, olds, new in [
        (467, "'time/orchestrator', 'time/train'", "time/step"),
        (472, "'time/orchestrator/save_ckpt', 'time/train/save_ckpt'", "time/save_ckpt"),
        (476, "'perf/infer/throughput', 'perf/train/throughput'", "perf/throughput"),
    ]
)


@pytest.mark.parametrize(
    ("outcome", "code"),
    [
        ({}, 0),
        ({"failed": True}, 1),
        ({"changes": True}, 2),
        ({"failed": True, "changes": True}, 1),
        ({"error": True, "failed": True}, 2),
        ({"error": True, "detailed": True}, 1),
        ({"interrupted": True, "error": True, "failed": True}, 130),
    ],
)
def test_one_function_turns_a_runs_outcome_into_its_exit_code(outcome, code):
    assert exit_code(**outcome) == code


def test_version(run):
    result = run("--version")
    assert (result.exit_code, result.stdout) == (0, f"wbmigrate, version {__version__}\n")


def test_help_lists_commands_and_examples(run):
    result = run("--help")
    assert result.exit_code == 0
    assert "mappings  List, show and validate mapping files." in result.stdout
    assert "Examples:\n    wbmigrate plan fixtures/demo-project" in result.stdout


@pytest.mark.parametrize(
    "command", [["mappings", "list"], ["mappings", "show"], ["mappings", "validate"]]
)
def test_every_command_has_examples(run, command):
    result = run(*command, "--help")
    assert result.exit_code == 0
    assert "Examples:\n    wbmigrate " + " ".join(command) in result.stdout


def test_mappings_list(run):
    result = run("mappings", "list")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "prime-rl\n", "")


def test_mappings_list_long(run):
    result = run("mappings", "list", "--long")
    versions = find_mapping("prime-rl").versions  # 94 steps, 2025.07.07 .. 2026.10.25
    assert (len(versions), versions[0], versions[-1]) == (94, "2025.07.07", "2026.10.25")
    assert result.stdout == (f"prime-rl\t{' '.join(versions)}\t{find_mapping('prime-rl').title}\n")


@pytest.mark.parametrize(
    ("mapping", "stderr", "heading", "counts"),
    [
        (
            "prime-rl",
            PRIME_RL_WARNINGS,
            f"prime-rl: {find_mapping('prime-rl').title}\n"
            "Composed 2025.07.07 (#529) .. 2026.10.25 (#4253) (94 of 94 steps)\n",
            (95, 43),
        ),
        (
            str(PRIME_RL_2026),
            "",
            "prime-rl-2026: prime-rl off-policy -> staleness metrics\n"
            "Composed 2026.08.19 (#3285) .. 2026.10.25 (#4253) (3 of 3 steps)\n",
            (3, 1),
        ),
    ],
    ids=["prime-rl", "prime-rl-2026"],
)
def test_show(run, mapping, stderr, heading, counts):
    result = run("mappings", "show", mapping)
    assert (result.exit_code, result.stderr) == (0, stderr)
    out = result.stdout
    assert out.startswith(heading)
    assert re.search(r"\n  off_policy/mean +-> staleness/rollout/mean +#4253\n", out)
    token_max, level_max = counts
    assert re.search(
        rf"\n  off_policy/token/max +removed, use staleness/rollout/max +#4253  \[{token_max}\]\n",
        out,
    )
    assert re.search(
        rf"\n  dispatcher/off_policy_level_max +removed +#3285, #3313, #4253  \[{level_max}\]\n",
        out,
    )
    assert "  orchestrator.max_off_policy_steps  -> orchestrator.max_staleness\n" in out
    assert "      flag  --max-off-policy-steps -> --max-staleness\n" in out
    assert "eval/off_policy" not in out


def test_show_to_selects_a_step(run):
    result = run("mappings", "show", "prime-rl", "--to", "2026.08.21", "--format", "json")
    shown = json.loads(result.stdout)
    assert (shown["from"], shown["to"]) == ("2025.07.07", "2026.08.21")
    assert shown["metrics"]["dispatcher/off_policy_level_max"] == {
        "action": "renamed",
        "new": "dispatcher/off_policy/max",
        "chain": [
            "dispatcher/off_policy_level_max",
            "dispatcher/off_policy_level/max",
            "dispatcher/off_policy/max",
        ],
        "versions": ["2026.08.19", "2026.08.21"],
    }
    assert "off_policy/mean" not in shown["metrics"]
    # 114 of the whole history's 115 config renames: #4253's max_off_policy_steps comes later
    assert len(shown["config"]) == 114
    assert "orchestrator.max_off_policy_steps" not in [c["old"] for c in shown["config"]]


def test_show_json_latest(run):
    shown = json.loads(run("mappings", "show", "prime-rl", "--format", "json").stdout)
    assert len(shown["metrics"]) == 602
    assert shown["metrics"]["off_policy/token/max"]["equivalent"] == "staleness/rollout/max"
    (staleness,) = [c for c in shown["config"] if c["old"] == "orchestrator.max_off_policy_steps"]
    assert staleness["cli"]["--max-off-policy-steps"] == "--max-staleness"
    assert len(shown["config"]) == 115
    assert (
        "https://github.com/PrimeIntellect-ai/prime-rl/pull/4253"
        in shown["steps"][-1]["annotation"]
    )


def test_show_markdown(run):
    out = run("mappings", "show", "prime-rl", "--format", "markdown").stdout
    assert "| `off_policy/mean` | `staleness/rollout/mean` | #4253 |" in out
    assert "| `off_policy/token/max` | `staleness/rollout/max` |" in out


def test_show_a_file(run):
    result = run("mappings", "show", str(FIXTURES / "mappings/valid/chains.yaml"), "--from", "2.0")
    assert result.exit_code == 0
    assert "Composed 2.0 (#2) .. 3.0 (#3) (2 of 3 steps)" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [str(PRIME_RL_2026), "--to", "nope"],
            "Error: mapping prime-rl-2026 has no version 'nope' (versions: 2026.08.19 (#3285), "
            "2026.08.21 (#3313), 2026.10.25 (#4253))\n",
        ),
        (
            ["nosuch"],
            "Error: unknown mapping 'nosuch': not a file, and not a bundled mapping "
            "(bundled: prime-rl)\n",
        ),
    ],
)
def test_show_user_errors(run, args, message):
    result = run("mappings", "show", *args)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message)


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
@pytest.mark.parametrize("command", ["validate", "show"])
def test_invalid_mapping_is_one_line_and_exit_2(run, command, path):
    expected = re.match(r"# expect-error: ([a-z-]+) at line (\d+)", path.read_text())
    result = run("mappings", command, str(path))
    assert (result.exit_code, result.stdout) == (2, "")
    assert re.fullmatch(
        rf"Error: {re.escape(str(path))}:{expected[2]}: [^\n]+ "
        rf"\[{expected[1]}\]\n",
        result.stderr,
    )


def test_validate_valid(run):
    path = REPO / "mappings/prime-rl.yaml"
    result = run("mappings", "validate", str(path))
    assert (result.exit_code, result.stderr) == (0, PRIME_RL_WARNINGS)
    assert result.stdout == (
        f"{path}: valid (prime-rl, 94 steps, 602 old metric names, latest 2026.10.25)\n"
    )
    result = run("mappings", "validate", str(PRIME_RL_2026))
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        f"{PRIME_RL_2026}: valid (prime-rl-2026, 3 steps, 19 old metric names, latest 2026.10.25)\n"
    )


def test_validate_warns_many_to_one_but_passes(run):
    path = FIXTURES / "mappings/valid/many-to-one.yaml"
    result = run("mappings", "validate", str(path))
    assert result.exit_code == 0
    assert result.stderr == (
        f"Warning: {path}:14: irreversible: 'loss/train', 'loss/total' are "
        "all renamed to 'loss'; after migration their series cannot be told "
        "apart [many-to-one]\n"
    )


def test_validate_several_reports_each(run):
    good, bad = REPO / "mappings/prime-rl.yaml", FIXTURES / "mappings/invalid/cycle-self.yaml"
    result = run("mappings", "validate", str(good), str(bad))
    assert result.exit_code == 2
    assert result.stdout.startswith(f"{good}: valid")
    assert result.stderr.startswith(f"{PRIME_RL_WARNINGS}Error: {bad}:13: cycle")


def test_validate_missing_file(run, tmp_path):
    result = run("mappings", "validate", str(tmp_path / "nope.yaml"))
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: cannot read mapping {tmp_path / 'nope.yaml'}: No such file or directory\n",
    )


def test_usage_error_exits_2(run):
    result = run("mappings", "show")
    assert result.exit_code == 2
    assert "Missing argument 'ID|PATH'" in result.stderr


def test_python_dash_m(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "wbmigrate", "mappings", "list"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, "prime-rl\n")


def test_help_names_the_default_host_the_code_connects_to(run, tmp_path):
    """One default host everywhere: `--help` names the host wbmigrate connects to when nothing
    chooses one, not a second copy of it."""
    from wbmigrate.live.credentials import find_host

    default = find_host({"WANDB_CONFIG_DIR": str(tmp_path)}, tmp_path)
    assert default.source == "wandb's default host"
    text = " ".join(run("--help").stdout.split())
    assert f"else wandb's default {default.url}." in text
    assert "api.wandb.ai" not in text


def test_a_bundled_mappings_reviewed_warnings_are_not_repeated(run, monkeypatch, tmp_path):
    """A mapping wbmigrate ships had its warnings reviewed when it was bundled (the bundled
    prime-rl mapping's are pinned in tests/mapping): plan says them only for a mapping file the
    user gives."""
    import shutil

    from wbmigrate.mapping import load

    bundled = tmp_path / "bundled"
    bundled.mkdir()
    shutil.copy(FIXTURES / "mappings/valid/many-to-one.yaml", bundled / "merging.yaml")
    monkeypatch.setattr(load, "bundled_dir", lambda: bundled)
    spec = FIXTURES / "demo-project/workspaces/overview.json"
    assert "Warning:" not in run("plan", str(spec), "--mapping", "merging").stderr
    user_file = FIXTURES / "mappings/valid/many-to-one.yaml"
    assert "[many-to-one]" in run("plan", str(spec), "--mapping", str(user_file)).stderr


def test_project_keys_are_read_as_every_file_is(run, tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("staleness/rollout/mean\n\n  eval/custom  \n")
    result = run("plan", str(FIXTURES / "demo-project"), "--project-keys", str(keys))
    assert result.exit_code == 0
    assert "Summary: 10 objects" in result.stdout


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        pytest.param(lambda path: os.mkfifo(path), "a FIFO is not a regular file", id="fifo"),
        pytest.param(lambda path: path.write_bytes(b"\xd0\x00"), "not UTF-8 text", id="binary"),
        pytest.param(lambda path: path.mkdir(), "Is a directory", id="folder"),
        pytest.param(lambda path: None, "No such file or directory", id="missing"),
    ],
)
def test_project_keys_that_cannot_be_read_are_one_line_never_a_wait(run, tmp_path, make, reason):
    keys = tmp_path / "keys"
    make(keys)  # a FIFO opened as click.File opens a file would wait for a writer forever
    result = run("plan", str(FIXTURES / "demo-project"), "--project-keys", str(keys))
    assert result.exit_code == 2
    assert result.stderr.endswith(f"Invalid value for '--project-keys': '{keys}': {reason}\n")
    assert result.stderr.startswith("Usage: wbmigrate plan ")  # a usage error, as click's own
