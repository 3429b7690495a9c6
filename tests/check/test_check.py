"""`wbmigrate check` over the dashboards-as-code demo repository: findings for every file kind,
fixes that change only the old tokens, output formats, suppressions and exit codes."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from helpers import FIXTURES, REPO, affected_paths, outside, returns_soon

from wbmigrate import find_mapping
from wbmigrate.check import run as run_module
from wbmigrate.check.run import check_file
from wbmigrate.check.suppress import Ignores
from wbmigrate.check.targets import Targets
from wbmigrate.engine.model import Options
from wbmigrate.rewrite import rewrite, rewrite_text

DEMO = FIXTURES / "demo-repo"
MIGRATION = find_mapping("prime-rl").migration()
SCHEMA = json.loads((REPO / "schemas" / "check-report.schema.json").read_text())


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


WR = "import wandb_workspaces.reports.v2 as wr\n"


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
        "mention",
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
        ("reports/build_report.py", 33, "mention"),  # a removed gauge kept in a dual list
        ("alerts/create_alerts.py", 11, "renamed-metric"),  # RunEvent.metric("...")
        ("alerts/create_alerts.py", 16, "removed-metric"),  # removed, with an equivalent
        ("analysis/staleness.py", 7, "needs-review"),  # keys read with run.history: not fixed
        ("analysis/staleness.py", 14, "needs-review"),  # a config read: old configs keep it
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
    assert {f["rule"] for f in archive} == {"renamed-metric", "renamed-config-key"}


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


@pytest.mark.parametrize(("suffix", "fixed"), [("", True), (" old runs", False)])
def test_fix_fixes_a_spec_line_whose_suppression_has_no_reason(
    run, tmp_path, monkeypatch, suffix, fixed
):
    """A suppression without a reason suppresses nothing: its line's finding is reported as
    fixable and counted as fixed, so `--fix` fixes it, in a YAML spec as in Python."""
    spec = (FIXTURES / "check-cases" / "yaml" / "workspace-spec" / "input.yaml").read_text()
    lines = spec.splitlines(keepends=True)
    assert lines[19].strip() == "- off_policy/mean"
    lines[19] = lines[19].rstrip("\n") + f"  # wbmigrate: ignore[renamed-metric]{suffix}\n"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ws.yaml").write_text("".join(lines))
    result = run("check", "ws.yaml", "--mode", "replace", "--fix")
    assert result.exit_code == 0
    assert ("off_policy/mean  #" not in (tmp_path / "ws.yaml").read_text()) is fixed
    assert ("Fixed 4 findings." in result.stdout) is fixed


def test_fix_changes_only_the_old_tokens(run, repo):
    originals = {p: p.read_text() for p in repo.rglob("*") if p.is_file() and p.suffix != ".png"}
    result = run("check", ".", "--fix")
    assert result.exit_code == 1  # needs-review and a removed metric remain
    assert "Fixed 42 findings." in result.stdout
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


def test_what_fix_leaves_is_reported_where_it_now_is(run, repo):
    """A fix moves what follows it (a migration note inserts blocks): what is left is reported
    as a check of the fixed files reports it, not where it was before the fix."""
    left = json.loads(run("check", ".", "--fix", "--format", "json").stdout)["findings"]
    assert left == json.loads(run("check", ".", "--format", "json").stdout)["findings"]
    spec = "dashboards/async-health--VmlldzoxMDc_.json"
    assert [f["line"] for f in left if f["path"] == spec and f["rule"] == "needs-review"] == [47]


def test_diff_prints_and_writes_nothing(run, repo):
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    result = run("check", "configs", "--diff")
    assert result.exit_code == 1
    assert "--- a/configs/rl.toml\n+++ b/configs/rl.toml\n" in result.stdout
    assert "-max_off_policy_steps = 16 # 16/32 can be better" in result.stdout
    assert "+max_staleness = 16 # 16/32 can be better" in result.stdout
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == before


def test_diff_summary_goes_to_stderr_unless_quiet(run, repo):
    summary = run("check", "configs").stdout.splitlines()[-1]
    assert run("check", "configs", "--diff").stderr == f"{summary}\n"
    quiet = run("check", "configs", "--diff", "-q")
    assert (quiet.exit_code, quiet.stderr) == (1, "")
    assert quiet.stdout == run("check", "configs", "--diff").stdout


def test_diff_exits_0_without_fixes_or_with_exit_zero(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rl.toml").write_text("max_off_policy_steps = 8\n")
    (tmp_path / "keys.py").write_text('k = f"off_policy/{name}"\n')  # a warning: no fix
    assert run("check", "rl.toml", "--diff", "--exit-zero").exit_code == 0
    result = run("check", "keys.py", "--diff")
    assert (result.exit_code, result.stdout) == (0, "")


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
    (finding,) = [f for f in found if f["rule"] == "parse-error"]
    assert finding["message"].startswith(message)
    assert {f["rule"] for f in found} <= {"parse-error", "needs-review"}  # its names still count


def test_non_utf8_is_read_as_latin1_and_never_fixed(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = "# caf\xe9\nimport wandb\nwandb.log({'off_policy/mean': 1})\n"
    (tmp_path / "latin.py").write_bytes(text.encode("latin-1"))
    result, found = findings(run, "latin.py")
    assert result.exit_code == 1
    assert [(f["line"], f["column"], f["rule"], f["level"]) for f in found] == [
        (1, 6, "parse-error", "warning"),  # at the first byte that is not UTF-8
        (3, 12, "renamed-metric", "warning"),  # on its line, with no fix
    ]
    assert found[0]["message"].startswith("file not decodable as UTF-8: decoded as latin-1")
    fixed = run("check", "latin.py", "--fix")
    assert fixed.exit_code == 1
    assert (tmp_path / "latin.py").read_bytes() == text.encode("latin-1")


def test_a_non_utf8_file_without_an_old_name_is_clean(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "latin.py").write_bytes(b"x = 'caf\xe9'\n")
    assert run("check", "latin.py").exit_code == 0


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
    (tmp_path / "plot.py").write_text(f'{WR}wr.LinePlot(y=["off_policy/mean", "loss"])\n')
    result = run("check", "plot.py", "--diff")
    if expected is None:
        assert result.exit_code == 0
    else:
        old, new = expected.split(" -> ")
        assert f'-wr.LinePlot(y=[{old}, "loss"])\n+wr.LinePlot(y=[{new}, "loss"])\n' in (
            result.stdout
        )


def test_command_line_wins_over_pyproject(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.wbmigrate]\nmode = "replace"\n')
    (tmp_path / "plot.py").write_text(f'{WR}wr.LinePlot(y=["off_policy/mean"])\n')
    result = run("check", "plot.py", "--diff", "--mode", "dual")
    assert '+wr.LinePlot(y=["off_policy/mean", "staleness/rollout/mean"])' in result.stdout


@pytest.mark.parametrize(
    ("args", "pyproject", "message"),
    [
        (["--mapping", "nope"], None, "Error: unknown mapping 'nope'"),
        ([], '[tool.wbmigrate]\ncolour = "red"\n', "unknown key 'colour' in [tool.wbmigrate]"),
        ([], '[tool.wbmigrate]\nignore = ["typo"]\n', "unknown rule 'typo'"),
        ([], '[tool.wbmigrate]\nselect = ["typo"]\n', "unknown rule 'typo'"),
        ([], "[tool.wbmigrate]\nselect = []\n", "select must name at least one rule"),
        ([], '[tool.wbmigrate]\nselect = "mention"\n', "select must be a list of strings"),
        ([], '[tool.wbmigrate]\nignore = ["internal-error"]\n', "it is always reported"),
        (["--select", "typo"], None, "Invalid value for '--select'"),
        (["--ignore", "internal-error"], None, "Invalid value for '--ignore'"),
        (["--statistics", "--format", "json"], None, "--statistics prints a text table"),
        (["--statistics", "--diff"], None, "--statistics prints a text table"),
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


# --- levels and exit codes --------------------------------------------------------------------

# a fixable config key (an error), a key built at run time (a warning), a comment (a note)
LEVEL_FILES = {
    "error.toml": "max_off_policy_steps = 8\n",
    "warning.py": 'k = f"off_policy/{name}"\n',
    "note.py": "# off_policy/max was renamed\n",
}


@pytest.fixture
def levels(tmp_path, monkeypatch):
    """A folder with a file of each level, and a folder `mixed` with all three."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mixed").mkdir()
    for name, text in LEVEL_FILES.items():
        (tmp_path / name).write_text(text)
        (tmp_path / "mixed" / name).write_text(text)
    return tmp_path


