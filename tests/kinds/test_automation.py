"""Migrated triggers stay valid for the real wandb SDK, which must parse every one of them."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES
from wandb.automations import Automation
from wandb.automations._generated import TriggerFields

CASES = sorted((FIXTURES / "cases/automation").glob("*/after.json"))


def parse(trigger):
    return Automation.model_validate(TriggerFields.model_validate(trigger))


@pytest.mark.parametrize("after", CASES, ids=lambda p: p.parent.name)
def test_sdk_parses_the_migrated_trigger(after):
    trigger = json.loads(after.read_text())
    automation = parse(trigger)
    assert automation.enabled == trigger["enabled"]
    filter_text = repr(automation.event.filter)
    assert "off_policy/" not in filter_text.replace("dispatcher/off_policy", "")


def test_threshold_alert_watches_the_new_key():
    trigger = json.loads((FIXTURES / "cases/automation/threshold/after.json").read_text())
    metric = parse(trigger).event.filter.metric
    assert "staleness/rollout/mean" in repr(metric)


def test_run_filter_keeps_its_exact_string():
    before = json.loads((FIXTURES / "cases/automation/threshold/before.json").read_text())
    after = json.loads((FIXTURES / "cases/automation/threshold/after.json").read_text())
    run_filter = json.loads(before["event"]["filter"])["run_filter"]
    assert json.loads(after["event"]["filter"])["run_filter"] == run_filter
    assert after["event"]["filter"] == before["event"]["filter"].replace(
        "off_policy/mean", "staleness/rollout/mean"
    )


BEFORE = sorted((FIXTURES / "cases/automation").glob("*/before.json"))


@pytest.mark.parametrize("before", BEFORE, ids=lambda p: p.parent.name)
def test_what_is_planned_for_review_is_what_wandb_cannot_write_back(before):
    """An alert is changed only when wandb's own `update_automation` could write it back."""
    from wandb.automations._inputs import prepare_to_update

    from wbmigrate.kinds.automation import unwritable

    trigger = json.loads(before.read_text())
    if unwritable(trigger) is None:
        assert prepare_to_update(parse(trigger)).id == trigger["id"]
    else:
        with pytest.raises(ValueError, match="cannot be assigned to automations"):
            prepare_to_update(parse(trigger))
