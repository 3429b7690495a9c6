"""`wbmigrate check` over the dashboards-as-code demo repository: findings for every file kind,
fixes that change only the old tokens, output formats, suppressions and exit codes."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import FIXTURES, affected_paths, outside

from wbmigrate import find_mapping
from wbmigrate.rewrite import rewrite, rewrite_text

DEMO = FIXTURES / "demo-repo"
MIGRATION = find_mapping("prime-rl").migration()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A copy of the demo repository (with a .git folder), as the current folder."""
    root = tmp_path / "repo"
    shutil.copytree(DEMO, root)
    (root / ".git").mkdir()
    (root / ".git" / "config.json").write_text('{"x": "off_policy/mean"}')
    monkeypatch.chdir(root)
    return root


def findings(run, *args):
    result = run("check", *args, "--format", "json")
    return result, json.loads(result.stdout)["findings"]


def located(found):
    return {(f["path"], f["line"], f["rule"]) for f in found}


def test_every_file_kind_is_checked(run, repo):
    result, found = findings(run, ".")
    assert result.exit_code == 1
    paths = {f["path"] for f in found}
    assert paths == {
        "README.md",
        ".github/workflows/smoke.yml",
        "alerts/create_alerts.py",
        "analysis/staleness.py",
        "configs/orchestrator.toml",
        "configs/orchestrator.yaml",
        "configs/rl.toml",
        "configs/resolved/orchestrator.json",
        "dashboards/async-health--VmlldzoxMDc_.json",
        "dashboards/overview.yaml",
        "dashboards/alerts/staleness-high.json",
        "dashboards/archive/dispatcher-legacy--VmlldzoxMDg_.json",
        "reports/build_report.py",
        "scripts/train.sh",
    }
    assert {f["rule"] for f in found} == {
        "renamed-metric",
        "removed-metric",
        "renamed-config-key",
        "needs-review",
    }


def test_what_is_skipped(run, repo):
    _, found = findings(run, ".")
    paths = {f["path"] for f in found}
    assert not any(p.startswith((".git/", "outputs/", "vendor/", "assets/")) for p in paths)
    # a file named on the command line is checked even when ignored
    _, named = findings(run, "outputs/run1/configs/resolved/orchestrator.json")
    assert located(named) == {
        ("outputs/run1/configs/resolved/orchestrator.json", 3, "renamed-config-key")
    }


@pytest.mark.parametrize(
    ("path", "line", "rule"),
    [
        ("configs/rl.toml", 9, "renamed-config-key"),
        ("configs/orchestrator.toml", 3, "renamed-config-key"),
        ("configs/orchestrator.yaml", 3, "renamed-config-key"),
        ("configs/resolved/orchestrator.json", 3, "renamed-config-key"),
        ("scripts/train.sh", 5, "renamed-config-key"),
        (".github/workflows/smoke.yml", 9, "renamed-config-key"),
        ("README.md", 6, "renamed-config-key"),
        ("README.md", 13, "renamed-config-key"),
        ("reports/build_report.py", 5, "renamed-metric"),
        ("reports/build_report.py", 10, "renamed-metric"),  # inside a filter expression string
        ("reports/build_report.py", 11, "renamed-metric"),  # wr.SummaryMetric("...")
        ("reports/build_report.py", 30, "renamed-metric"),  # ScalarChart(metric='...')
        ("reports/build_report.py", 33, "removed-metric"),
        ("alerts/create_alerts.py", 11, "renamed-metric"),  # RunEvent.metric("...")
        ("alerts/create_alerts.py", 16, "removed-metric"),  # removed, with an equivalent
        ("analysis/staleness.py", 7, "renamed-metric"),
        ("analysis/staleness.py", 14, "renamed-config-key"),
        ("analysis/staleness.py", 20, "needs-review"),  # an f-string that builds keys
        ("analysis/staleness.py", 21, "needs-review"),  # a concatenation
        ("dashboards/overview.yaml", 20, "renamed-metric"),
        ("dashboards/alerts/staleness-high.json", 17, "renamed-metric"),
    ],
)
def test_finding(run, repo, path, line, rule):
    _, found = findings(run, ".")
    assert (path, line, rule) in located(found)


def test_decoys_and_suppressions(run, repo):
    _, found = findings(run, ".")
    text = json.dumps(found)
    for decoy in (
        "max_off_policy_steps_hint",
        "max-off-policy-steps-hint",
        "eval/off_policy/mean",
        "off_policy/mean_smoothed",
        "--max-steps",
    ):
        assert decoy not in text
    assert ("analysis/staleness.py", 26, "renamed-metric") not in located(found)  # suppressed
    assert ("analysis/staleness.py", 31, "renamed-metric") not in located(found)  # print(...)
    assert ("README.md", 10, "renamed-config-key") not in located(found)  # prose, not code
    # per-file-ignores: the archived report's removed panel is not reported
    archive = [f for f in found if f["path"].startswith("dashboards/archive/")]
    assert {f["rule"] for f in archive} == {"renamed-metric"}