def levels_of(run, *args):
    _, found = findings(run, *args)
    return sorted({f["level"] for f in found})


def rules_of(run, *args):
    _, found = findings(run, *args)
    return {f["rule"] for f in found}


def test_the_level_files_have_their_levels(run, levels):
    assert levels_of(run, "error.toml") == ["error"]
    assert levels_of(run, "warning.py") == ["warning"]
    assert levels_of(run, "note.py") == ["note"]
    assert levels_of(run, "mixed") == ["error", "note", "warning"]


@pytest.mark.parametrize(
    ("paths", "code"),
    [(["note.py"], 0), (["warning.py"], 1), (["error.toml"], 1), (["note.py", "warning.py"], 1)],
    ids=["only-notes", "a-warning", "an-error", "notes-and-a-warning"],
)
def test_exit_code_by_level(run, levels, paths, code):
    assert run("check", *paths).exit_code == code
    assert run("check", *paths, "--format", "json").exit_code == code


def test_only_notes_are_all_clear(run, levels):
    result = run("check", "note.py")
    assert result.stdout.splitlines()[-1] == (
        "All clear: nothing to fix or review in 1 file (1 note)."
    )  # fmt: skip
    assert "  note     mention  " in result.stdout


@pytest.mark.parametrize("format_", ["text", "json", "sarif", "github", "markdown"])
def test_exit_zero(run, levels, format_):
    result = run("check", ".", "--exit-zero", "--format", format_)
    assert result.exit_code == 0
    assert result.stdout == run("check", ".", "--format", format_).stdout


