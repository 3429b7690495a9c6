"""The mapping library: resolve whole names, compose steps, choose a range, stay frozen."""

from __future__ import annotations

import dataclasses

import pytest
from helpers import FIXTURES

from wbmigrate.mapping import Action, MappingError, UnknownVersionError
from wbmigrate.mapping.load import find_mapping, load_mapping
from wbmigrate.mapping.parse import parse_mapping

PRIME_RL_RENAMES = {
    "dispatcher/inflight_train": "dispatcher/inflight/train",  # #3285
    "dispatcher/inflight_eval": "dispatcher/inflight/eval",
    "off_policy/mean": "staleness/rollout/mean",
    "off_policy/max": "staleness/rollout/max",
    "off_policy/in_flight/mean": "staleness/rollout/in_flight/mean",
    "off_policy/in_flight/max": "staleness/rollout/in_flight/max",
    "off_policy/in_queue/mean": "staleness/rollout/in_queue/mean",
    "off_policy/in_queue/max": "staleness/rollout/in_queue/max",
    "off_policy/token/mean": "staleness/token/mean",
    "off_policy/token/masked": "staleness/token/masked",
    "off_policy/dropped": "staleness/rollout/dropped",
}
PRIME_RL_REMOVED = {
    "dispatcher/groups_in_flight": None,  # #3285
    "off_policy/token/max": "staleness/rollout/max",
    "dispatcher/off_policy/max": None,
    "dispatcher/off_policy/mean": None,
    "dispatcher/off_policy_level/max": None,
    "dispatcher/off_policy_level/mean": None,
    "dispatcher/off_policy_level_max": None,
    "dispatcher/off_policy_level_mean": None,
}


@pytest.fixture(scope="module")
def prime_rl():
    return find_mapping("prime-rl")


@pytest.fixture(scope="module")
def prime_rl_2026():
    """The 3-step bundled mapping of 2026 (#3285 .. #4253), kept as a fixture."""
    return load_mapping(FIXTURES / "mappings/valid/prime-rl-2026.yaml")


@pytest.fixture(scope="module")
def chains():
    return load_mapping(FIXTURES / "mappings/valid/chains.yaml")


def test_prime_rl_steps(prime_rl):
    """The whole history: July 2025 (#529) to #4253, oldest first."""
    assert prime_rl.id == "prime-rl"
    assert len(prime_rl.versions) == 94
    assert prime_rl.versions[:2] == ("2025.07.07", "2025.07.07-531")
    assert prime_rl.versions[-3:] == ("2026.08.21", "2026.08.21-3297", "2026.10.25")
    pulls = [s.pull for s in prime_rl.steps]
    assert (pulls[0], pulls[-3:]) == ("#529", ["#3313", "#3297", "#4253"])
    assert pulls.index("#3285") < pulls.index("#3313") < pulls.index("#4253")
    dates = [s.date for s in prime_rl.steps]
    assert dates == sorted(dates)
    # three reviewed merges: prime-rl logs one series where it logged two
    assert [(w.code, w.message.split(" are all renamed to ")[1]) for w in prime_rl.warnings] == [
        ("many-to-one", "'time/step'; after migration their series cannot be told apart"),
        ("many-to-one", "'time/save_ckpt'; after migration their series cannot be told apart"),
        ("many-to-one", "'perf/throughput'; after migration their series cannot be told apart"),
    ]


def test_prime_rl_2026_steps(prime_rl_2026):
    assert prime_rl_2026.id == "prime-rl-2026"
    assert prime_rl_2026.versions == ("2026.08.19", "2026.08.21", "2026.10.25")
    assert [s.pull for s in prime_rl_2026.steps] == ["#3285", "#3313", "#4253"]
    assert prime_rl_2026.warnings == ()


@pytest.mark.parametrize(("old", "new"), PRIME_RL_RENAMES.items())
def test_prime_rl_renames(prime_rl, old, new):
    resolution = prime_rl.resolve(old)
    assert (resolution.action, resolution.new) == (Action.RENAMED, new)


@pytest.mark.parametrize(("old", "equivalent"), PRIME_RL_REMOVED.items())
def test_prime_rl_removals(prime_rl, old, equivalent):
    resolution = prime_rl.resolve(old)
    assert resolution.action is Action.REMOVED
    assert resolution.equivalent == equivalent
    assert resolution.reason