def test_a_suppression_needs_a_reason(run, repo):
    script = repo / "analysis" / "staleness.py"
    script.write_text(
        script.read_text().replace(
            "# wbmigrate: ignore[renamed-metric] legacy comparison",
            "# wbmigrate: ignore[renamed-metric]",
        )
    )
    _, found = findings(run, "analysis/staleness.py")
    (line_26,) = [f for f in found if f["line"] == 26]
    assert line_26["message"].endswith("(the suppression on this line needs a reason)")


def test_fix_changes_only_the_old_tokens(run, repo):
    originals = {p: p.read_text() for p in repo.rglob("*") if p.is_file() and p.suffix != ".png"}
    result = run("check", ".", "--fix")
    assert result.exit_code == 1  # needs-review and a removed metric remain
    assert "Fixed 43 findings." in result.stdout
    now = {p: p.read_text() for p in originals}

    def same_but(path, *pairs):
        expected = originals[repo / path]
        for old, new in pairs:
            assert old in expected
            expected = expected.replace(old, new)
        assert now[repo / path] == expected, path

    same_but("configs/rl.toml", ("max_off_policy_steps = 16", "max_staleness = 16"))
    same_but("configs/orchestrator.toml", ("'max_off_policy_steps'", "'max_staleness'"))
    same_but("configs/orchestrator.yaml", ("max_off_policy_steps:", "max_staleness:"))
    same_but("configs/resolved/orchestrator.json", ('"max_off_policy_steps":', '"max_staleness":'))
    same_but(
        "scripts/train.sh", ("--orchestrator.max-off-policy-steps", "--orchestrator.max-staleness")
    )
    same_but(".github/workflows/smoke.yml", ("--max-off-policy-steps 2", "--max-staleness 2"))
    same_but(
        "README.md",
        (
            "rl.toml --orchestrator.max-off-policy-steps 16",
            "rl.toml --orchestrator.max-staleness 16",
        ),
        ("--max-off-policy-steps=8", "--max-staleness=8"),
    )
    same_but(
        "alerts/create_alerts.py",
        ('"off_policy/max"', '"staleness/rollout/max"'),
        ('"off_policy/token/max"', '"staleness/rollout/max"'),
    )
    same_but(
        "reports/build_report.py",
        (
            '"off_policy/mean", "off_policy/max"',
            '"off_policy/mean", "staleness/rollout/mean", "off_policy/max", '
            '"staleness/rollout/max"',
        ),
        ("Summary('off_policy/max')", "Summary('staleness/rollout/max')"),
        ('SummaryMetric("off_policy/mean")', 'SummaryMetric("staleness/rollout/mean")'),
        (
            '"off_policy/in_flight/mean",\n',
            '"off_policy/in_flight/mean",\n                        '
            '"staleness/rollout/in_flight/mean",\n',
        ),
        (
            '"off_policy/in_queue/mean",\n',
            '"off_policy/in_queue/mean",\n                        '
            '"staleness/rollout/in_queue/mean",\n',
        ),
        ("metric='off_policy/dropped'", "metric='staleness/rollout/dropped'"),
        ('SummaryMetric("off_policy/token/mean")', 'SummaryMetric("staleness/token/mean")'),
    )
    for untouched in (
        "outputs/run1/configs/resolved/orchestrator.json",
        "vendor/old_dashboard.json",
        "assets/logo.png",
        "pyproject.toml",
        ".gitignore",
    ):
        assert (repo / untouched).read_bytes() == (DEMO / untouched).read_bytes()


def test_fixed_spec_files_are_what_the_engine_makes(run, repo):
    path = "dashboards/async-health--VmlldzoxMDc_.json"
    before = (repo / path).read_text()
    assert run("check", path, "--fix").exit_code == 1  # free text left for review
    after = (repo / path).read_text()
    document = json.loads(before)
    expected = rewrite(document["spec"], MIGRATION, kind="report", name=path)
    assert json.loads(after)["spec"] == expected.spec
    _, spliced = rewrite_text(before, MIGRATION, kind="report", name=path, root=("spec",))
    assert after == spliced
    edits = [replace(e, path=("spec", *e.path)) for e in expected.edits]
    assert outside(after, affected_paths(edits)) == outside(before, affected_paths(edits))


