"""`wbmigrate verify` end to end: a project migrated by wbmigrate verifies clean; one migrated
by a naive search-and-replace fails with one finding per problem; --baseline with wbmigrate's
own backup and with a saved plan; files; formats and exit codes."""

from __future__ import annotations

import json
import re

import pytest
from helpers import FIXTURES, TARGET

# What a hand-made migration does: every old name replaced by a new one, in-flight and
# in-queue both by the rollout total (their split lost), and the removed gauges left alone.
NAIVE = {
    "off_policy/in_flight/mean": "staleness/rollout/mean",
    "off_policy/in_queue/mean": "staleness/rollout/mean",
    "off_policy/in_flight/max": "staleness/rollout/max",
    "off_policy/in_queue/max": "staleness/rollout/max",
    "off_policy/token/mean": "staleness/token/mean",
    "off_policy/token/masked": "staleness/token/masked",
    "off_policy/token/max": "staleness/rollout/max",
    "off_policy/dropped": "staleness/rollout/dropped",
    "off_policy/mean": "staleness/rollout/mean",
    "off_policy/max": "staleness/rollout/max",
}
WHOLE = re.compile(r"(?<![\w/])(" + "|".join(map(re.escape, NAIVE)) + r")(?![\w/])")


def naive(text: str) -> str:
    return WHOLE.sub(lambda m: NAIVE[m[1]], text)


def naive_migration(server) -> None:
    state = server.state
    for view_id in list(state.views):
        state.edit_view(view_id, naive)
    for trigger in state.triggers.values():
        event = trigger["triggeringCondition"]
        event["filter"] = naive(event["filter"])


def findings(result) -> list[dict]:
    return json.loads(result.stdout)["findings"]


def test_a_project_migrated_by_wbmigrate_verifies_clean(run, live):
    assert run("apply", TARGET, "--yes").exit_code == 0
    result = run("verify", TARGET)
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "Verify: 11 objects verified; all hold."


def test_before_the_migration_every_old_name_is_a_finding(run, live):
    result = run("verify", TARGET, "--format", "json")
    assert result.exit_code == 1
    assert {f["check"] for f in findings(result)} == {"old-name-left"}


def test_a_naive_search_and_replace_fails_once_per_problem(run, live):
    naive_migration(live)
    result = run("verify", TARGET, "--format", "json")
    assert result.exit_code == 1
    found = sorted((f["check"], f["object"], f["where"][-1]) for f in findings(result))
    merged = [f for f in found if f[0] == "split-lost"]
    assert merged == sorted(
        [
            (
                "split-lost",
                'report "Async health"',
                'panel "In flight vs in queue" (Run History Line Plot)',
            ),
            ("split-lost", 'report "Async health"', 'panel "Max staleness split" (Bar Chart)'),
            (
                "split-lost",
                'report "Async health (draft)"',
                'panel "In flight vs in queue" (Run History Line Plot)',
            ),
            (
                "split-lost",
                'report "Async health (draft)"',
                'panel "Max staleness split" (Bar Chart)',
            ),
        ]
    )
    gauges = [f for f in found if f[0] == "old-name-left" and f[2] in ("panel", "enabled")]
    assert sorted(f[1] for f in gauges) == [
        'automation "dispatcher-stuck"',  # still enabled, on a gauge that is gone
        'report "Async health (draft)"',
        'report "Async health"',
        'report "Dispatcher legacy"',
        'workspace "Overview"',
    ]
    # Nothing is reported twice: one finding per place.
    places = [(f["object"], f["pointer"], f["check"]) for f in findings(result)]
    assert len(places) == len(set(places))


def test_dual_mode_wants_the_old_keys_the_naive_migration_dropped(run, live):
    """A naive migration replaced the old keys: in replace mode that is what was asked, in dual
    mode it is not (runs before the boundary vanish), yet only the split and the gauges are
    findings here, because no old key is left to lack a companion."""
    naive_migration(live)
    dual = {f["check"] for f in findings(run("verify", TARGET, "--format", "json"))}
    replaced = {
        f["check"] for f in findings(run("verify", TARGET, "--mode", "replace", "--format", "json"))
    }
    assert dual == replaced == {"old-name-left", "split-lost"}


def test_baseline_from_wbmigrates_own_backup(run, live, tmp_path):
    assert run("apply", TARGET, "--yes", "--backup-dir", "backups").exit_code == 0
    result = run("verify", TARGET, "--baseline", "backups")
    assert result.exit_code == 0, result.stdout
    assert result.stdout.startswith(f"Verify {TARGET} (against the backup backups)")


def test_baseline_finds_a_pair_dropped_by_hand(run, live):
    """After wbmigrate's migration someone deletes the in-queue series from a panel: alone
    the panel looks fine; against the backup, the split is lost."""
    assert run("apply", TARGET, "--yes", "--backup-dir", "backups").exit_code == 0
    report = live.state.find("Async health")
    pair = ',"off_policy/in_queue/max","staleness/rollout/in_queue/max"'
    assert pair in live.state.views[report]["spec"]
    live.state.edit_view(report, lambda spec: spec.replace(pair, ""))
    assert run("verify", TARGET).exit_code == 0
    result = run("verify", TARGET, "--baseline", "backups", "--format", "json")
    assert result.exit_code == 1
    (lost,) = findings(result)
    assert lost["check"] == "split-lost"
    assert "staleness/rollout/in_queue/max no longer" in lost["message"]