def test_fix_exit_code_counts_what_is_left(run, levels):
    fixed = run("check", "error.toml", "note.py", "--fix")
    assert (fixed.exit_code, fixed.stdout.splitlines()[-1]) == (
        0,
        "Fixed 1 finding. All clear: nothing to fix or review in 2 files (1 note).",
    )
    left = run("check", "mixed", "--fix")
    assert left.exit_code == 1
    assert left.stdout.splitlines()[-1].startswith("Fixed 1 finding. Found 1 warning and 1 note")


def test_select_and_ignore(run, levels):
    assert rules_of(run, "mixed", "--select", "needs-review") == {"needs-review"}
    both = ["--select", "mention", "--select", "renamed-config-key"]
    assert rules_of(run, "mixed", *both) == {"mention", "renamed-config-key"}
    assert rules_of(run, "mixed", *both, "--ignore", "renamed-config-key") == {"mention"}
    assert run("check", "mixed", "--select", "mention").exit_code == 0


def test_select_and_ignore_take_rules_separated_by_commas(run, levels):
    """As ruff takes them: `--select a,b` is `--select a --select b`."""
    both = rules_of(run, "mixed", "--select", "mention,renamed-config-key")
    assert both == rules_of(run, "mixed", "--select", "mention", "--select", "renamed-config-key")
    assert both == {"mention", "renamed-config-key"}
    spaced = ["--select", " mention, needs-review,", "--ignore", "mention"]
    assert rules_of(run, "mixed", *spaced) == {"needs-review"}
    wrong = run("check", "mixed", "--select", "mention,needs-reveiw")
    assert wrong.exit_code == 2
    assert "'needs-reveiw' is not one of" in wrong.stderr


def test_no_path_checks_the_current_folder(run, levels):
    """As ruff does: `wbmigrate check` is `wbmigrate check .`."""
    assert run("check").stdout == run("check", ".").stdout
    assert run("check").exit_code == 1


# Line breaks of `str.splitlines` that are no line feed: a line count that took them for one
# put a suppression, a diff's hunk or a block's end on the wrong line.
ODD_BREAKS = ["\f", "\v", "\x1c", "\x85", "\u2028", "\r"]