def test_fixed_yaml_spec_keeps_comments_and_quotes(run, repo):
    assert run("check", "dashboards/overview.yaml", "--fix").exit_code == 0
    text = (repo / "dashboards/overview.yaml").read_text()
    assert "chartTitle: Rollout staleness   # shown on the overview" in text
    assert "                - 'off_policy/max'\n                - 'staleness/rollout/max'\n" in text
    assert "metrics: [staleness/rollout/dropped]" in text
    assert "# Saved workspace" in text.splitlines()[0]
    import yaml

    spec = yaml.safe_load(text)
    expected = rewrite(yaml.safe_load((DEMO / "dashboards/overview.yaml").read_text()), MIGRATION)
    assert spec == expected.spec


def test_second_fix_changes_no_byte(run, repo):
    run("check", ".", "--fix")
    first = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    result = run("check", ".", "--fix")
    assert "Fixed" not in result.stdout
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == first


def test_diff_prints_and_writes_nothing(run, repo):
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    result = run("check", "configs", "--diff")
    assert result.exit_code == 1
    assert "--- a/configs/rl.toml\n+++ b/configs/rl.toml\n" in result.stdout
    assert "-max_off_policy_steps = 16 # 16/32 can be better" in result.stdout
    assert "+max_staleness = 16 # 16/32 can be better" in result.stdout
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == before


def test_clean_tree_exits_0(run, repo):
    result = run("check", "assets", "vendor", "pyproject.toml")
    assert (result.exit_code, result.stdout) == (
        0,
        "All clear: no old metric names or config keys in 1 file.\n",
    )


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("broken.json", '{"blocks": [ "off_policy/mean" ', "not valid JSON"),
        ("broken.yaml", "a: [off_policy/mean\n", "not valid YAML"),
        ("broken.toml", "max_off_policy_steps = \n", "not valid TOML"),
        ("broken.py", "x = ['off_policy/mean'\n", "not valid Python"),
    ],
)
def test_unparseable_file_is_a_finding(run, tmp_path, monkeypatch, name, content, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(content)
    result, found = findings(run, name)
    assert result.exit_code == 1
    (finding,) = found
    assert finding["rule"] == "parse-error"
    assert finding["message"].startswith(message)


def test_non_utf8_is_a_finding(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "latin.py").write_bytes(b"x = 'caf\xe9 off_policy/mean'\n")
    _, found = findings(run, "latin.py")
    assert [(f["rule"], f["message"]) for f in found] == [("parse-error", "not UTF-8 text")]


def test_files_without_an_old_name_are_not_parsed(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "other.json").write_text('{"broken": ')  # invalid, but nothing to look for
    result = run("check", "other.json")
    assert result.exit_code == 0


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ('mode = "replace"', '"off_policy/mean" -> "staleness/rollout/mean"'),
        ('ignore = ["renamed-metric"]', None),
    ],
)
def test_pyproject_settings(run, tmp_path, monkeypatch, setting, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f"[tool.wbmigrate]\n{setting}\n")
    (tmp_path / "plot.py").write_text('y = ["off_policy/mean", "loss"]\n')
    result = run("check", "plot.py", "--diff")
    if expected is None:
        assert result.exit_code == 0
    else:
        old, new = expected.split(" -> ")
        assert f'-y = [{old}, "loss"]\n+y = [{new}, "loss"]\n' in result.stdout


def test_command_line_wins_over_pyproject(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.wbmigrate]\nmode = "replace"\n')
    (tmp_path / "plot.py").write_text('y = ["off_policy/mean"]\n')
    result = run("check", "plot.py", "--diff", "--mode", "dual")
    assert '+y = ["off_policy/mean", "staleness/rollout/mean"]' in result.stdout


