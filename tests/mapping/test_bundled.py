"""The bundled prime-rl mapping, reviewed over prime-rl's whole history: what review decided about
it is pinned here, so a change to it is a decision too."""

from __future__ import annotations

from helpers import FIXTURES

from wbmigrate import find_mapping

PRIME_RL = find_mapping("prime-rl")


def test_its_warnings_are_the_reviewed_merges():
    """#680 renamed the trainer's and the orchestrator's timers and throughput into one key each:
    two runs (trainer, orchestrator) log them, so nothing is merged in one run. Users are not
    shown these warnings (tests/cli/test_cli.py)."""
    merges = sorted(
        w.message.split(" are all renamed to ")[1].split(";")[0] for w in PRIME_RL.warnings
    )
    assert merges == ["'perf/throughput'", "'time/save_ckpt'", "'time/step'"]
    assert {w.code for w in PRIME_RL.warnings} == {"many-to-one"}


def test_no_step_renames_or_removes_a_key_prime_rl_logs_at_3313():
    """A migration never renames or removes a key the target version logs: composed up to #3313
    (the last PR the reviewed history reaches before #4253), no old name is a key prime-rl's code
    logs at #3313's merge commit."""
    listed = (FIXTURES / "prime-rl/logged-keys-2441fd514.txt").read_text().splitlines()
    logged = {line for line in listed if line and not line.startswith("#")}
    last = [s.version for s in PRIME_RL.steps if str(s.date) <= "2026-08-21"][-1]
    migration = PRIME_RL.migration(to=last)
    assert len(logged) > 50
    assert sorted(logged & set(migration.metrics)) == []


def test_the_4253_step_resolves_as_before():
    """The whole history composes into #4253's renames unchanged: every off_policy/* key and the
    max_off_policy_steps config key end where #4253 put them."""
    migration = PRIME_RL.migration()
    assert {
        old: None if fate.removed else fate.new  # a removed key's `new` is its equivalent
        for old, fate in migration.metrics.items()
        if old.startswith("off_policy/")
    } == {
        "off_policy/mean": "staleness/rollout/mean",
        "off_policy/max": "staleness/rollout/max",
        "off_policy/in_flight/mean": "staleness/rollout/in_flight/mean",
        "off_policy/in_flight/max": "staleness/rollout/in_flight/max",
        "off_policy/in_queue/mean": "staleness/rollout/in_queue/mean",
        "off_policy/in_queue/max": "staleness/rollout/in_queue/max",
        "off_policy/token/mean": "staleness/token/mean",
        "off_policy/token/masked": "staleness/token/masked",
        "off_policy/dropped": "staleness/rollout/dropped",
        "off_policy/token/max": None,
    }
    renamed = {r.old: r.new for r in migration.config}
    assert renamed["orchestrator.max_off_policy_steps"] == "orchestrator.max_staleness"


def test_keys_logged_again_are_left_alone():
    """progress/epoch (removed by #615, logged again by the SFT trainer from #708), val/loss
    (removed by #1709, again from #1850) and rl.toml's `clean` (renamed by #1872, named `clean`
    again by #3268) are live at the end of the history: nothing renames them."""
    migration = PRIME_RL.migration()
    for key in ("progress/epoch", "val/loss"):
        assert migration.fate(key) is None, key
    assert "clean" not in {rename.old for rename in migration.config}
    assert {r.old: r.new for r in migration.config}["clean_output_dir"] == "clean"
