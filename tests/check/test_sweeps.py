"""W&B sweep configs: the metric a sweep optimises, and the config keys it sweeps."""

from __future__ import annotations

import pytest
from strategies import MIGRATION

from wbmigrate.check.model import Rule
from wbmigrate.check.specs import check_sweep
from wbmigrate.check.targets import targets_for
from wbmigrate.edit.edits import RenameKey, Set
from wbmigrate.engine.model import Mode, Options


def sweep(metric: str, **parameters: object) -> dict[str, object]:
    return {
        "method": "bayes",
        "metric": {"name": metric, "goal": "minimize"},
        "parameters": parameters,
    }


@pytest.mark.parametrize("mode", [Mode.DUAL, Mode.REPLACE])
def test_the_metric_moves_to_the_new_key_in_both_modes(mode):
    targets = targets_for(MIGRATION, Options(mode=mode))
    (found,) = check_sweep(sweep("off_policy/mean"), ("s",), targets)
    assert found.rule is Rule.RENAMED_METRIC
    assert found.edits == [Set(("s", "metric", "name"), "staleness/rollout/mean")]
    assert "runs it already made keep the old key" in found.message


def test_a_removed_metric_moves_to_its_equivalent_or_is_left_for_review():
    targets = targets_for(MIGRATION, Options())
    (equivalent,) = check_sweep(sweep("off_policy/token/max"), (), targets)
    assert equivalent.rule is Rule.REMOVED_METRIC
    assert equivalent.edits == [Set(("metric", "name"), "staleness/rollout/max")]
    (gone,) = check_sweep(sweep("dispatcher/off_policy/max"), (), targets)
    assert gone.rule is Rule.NEEDS_REVIEW
    assert gone.edits == []


def test_swept_config_keys_are_renamed_in_every_spelling():
    nested = {"parameters": {"max_off_policy_steps": {"values": [1]}, "batch_size": {"value": 2}}}
    config = sweep(
        "loss",
        max_off_policy_steps={"values": [8]},
        **{"orchestrator.max_off_policy_steps": {"values": [8]}},
        orchestrator=nested,
        max_off_policy_steps_hint={"value": 1},
    )
    found = check_sweep(config, (), targets_for(MIGRATION, Options()))
    assert [f.edits for f in found] == [
        [RenameKey(("parameters", "max_off_policy_steps"), "max_staleness")],
        [
            RenameKey(
                ("parameters", "orchestrator.max_off_policy_steps"), "orchestrator.max_staleness"
            )
        ],
        [
            RenameKey(
                ("parameters", "orchestrator", "parameters", "max_off_policy_steps"),
                "max_staleness",
            )
        ],
    ]
    assert all(f.key and f.rule is Rule.RENAMED_CONFIG_KEY for f in found)


def test_a_key_whose_new_name_is_swept_too_is_not_renamed_into_it():
    config = sweep("loss", max_off_policy_steps={"value": 1}, max_staleness={"value": 1})
    (found,) = check_sweep(config, (), targets_for(MIGRATION, Options()))
    assert found.edits == []
    assert "max_staleness is set too" in found.message