def test_baseline_from_a_saved_plan(run, live):
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    naive_migration(live)
    result = run("verify", TARGET, "--baseline", "plan.json", "--format", "json")
    assert result.exit_code == 1
    assert "the saved plan plan.json" in json.loads(result.stdout)["baseline"]
    lost = [f for f in findings(result) if f["check"] == "split-lost"]
    assert len(lost) == 5  # the four merged panels, and the alerts:
    assert lost[-1]["message"] == (
        "alerts that watched staleness/rollout/in_queue/max, staleness/rollout/max all watch "
        "staleness/rollout/max now"
    )


@pytest.mark.parametrize("made", ["plan", "backup"])
def test_a_baseline_made_on_another_host_is_refused(run, live, monkeypatch, made):
    """A plan or backup records its host: its ids name another deployment's objects there."""
    if made == "plan":
        assert run("plan", TARGET, "--out", "base").exit_code == 0
    else:
        assert run("apply", TARGET, "--yes", "--backup-dir", "base").exit_code == 0
    monkeypatch.setenv("WANDB_BASE_URL", live.url.replace("127.0.0.1", "localhost"))
    result = run("verify", TARGET, "--baseline", "base")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: --baseline: made on {live.url}, not {live.url.replace('127.0.0.1', 'localhost')}"
    )


def test_a_baseline_that_is_neither_is_one_line(run, live, tmp_path):
    (tmp_path / "nothing").mkdir()
    result = run("verify", TARGET, "--baseline", "nothing")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --baseline nothing: ")
    assert len(result.stderr.splitlines()) == 1


def test_files_naive_and_fixed(run, tmp_path):
    folder = tmp_path / "dashboards"
    folder.mkdir()
    source = FIXTURES / "demo-project/reports/async-health.json"
    (folder / "async-health.json").write_text(naive(source.read_text()))
    result = run("verify", str(folder), "--format", "json")
    assert result.exit_code == 1
    assert sum(f["check"] == "split-lost" for f in findings(result)) == 2
    (folder / "async-health.json").write_text(source.read_text())
    assert run("check", str(folder), "--fix").exit_code in (0, 1)
    assert run("verify", str(folder)).exit_code == 0


@pytest.mark.parametrize("format_", ["text", "markdown", "json", "sarif", "github"])
def test_every_format(run, live, format_):
    naive_migration(live)
    result = run("verify", TARGET, "--format", format_)
    assert result.exit_code == 1
    if format_ in ("json", "sarif"):
        document = json.loads(result.stdout)
        if format_ == "sarif":
            assert document["version"] == "2.1.0"
            assert {r["ruleId"] for r in document["runs"][0]["results"]} >= {"split-lost"}
    if format_ == "github":  # at most 10 per level, the last notice saying what is left out
        *annotations, last = result.stdout.splitlines()
        assert all(line.startswith(("::error ", "::warning ")) for line in annotations)
        assert last.startswith(("::error ", "::warning ", "::notice title=wbmigrate::"))
        assert len(annotations) <= 20
    if format_ == "markdown":
        assert result.stdout.startswith(f"## wbmigrate verify {TARGET}")


@pytest.mark.parametrize("format_", ["text", "sarif"])
def test_exit_zero_reports_what_fails_and_exits_0(run, live, format_):
    """As `check --exit-zero`: the same report, exit 0; a usage or connection error is still 2."""
    failing = run("verify", TARGET, "--format", format_)
    zero = run("verify", TARGET, "--format", format_, "--exit-zero")
    assert (failing.exit_code, zero.exit_code) == (1, 0)
    assert zero.stdout == failing.stdout
    assert run("verify", "team/nope", "--exit-zero").exit_code == 2


def test_an_unknown_project_exits_2(run, live):
    result = run("verify", "team/nope")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "Error: project team/nope not found"


@pytest.fixture
def prime_rl(monkeypatch):
    """The stand-in for a post-#4253 prime_rl (fixtures/prime-rl-fake) on sys.path."""
    import sys

    def forget():
        for name in [n for n in sys.modules if n == "prime_rl" or n.startswith("prime_rl.")]:
            del sys.modules[name]  # not monkeypatch.delitem: that puts them back

    forget()
    monkeypatch.syspath_prepend(str(FIXTURES / "prime-rl-fake"))
    yield
    forget()


def test_configs_are_validated_with_prime_rls_schema_when_it_is_there(run, prime_rl, tmp_path):
    config = tmp_path / "orchestrator.toml"
    config.write_text("max_off_policy_steps = 4\n")
    result = run("verify", str(tmp_path), "--format", "json")
    assert result.exit_code == 1
    found = {(f["check"], f["message"]) for f in findings(result)}
    assert found == {
        ("old-name-left", "max_off_policy_steps -> max_staleness (config key)"),
        (
            "config-invalid",
            "max_off_policy_steps: unknown to prime-rl's OrchestratorConfig "
            "(renamed max_staleness in 2026.10.25)",
        ),
    }
    config.write_text("max_staleness = 4\n")
    assert run("verify", str(tmp_path)).exit_code == 0


def test_without_prime_rl_configs_are_checked_by_key_and_it_says_so(run, tmp_path):
    (tmp_path / "orchestrator.toml").write_text("max_staleness = 4\n")
    result = run("verify", str(tmp_path))
    assert result.exit_code == 0
    assert "prime_rl is not importable here" in result.stderr
