"""A config key or flag whose old spelling still loads (`deprecated: true` in the mapping): a
warning with its fix, in every output format, and `--fix` still fixes it."""

from __future__ import annotations

import json

import jsonschema
import pytest
from helpers import FIXTURES, REPO

from wbmigrate.check.model import Level, Rule
from wbmigrate.check.targets import Targets
from wbmigrate.engine.model import Options
from wbmigrate.mapping.parse import parse_mapping

MAPPING = str(FIXTURES / "mappings/valid/deprecated-config.yaml")
SCHEMA = json.loads((REPO / "schemas" / "check-report.schema.json").read_text())


@pytest.fixture
def config(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    path = tmp_path / "rl.toml"
    path.write_text("[orchestrator]\nrollouts_per_example = 8\n")
    monkeypatch.chdir(tmp_path)
    return path


def check(run, *args):
    return run("check", "--mapping", MAPPING, *args, "rl.toml")


def test_the_rule_is_a_warning_even_with_a_fix():
    assert Rule.DEPRECATED_CONFIG.level is Level.WARNING


def test_a_deprecated_key_is_a_warning_with_its_fix_and_fails(run, config):
    result = check(run, "--format", "concise")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0] == (
        "rl.toml:2:1: warning deprecated-config [*] orchestrator.rollouts_per_example -> "
        "orchestrator.group_size (config key)"
    )
    assert "Found 1 warning in 1 file (1 fixable with --fix)." in result.stdout


def test_json_follows_the_schema(run, config):
    report = json.loads(check(run, "--format", "json").stdout)
    jsonschema.validate(report, SCHEMA)
    (found,) = report["findings"]
    assert (found["rule"], found["level"], found["fixable"]) == (
        "deprecated-config",
        "warning",
        True,
    )


def test_statistics_sarif_and_github_say_warning(run, config):
    assert check(run, "--statistics").stdout.splitlines()[0] == (
        "1  warning  deprecated-config   [*]"
    )
    sarif = json.loads(check(run, "--format", "sarif").stdout)["runs"][0]
    assert [r["level"] for r in sarif["results"]] == ["warning"]
    github = check(run, "--format", "github").stdout
    assert github.startswith("::warning file=rl.toml,line=2,col=1,")


def test_fix_fixes_it(run, config):
    result = check(run, "--fix")
    assert result.exit_code == 0
    assert config.read_text() == "[orchestrator]\ngroup_size = 8\n"


def test_a_spelling_one_rename_keeps_and_another_breaks_is_breaking():
    text = (FIXTURES / "mappings/valid/deprecated-config.yaml").read_text()
    extra = """        - old: trainer.rollouts_per_example
          new: trainer.group_size
          toml: {trainer.rollouts_per_example: trainer.group_size}
  - version: "2.0\""""
    mapping = parse_mapping(text.replace('  - version: "2.0"', extra), "m.yaml")
    targets = Targets(mapping.migration(), Options())
    # the leaf is shared: only the dotted key of the aliased rename is surely still loaded
    assert targets.config_rule("rollouts_per_example") is Rule.RENAMED_CONFIG_KEY
    assert targets.config_rule("orchestrator.rollouts_per_example") is Rule.DEPRECATED_CONFIG
    assert targets.config_rule("trainer.rollouts_per_example") is Rule.RENAMED_CONFIG_KEY