def test_prime_rl_2026_covers_exactly_the_known_names(prime_rl_2026):
    assert prime_rl_2026.migration().old_names == set(PRIME_RL_RENAMES) | set(PRIME_RL_REMOVED)


def test_prime_rl_covers_the_known_names_among_its_602(prime_rl):
    old_names = prime_rl.migration().old_names
    assert set(PRIME_RL_RENAMES) | set(PRIME_RL_REMOVED) <= old_names
    assert len(old_names) == 602


@pytest.mark.parametrize("which", ["prime_rl", "prime_rl_2026"])
def test_prime_rl_config_key(which, request):
    config = request.getfixturevalue(which).migration().config
    (rename,) = [c for c in config if "max_off_policy_steps" in c.old + c.new]
    if which == "prime_rl_2026":
        assert config == (rename,)
    assert (rename.old, rename.new) == (
        "orchestrator.max_off_policy_steps",
        "orchestrator.max_staleness",
    )
    assert dict(rename.toml) == {
        "orchestrator.max_off_policy_steps": "orchestrator.max_staleness",
        "max_off_policy_steps": "max_staleness",
    }
    assert dict(rename.cli) == {
        "--orchestrator.max-off-policy-steps": "--orchestrator.max-staleness",
        "--max-off-policy-steps": "--max-staleness",
    }


@pytest.mark.parametrize(
    "name",
    [
        "eval/off_policy/mean",  # a prefix
        "off_policy/mean_smoothed",  # a suffix
        "my_off_policy/max",  # a longer segment
        "off_policy",  # a parent
        "off_policy/mean/",  # a trailing separator
        "Off_Policy/Mean",  # case matters in W&B keys
        "staleness/rollout/mean",  # already new
        "",
    ],
)
def test_whole_names_only(prime_rl, name):
    assert prime_rl.resolve(name).action is Action.UNTOUCHED


def test_chain_of_renames_collapses(chains):
    a = chains.resolve("a")
    assert (a.action, a.new, a.chain, a.versions) == (
        Action.RENAMED,
        "d",
        ("a", "b", "d"),
        ("1.0", "2.0"),
    )
    assert chains.resolve("b").new == "d"  # a dashboard made between steps 1 and 2


def test_rename_then_removal_is_a_removal(chains):
    resolution = chains.resolve("c/x")
    assert resolution.action is Action.REMOVED
    assert resolution.equivalent == "e"
    assert resolution.chain == ("c/x", "c/y")


def test_equivalent_follows_later_renames(chains):
    assert chains.resolve("f").equivalent == "h"


def test_config_chain_collapses(chains):
    first, second = chains.migration().config
    assert (first.old, first.new) == ("trainer.lr", "trainer.step_size")
    assert dict(first.cli) == {"--trainer.lr": "--trainer.step-size"}
    assert dict(first.toml) == {"trainer.lr": "trainer.step_size"}
    assert (second.old, second.new) == ("trainer.learning_rate", "trainer.step_size")


def test_to_selects_a_step(chains):
    migration = chains.migration(to="1.0")
    assert migration.resolve("a").new == "b"
    assert migration.resolve("c/x").new == "c/y"
    assert migration.resolve("f").action is Action.UNTOUCHED


def test_from_starts_later(chains):
    migration = chains.migration(start="2.0")
    assert migration.resolve("a").action is Action.UNTOUCHED
    assert migration.resolve("b").new == "d"
    assert [s.version for s in migration.steps] == ["2.0", "3.0"]


def test_prime_rl_to_before_4253(prime_rl):
    migration = prime_rl.migration(to="2026.08.21")
    assert migration.resolve("dispatcher/off_policy_level_max").new == "dispatcher/off_policy/max"
    assert migration.resolve("off_policy/mean").action is Action.UNTOUCHED


@pytest.mark.parametrize(
    ("start", "to", "message"),
    [
        (None, "9.9", "has no version '9.9'"),
        ("3.0", "1.0", "--from 3.0 comes after --to 1.0"),
    ],
)
def test_bad_range(chains, start, to, message):
    with pytest.raises(UnknownVersionError, match=message):
        chains.migration(start, to)


def test_everything_is_frozen(prime_rl):
    with pytest.raises(dataclasses.FrozenInstanceError):
        prime_rl.id = "x"
    with pytest.raises(TypeError):
        prime_rl.steps[-1].renamed["off_policy/mean"] = "x"
    with pytest.raises(TypeError):
        prime_rl.migration().metrics["x"] = None