@pytest.mark.parametrize("odd", ODD_BREAKS)
def test_a_suppression_holds_on_its_own_line_after_an_odd_line_break(
    run, tmp_path, monkeypatch, odd
):
    """Suppressions are numbered as findings are, by line feeds: one on line 3 suppresses line
    3's finding, never line 4's."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(
        f"import wandb\n# W&B{odd}\n"
        'wandb.log({"off_policy/mean": 1})  # wbmigrate: ignore[renamed-metric] old runs\n'
        'wandb.log({"off_policy/max": 1})\n',
        newline="",
    )
    _, found = findings(run, "train.py")
    assert [(f["line"], f["rule"]) for f in found] == [(4, "renamed-metric")]


@pytest.mark.parametrize("odd", ODD_BREAKS)
def test_a_diff_numbers_lines_as_patch_does_after_an_odd_line_break(
    run, tmp_path, monkeypatch, odd
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(
        f"import wandb\nx = 1  # W&B{odd}\n\nwandb.log({{'off_policy/mean': 1}})\n", newline=""
    )
    diff = run("check", "train.py", "--diff").stdout
    assert "@@ -1,4 +1,4 @@\n" in diff
    assert "No newline" not in diff
    assert diff.endswith(
        "-wandb.log({'off_policy/mean': 1})\n+wandb.log({'staleness/rollout/mean': 1})\n"
    )


def test_a_suppression_naming_an_unknown_rule_is_a_warning(run, tmp_path, monkeypatch):
    """A misspelt rule suppresses nothing: the finding stays, and a warning at the misspelt
    name says why (with the rule it was probably meant to be)."""
    monkeypatch.chdir(tmp_path)
    line = 'run.log({"off_policy/mean": 1})  # wbmigrate: ignore[needs-reveiw, bogus] legacy\n'
    (tmp_path / "train.py").write_text(line)
    result, found = findings(run, "train.py")
    assert result.exit_code == 1
    unknown = [f for f in found if f["rule"] == "unknown-rule"]
    assert [(f["line"], f["column"], f["level"]) for f in unknown] == [
        (1, line.index("needs-reveiw") + 1, "warning"),
        (1, line.index("bogus") + 1, "warning"),
    ]
    assert unknown[0]["message"] == (
        '"needs-reveiw" is no rule of wbmigrate\'s: it suppresses nothing '
        '(did you mean "needs-review"?)'
    )
    assert "did you mean" not in unknown[1]["message"]
    assert "renamed-metric" in {f["rule"] for f in found}  # not suppressed
    assert rules_of(run, "train.py", "--ignore", "unknown-rule") == {"renamed-metric"}
    (tmp_path / "train.py").write_text(line.replace("needs-reveiw, bogus", "renamed-metric, *"))
    assert run("check", "train.py").exit_code == 0  # known rules (and `*`) raise nothing


def test_concise_format_is_one_line_per_finding(run, levels):
    """`--output-format concise` (ruff's name; `--format` is the same option): what editors'
    problem matchers and grep read, `path:line:col: level rule message`."""
    result = run("check", "mixed", "--output-format", "concise")
    *lines, blank, summary = result.stdout.splitlines()
    _, found = findings(run, "mixed")
    assert lines == [
        f"{f['path']}:{f['line']}:{f['column']}: {f['level']} {f['rule']}"
        f"{' [*]' if f['fix'] else ''} {f['message']}"
        for f in found
    ]
    assert (blank, summary) == ("", result.stdout.splitlines()[-1])
    assert summary.startswith("Found ")
    assert result.exit_code == 1
    quiet = run("check", "mixed", "--format", "concise", "-q").stdout.splitlines()
    assert quiet == [line for line in lines if ": note " not in line]


def test_select_in_pyproject_and_the_command_line_wins(run, levels):
    (levels / "pyproject.toml").write_text('[tool.wbmigrate]\nselect = ["needs-review"]\n')
    assert rules_of(run, "mixed") == {"needs-review"}
    assert rules_of(run, "mixed", "--select", "mention") == {"mention"}


def test_statistics(run, repo):
    _, found = findings(run, ".")
    result = run("check", ".", "--statistics")
    assert result.exit_code == 1
    *rows, summary = result.stdout.splitlines()
    assert summary == run("check", ".").stdout.splitlines()[-1]
    counted = {}
    for row in rows:
        count, level, rule, *mark = row.split()
        counted[rule, level] = (int(count), mark)
    expected = Counter((f["rule"], f["level"]) for f in found)
    assert {key: n for key, (n, _) in counted.items()} == dict(expected)
    assert [n for n, _ in counted.values()] == sorted(expected.values(), reverse=True)
    for (rule, level), (_, mark) in counted.items():
        fixable = all(f["fixable"] for f in found if (f["rule"], f["level"]) == (rule, level))
        assert mark == (["[*]"] if fixable else [])


def test_statistics_quiet_prints_only_the_table(run, levels):
    result = run("check", "warning.py", "--statistics", "-q")
    assert (result.exit_code, result.stdout) == (1, "1  warning  needs-review\n")


def test_quiet_prints_only_errors_and_warnings(run, repo):
    full, quiet = run("check", "."), run("check", ".", "-q")
    assert quiet.exit_code == full.exit_code == 1
    finding_lines = [line for line in full.stdout.splitlines() if line.startswith("  ")]
    assert any(line.split()[1] == "note" for line in finding_lines)  # else this tests nothing
    kept = [line for line in finding_lines if line.split()[1] != "note"]
    assert [line for line in quiet.stdout.splitlines() if line.startswith("  ")] == kept
    assert "Found" not in quiet.stdout
    assert quiet.stdout.endswith("[*]\n") or not quiet.stdout.endswith("\n\n")


@pytest.mark.parametrize("paths", [["note.py"], ["error.toml", "--fix"]], ids=["notes", "fixed"])
def test_quiet_prints_nothing_when_nothing_fails(run, levels, paths):
    result = run("check", *paths, "-q")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


# --- a bug in wbmigrate -----------------------------------------------------------------------


def crash(label, text, targets):
    raise ValueError("a bug")


@pytest.fixture
def crashing(levels, monkeypatch):
    """Python files make wbmigrate crash; TOML files are checked as usual."""
    import wbmigrate.check.run

    monkeypatch.setitem(wbmigrate.check.run.KINDS, "*.py", (f"{__name__}:crash",))
    return levels


@pytest.mark.parametrize(
    "args",
    [[], ["--exit-zero"], ["--format", "json"], ["--diff"], ["--fix"], ["-q"], ["--statistics"],
     ["--select", "renamed-config-key"]],
    ids=lambda args: " ".join(args) or "text",
)  # fmt: skip
def test_internal_error_exits_2_and_reports_the_other_files(run, crashing, args):
    result = run("check", "warning.py", "error.toml", *args)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: wbmigrate failed on 1 file (warning.py): a bug, please report it; every other "
        "file was checked."
    )
    assert "Traceback" not in result.stdout + result.stderr
    if "--fix" in args:
        assert (crashing / "error.toml").read_text() == "max_staleness = 8\n"
    elif "--diff" in args:
        assert "+max_staleness = 8" in result.stdout
    elif "--statistics" in args:
        assert "1  error    internal-error" in result.stdout
    else:
        assert "error.toml" in result.stdout
        assert "ValueError: a bug" in result.stdout


def test_internal_error_in_json_and_sarif(run, crashing):
    result = run("check", ".", "--format", "json")
    data = json.loads(result.stdout)
    jsonschema.validate(data, SCHEMA)
    crashed = [f for f in data["findings"] if f["rule"] == "internal-error"]
    assert sorted(f["path"] for f in crashed) == [
        "mixed/note.py", "mixed/warning.py", "note.py", "warning.py",
    ]  # fmt: skip
    assert all(f["level"] == "error" and "please report" in f["message"] for f in crashed)
    assert {"error.toml", "mixed/error.toml"} <= {f["path"] for f in data["findings"]}
    sarif = json.loads(run("check", ".", "--format", "sarif").stdout)
    assert sarif["runs"][0]["invocations"] == [{"executionSuccessful": False}]
    assert re.search(r"^Error: wbmigrate failed on 4 files \([^)]+, \.\.\.\): a bug", result.stderr)


# --- output formats ---------------------------------------------------------------------------


def test_json_format(run, repo):
    result, found = findings(run, "configs/rl.toml")
    data = json.loads(result.stdout)
    assert data["version"] == 1
    assert data["summary"]["files"] == 1
    toml = [f for f in found if f["rule"] == "renamed-config-key"]
    assert [f["fix"] for f in toml] == [
        [
            {
                "start_line": 9,
                "start_column": 1,
                "end_line": 9,
                "end_column": 21,
                "text": "max_staleness",
            }
        ]
    ]
    assert toml[0]["level"] == "error"


def test_json_summary_counts_the_findings(run, repo):
    result, found = findings(run, ".")
    summary = json.loads(result.stdout)["summary"]
    assert summary["findings"] == len(found)
    assert summary["fixable"] == sum(f["fixable"] for f in found)
    levels = Counter(f["level"] for f in found)
    assert summary["levels"] == {level: levels[level] for level in ("error", "warning", "note")}
    assert summary["rules"] == dict(Counter(f["rule"] for f in found))
    assert all(f["fixable"] == (f["level"] == "error") for f in found)


@pytest.mark.parametrize("paths", [["."], ["configs", "--fix"], ["assets"]], ids=str)
def test_json_matches_its_schema(run, repo, paths):
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(json.loads(run("check", *paths, "--format", "json").stdout), SCHEMA)


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
    _, found = findings(run, ".")
    assert [(r["ruleId"], r["level"]) for r in results] == [(f["rule"], f["level"]) for f in found]
    assert sarif["runs"][0]["invocations"] == [{"executionSuccessful": True}]
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
    _, found = findings(run, ".")
    result = run("check", ".", "--format", "github")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    per_level = Counter(f["level"] for f in found)
    hidden = any(n > 10 for n in per_level.values())
    caps = {"error": 10, "warning": 10, "notice": 9 if hidden else 10}
    for level, github in [("error", "error"), ("warning", "warning"), ("note", "notice")]:
        shown = [line for line in lines if line.startswith(f"::{github} file=")]
        assert len(shown) == min(per_level[level], caps[github])
    first = next(f for f in found if f["level"] == "error")
    assert next(line for line in lines if line.startswith("::error ")).startswith(
        f"::error file={first['path']},line={first['line']},col={first['column']},"
    )
    assert hidden  # the demo repository has more than 10 errors
    assert lines[-2].startswith("::notice title=wbmigrate::")
    assert lines[-2].endswith(
        "not annotated (GitHub shows 10 per level); run `wbmigrate check` locally or see the "
        "SARIF upload for the full list"
    )
    assert lines[-1] == run("check", ".").stdout.splitlines()[-1]


def test_markdown_format(run, repo):
    result = run("check", "configs", "--format", "markdown")
    assert result.exit_code == 1
    summary = run("check", "configs").stdout.splitlines()[-1]
    assert result.stdout.startswith(f"### wbmigrate check\n\n{summary}\n")
    assert (
        "| 9:1 | error | `renamed-config-key` | orchestrator.max_off_policy_steps -> "
        "orchestrator.max_staleness (config key) | yes |"
    ) in result.stdout


def test_markdown_folds_notes_away(run, levels):
    out = run("check", "mixed", "--format", "markdown").stdout
    details = out.index("<details><summary>1 note: ")
    assert out.index("| warning | `needs-review` |") < details < out.index("| note | `mention` |")
    assert out.endswith("</details>\n\n")


def test_pre_commit_hooks_file():
    import yaml

    hooks = yaml.safe_load((FIXTURES.parent / ".pre-commit-hooks.yaml").read_text())
    by_id = {hook["id"]: hook for hook in hooks}
    assert by_id["wbmigrate-check"]["entry"] == "wbmigrate check --force-exclude"
    assert by_id["wbmigrate-fix"]["entry"] == "wbmigrate check --force-exclude --fix"
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


def test_a_file_replaced_by_a_fifo_after_listing_is_one_finding_and_the_rest_fixed(
    run, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("import wandb\nwandb.log({'off_policy/mean': 1})\n")
    listed = run_module.find_files

    def then_replaced(*args, **kwargs):  # listed, then a.py becomes a FIFO before it is read
        found = list(listed(*args, **kwargs))
        (tmp_path / "a.py").unlink()
        os.mkfifo(tmp_path / "a.py")
        return found

    monkeypatch.setattr(run_module, "find_files", then_replaced)
    result, found = returns_soon(findings, run, ".", "--fix")
    assert result.exit_code == 1
    assert [(f["path"], f["rule"], f["message"]) for f in found] == [
        ("a.py", "parse-error", "cannot read it: a FIFO is not a regular file")
    ]
    assert "staleness/rollout/mean" in (tmp_path / "b.py").read_text()


def test_a_symlink_put_in_a_files_place_after_listing_is_not_read(tmp_path):
    path = tmp_path / "a.py"
    path.symlink_to("/dev/zero")
    report = returns_soon(check_file, path, Targets(MIGRATION, Options()), Ignores())
    assert report is not None
    assert [f.message for f in report.findings] == ["cannot read it: a symbolic link; not followed"]


def test_a_bug_of_a_checker_is_one_internal_error_and_the_names_still_get_a_result(
    tmp_path, monkeypatch
):
    """The residual pass still gives the file's old names a result (here, one to review)."""

    def failing(*args):
        raise ValueError("a bug")

    monkeypatch.setattr("wbmigrate.check.documents.config_keys", failing)
    path = tmp_path / "a.json"
    path.write_text('{"notes": "see off_policy/mean"}\n')
    report = check_file(path, Targets(MIGRATION, Options()), Ignores())
    assert report is not None
    crashed, *rest = report.findings
    assert (crashed.rule.value, crashed.line, crashed.message) == (
        "internal-error",
        1,
        "wbmigrate failed on this file (ValueError: a bug); please report it",
    )
    assert ["off_policy/mean" in f.message for f in rest] == [True]