@pytest.mark.parametrize(
    ("args", "pyproject", "message"),
    [
        (["--mapping", "nope"], None, "Error: unknown mapping 'nope'"),
        ([], '[tool.wbmigrate]\ncolour = "red"\n', "unknown key 'colour' in [tool.wbmigrate]"),
        ([], '[tool.wbmigrate]\nignore = ["typo"]\n', "unknown rule 'typo'"),
    ],
)
def test_errors_exit_2(run, tmp_path, monkeypatch, args, pyproject, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plot.py").write_text('y = ["off_policy/mean"]\n')
    if pyproject:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    result = run("check", "plot.py", *args)
    assert result.exit_code == 2
    assert message in result.stderr


# --- output formats ---------------------------------------------------------------------------


def test_json_format(run, repo):
    result, found = findings(run, "configs/rl.toml")
    data = json.loads(result.stdout)
    assert data["summary"] == {
        "files": 1,
        "findings": 1,
        "fixable": 1,
        "rules": {"renamed-config-key": 1},
    }
    (finding,) = found
    assert finding["fix"] == [
        {
            "start_line": 9,
            "start_column": 1,
            "end_line": 9,
            "end_column": 21,
            "text": "max_staleness",
        }
    ]


def validate_sarif(sarif):
    """The structure SARIF 2.1.0 requires of what wbmigrate writes."""
    assert sarif["version"] == "2.1.0"
    assert sarif["$schema"].endswith("sarif-2.1.0.json")
    (run_,) = sarif["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "wbmigrate"
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert all(rule["shortDescription"]["text"] for rule in driver["rules"])
    for result in run_["results"]:
        assert result["ruleId"] == rule_ids[result["ruleIndex"]]
        assert result["level"] in ("error", "warning", "note")
        assert result["message"]["text"]
        for location in result["locations"]:
            physical = location["physicalLocation"]
            assert not Path(physical["artifactLocation"]["uri"]).is_absolute()
            region = physical["region"]
            assert 1 <= region["startLine"] <= region["endLine"]
            assert region["startColumn"] >= 1
        for fix in result.get("fixes", []):
            assert fix["description"]["text"]
            for change in fix["artifactChanges"]:
                assert change["artifactLocation"]["uri"]
                for replacement in change["replacements"]:
                    deleted = replacement["deletedRegion"]
                    assert 1 <= deleted["startLine"] <= deleted["endLine"]
                    assert isinstance(replacement["insertedContent"]["text"], str)


def test_sarif_format(run, repo):
    result = run("check", ".", "--format", "sarif")
    assert result.exit_code == 1
    sarif = json.loads(result.stdout)
    validate_sarif(sarif)
    results = sarif["runs"][0]["results"]
    assert len(results) == 47
    toml = next(
        r
        for r in results
        if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "configs/rl.toml"
    )
    assert toml["fixes"][0]["artifactChanges"][0]["replacements"] == [
        {
            "deletedRegion": {"startLine": 9, "startColumn": 1, "endLine": 9, "endColumn": 21},
            "insertedContent": {"text": "max_staleness"},
        }
    ]


def test_github_annotations_are_capped(run, repo):
    result = run("check", ".", "--format", "github")
    lines = result.stdout.splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    warnings = [line for line in lines if line.startswith("::warning ")]
    assert (len(errors), len(warnings)) == (10, 3)
    assert errors[0].startswith(
        "::error file=README.md,line=6,col=29,endLine=6,endColumn=64,"
        "title=wbmigrate renamed-config-key::"
    )
    assert lines[-2] == (
        "::notice title=wbmigrate::34 more findings are not annotated (GitHub "
        "shows 10 per level); see the job log or upload SARIF"
    )
    assert lines[-1] == "Found 47 findings in 14 files (43 fixable with --fix)."


def test_markdown_format(run, repo):
    out = run("check", "configs", "--format", "markdown").stdout
    assert out.startswith("### wbmigrate check\n\nFound 4 findings in 4 files (4 fixable")
    assert (
        "| 9:1 | `renamed-config-key` | orchestrator.max_off_policy_steps -> "
        "orchestrator.max_staleness (config key) | yes |"
    ) in out


def test_pre_commit_hooks_file():
    import yaml

    hooks = yaml.safe_load((FIXTURES.parent / ".pre-commit-hooks.yaml").read_text())
    by_id = {hook["id"]: hook for hook in hooks}
    assert by_id["wbmigrate-check"]["entry"] == "wbmigrate check"
    assert by_id["wbmigrate-fix"]["entry"] == "wbmigrate check --fix"
    assert all(hook["language"] == "python" for hook in hooks)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        (
            "rl.toml",
            "[orchestrator]\nmax_off_policy_steps = 8  # wbmigrate: ignore[renamed-config-key] "
            "pinned until the cluster upgrades\n",
        ),
        (
            "orchestrator.yaml",
            "max_off_policy_steps: 8  # wbmigrate: ignore[renamed-config-key] "
            "pinned until the cluster upgrades\n",
        ),
        (
            "run.sh",
            "uv run orchestrator --max-off-policy-steps 8  # wbmigrate: ignore[*] old image\n",
        ),
    ],
)
def test_suppressions_in_toml_yaml_and_shell(run, tmp_path, monkeypatch, name, content):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(content)
    assert run("check", name).exit_code == 0
    (tmp_path / name).write_text(content.split("  # wbmigrate")[0] + "\n")
    assert run("check", name).exit_code == 1
