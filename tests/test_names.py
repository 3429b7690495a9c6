"""Whole names: the anchors that let the walk and `check` skip text."""

from __future__ import annotations

import pytest
from helpers import FIXTURES

from wbmigrate import find_mapping
from wbmigrate.check.targets import Targets
from wbmigrate.engine.model import Options
from wbmigrate.names import config_column, config_key

TARGETS = Targets(find_mapping("prime-rl").migration(), Options())


@pytest.mark.parametrize(
    ("mapping", "anchors"),
    [
        (FIXTURES / "mappings/valid/prime-rl-2026.yaml", ("policy", "dispatcher")),
        ("prime-rl", 62),  # the whole history: 602 metric names, 115 config renames
    ],
    ids=["prime-rl-2026", "prime-rl"],
)
def test_anchors_cover_every_name_with_few_substrings(mapping, anchors):
    targets = Targets(find_mapping(mapping).migration(), Options())
    assert targets.anchors == anchors or len(targets.anchors) == anchors
    for name in [*targets.migration.old_names, *targets.spellings]:
        assert any(anchor in name for anchor in targets.anchors)
    # a config form of one word (`seed`, `--wandb`) is no spelling: it is looked for only where
    # a config file's structure or a command line says it is that key, never as an anchor
    for name in [*targets.flags, *targets.config_keys]:
        assert targets.may_contain(name), name


@pytest.mark.parametrize(
    ("value", "prefix", "name", "renamed"),
    [
        ("config:orchestrator.value.max_off_policy_steps", "config:",
         "orchestrator.max_off_policy_steps", "config:orchestrator.value.max_staleness"),
        ("config:orchestrator.max_off_policy_steps.value", "config:",
         "orchestrator.max_off_policy_steps", "config:orchestrator.max_staleness.value"),
        ("config:lr.value", "config:", "lr", "config:trainer.value.lr"),
        ("orchestrator.max_off_policy_steps", "", "orchestrator.max_off_policy_steps",
         "orchestrator.max_staleness"),
    ],
    ids=["nested-value-after-first-part", "flat-value-at-end", "one-part", "filter-without-value"],
)  # fmt: skip
def test_a_config_key_keeps_w_and_b_s_value_where_it_was(value, prefix, name, renamed):
    found = config_key(value, prefix)
    assert found is not None
    assert found.name == name
    new = {"orchestrator.max_off_policy_steps": "orchestrator.max_staleness", "lr": "trainer.lr"}
    assert found.with_name(new[name]) == renamed


@pytest.mark.parametrize("value", ["summary:lr", "config:", "", None, 3])
def test_what_is_no_config_column(value):
    assert config_column(value) is None
