"""A config key or flag the mapping removes (`config: removed:`, or renamed into one removed
later): an error without a fix in TOML, YAML, flags and Python, in every output format; `--fix`
leaves it. A dropped alias makes a deprecated key a breaking one."""

from __future__ import annotations

import json

import jsonschema
import pytest
from helpers import FIXTURES, REPO

from wbmigrate.check.model import Level, Rule

MAPPING = str(FIXTURES / "mappings/valid/config-removed.yaml")
MAPPING_TEXT = (FIXTURES / "mappings/valid/config-removed.yaml").read_text()
SCHEMA = json.loads((REPO / "schemas" / "check-report.schema.json").read_text())
STEP = (
    "removed in step 2026.05.25 (#2631): The async barrier is hardcoded; there is no bound to set."
)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(run, *args):
    return run("check", "--mapping", MAPPING, "--format", "concise", *args)


def test_the_rule_is_an_error_even_without_a_fix():
    assert Rule.REMOVED_CONFIG_KEY.level is Level.ERROR


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        pytest.param(
            "rl.toml",
            "[orchestrator]\nmax_async_level = 2\n",
            "rl.toml:2:1: error removed-config-key orchestrator.max_async_level (config key) was "
            + STEP,
            id="toml-key",
        ),
        pytest.param(
            "orch.toml",
            "async_level = 2\n",
            f"orch.toml:1:1: error removed-config-key async_level (config key) was {STEP}",
            id="toml-key-renamed-then-removed",
        ),
        pytest.param(
            "rl.yaml",
            "orchestrator:\n  async_level: 2\n",
            "rl.yaml:2:3: error removed-config-key orchestrator.async_level (config key) was "
            + STEP,
            id="yaml-key",
        ),
        pytest.param(
            "train.sh",
            "uv run rl --max-async-level 2\n",
            f"train.sh:1:11: error removed-config-key --max-async-level (flag) was {STEP}",
            id="flag",
        ),
        pytest.param(
            "launch.py",
            'config = {"orchestrator.max_async_level": 2}\n',
            "launch.py:1:11: error removed-config-key orchestrator.max_async_level (config key) "
            f"was {STEP}",
            id="python-string",
        ),
        pytest.param(
            "job.py",
            "from prime_rl.orchestrator.config import OrchestratorConfig\n"
            "OrchestratorConfig(max_async_level=2)\n",
            "job.py:2:20: error removed-config-key max_async_level (keyword of OrchestratorConfig) "
            f"was {STEP}",
            id="python-keyword",
        ),
    ],
)
def test_a_removed_key_is_an_error_and_fix_leaves_it(run, repo, name, text, expected):
    path = repo / name
    path.write_text(text)
    result = check(run, name)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0] == expected
    assert "(0 fixable with --fix)" in result.stdout or "fixable" not in result.stdout
    assert check(run, "--fix", name).exit_code == 1
    assert path.read_text() == text


def test_a_removed_flag_beside_a_renamed_one_keeps_the_renamed_ones_fix(run, repo):
    path = repo / "job.yaml"
    path.write_text('args: ["--max-async-level", "2", "--rollouts-per-example", "8"]\n')
    result = check(run, "--fix", "job.yaml")
    assert path.read_text() == 'args: ["--max-async-level", "2", "--group-size", "8"]\n'
    assert "removed-config-key --max-async-level (flag) was" in result.stdout


def test_json_sarif_and_github_say_error(run, repo):
    (repo / "rl.toml").write_text("[orchestrator]\nmax_async_level = 2\n")
    report = json.loads(check(run, "--format", "json", "rl.toml").stdout)
    jsonschema.validate(report, SCHEMA)
    (found,) = report["findings"]
    assert (found["rule"], found["level"], found["fixable"]) == (
        "removed-config-key",
        "error",
        False,
    )
    sarif = json.loads(check(run, "--format", "sarif", "rl.toml").stdout)["runs"][0]
    assert [r["level"] for r in sarif["results"]] == ["error"]
    assert "removed-config-key" in {r["id"] for r in sarif["tool"]["driver"]["rules"]}
    github = check(run, "--format", "github", "rl.toml").stdout
    assert github.startswith("::error file=rl.toml,line=2,col=1,")


def test_a_dropped_alias_is_breaking_and_before_it_a_deprecation(run, repo):
    (repo / "rl.toml").write_text("[orchestrator]\nrollouts_per_example = 8\n")
    after = check(run, "rl.toml").stdout.splitlines()[0]
    assert after.startswith("rl.toml:2:1: error renamed-config-key [*]")
    before = check(run, "--to", "2026.05.25", "rl.toml").stdout.splitlines()[0]
    assert before.startswith("rl.toml:2:1: warning deprecated-config [*]")


def test_before_the_removal_the_rename_is_fixed(run, repo):
    path = repo / "rl.toml"
    path.write_text("[orchestrator]\nasync_level = 2\n")
    assert check(run, "--to", "2025.11.01", "--fix", "rl.toml").exit_code == 0
    assert path.read_text() == "[orchestrator]\nmax_async_level = 2\n"


def test_a_last_part_the_mapping_does_not_list_as_a_form_is_no_finding(run, repo):
    """`path` of a removed `x.weights.path` is in every other file: only the forms the mapping
    lists are looked for (here `x.weights.path` alone)."""
    mapping = repo / "m.yaml"
    mapping.write_text(
        MAPPING_TEXT.replace("orchestrator.max_async_level, max_async_level]", "x.weights.path]")
    )
    (repo / "a.py").write_text(
        "from prime_rl.orchestrator.config import WeightsConfig\n"
        "cfg = {'path': 1, 'x.weights.path': 2}  # the path\n"
        "WeightsConfig(path='w')\n"
    )
    result = run("check", "--mapping", str(mapping), "--format", "concise", "a.py")
    assert [line.split(" was ")[0] for line in result.stdout.splitlines()[:-2]] == [
        "a.py:2:19: error removed-config-key x.weights.path (config key)"
    ]