def test_new_names(prime_rl):
    new = prime_rl.migration().new_names
    assert {"staleness/rollout/max", "staleness/token/masked"} <= new
    assert not new & prime_rl.migration().old_names


def test_a_name_renamed_and_removed_in_a_later_step_is_reported_not_a_crash():
    """Validation composes every step, broken ones too: a name both renamed and removed
    by one step, after a step that renamed into it, is a duplicate, not a KeyError."""
    steps = [
        "renamed: {a/x: b/x}",
        "renamed: {b/x: c/x}\n      removed: {b/x: {reason: gone}}",
        "renamed: {d/x: e/x}",
    ]
    with pytest.raises(MappingError) as caught:
        parse_mapping(_demo(steps), "m.yaml")
    assert [(p.code, p.line) for p in caught.value.problems] == [("duplicate-old-key", 18)]


@pytest.mark.parametrize(
    ("later", "equivalent"),
    [("{b/x: {reason: gone too, equivalent: c/x}}", "c/x"), ("{b/x: {reason: gone too}}", None)],
    ids=["to-its-own-equivalent", "to-none"],
)
def test_an_equivalent_removed_later_is_followed(later, equivalent):
    """A removed name's equivalent, removed by a later step, is never offered: prime-rl
    removed metrics/filter/gibberish (use filter/gibberish_rate), renamed that on, then #3261
    removed it; 'use train/agg/all/agent/filters/gibberish/mean' named a dead metric."""
    steps = ["removed: {a/x: {reason: gone, equivalent: b/x}}", f"removed: {later}"]
    migration = parse_mapping(_demo(steps), "m.yaml").migration()
    resolution = migration.resolve("a/x")
    assert (resolution.action, resolution.equivalent) == (Action.REMOVED, equivalent)
    assert (resolution.reason, resolution.versions) == ("gone", ("1", "2"))
    assert not migration.new_names & migration.old_names


CONFIG_STEPS = """\
format: 1
id: demo
title: Demo
sources: [https://example.com/demo]
steps:
  - version: "1"
    date: 2026-01-01
    source: https://example.com/demo/pull/1
    annotation: Boundary.
    config:
      renamed:
        - old: monitor.wandb
          new: wandb
          toml: {monitor.wandb: wandb, trainer.monitor.wandb: trainer.wandb}
          cli: {"--trainer.monitor.wandb": "--trainer.wandb"}
  - version: "2"
    date: 2026-01-02
    source: https://example.com/demo/pull/2
    annotation: Boundary.
    config:
      renamed:
        - old: trainer.wandb
          new: trainer.monitors.wandb
          toml: {trainer.wandb: trainer.monitors.wandb}
          cli: {"--trainer.wandb": "--trainer.monitors.wandb"}
        - old: wandb
          new: monitors.wandb
          toml: {wandb: monitors.wandb}
"""


def test_a_config_form_follows_the_later_rename_that_moves_it():
    """prime-rl moved monitor.wandb to wandb (rl.toml's trainer.monitor.wandb to trainer.wandb),
    then wandb and trainer.wandb each to monitors.wandb under a rename of its own: the form
    followed only the rename of `wandb`, which lacks it, so `check --fix` wrote
    --trainer.wandb and a second `check` renamed that again."""
    first = parse_mapping(CONFIG_STEPS, "m.yaml").migration().config[0]
    assert (first.old, first.new) == ("monitor.wandb", "monitors.wandb")
    assert dict(first.toml) == {
        "monitor.wandb": "monitors.wandb",
        "trainer.monitor.wandb": "trainer.monitors.wandb",
    }
    assert dict(first.cli) == {"--trainer.monitor.wandb": "--trainer.monitors.wandb"}


def _demo(metrics: list[str]) -> str:
    """A mapping of one step per entry of `metrics` (each a step's `metrics:` body)."""
    text = "format: 1\nid: demo\ntitle: Demo\nsources: [https://example.com/demo]\nsteps:\n"
    for n, body in enumerate(metrics, start=1):
        text += (
            f'  - version: "{n}"\n    date: 2026-01-0{n}\n'
            f"    source: https://example.com/demo/pull/{n}\n    annotation: Boundary.\n"
            f"    metrics:\n      {body}\n"
        )
    return text
