"""A trigger's write sends what wandb's own `update_automation` sends, for every action W&B
takes back; the others are planned for review, never written, and never fail at apply."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES, TARGET, writes

from wbmigrate.live.triggers import UnsupportedTrigger, trigger_input

BASE = json.loads((FIXTURES / "demo-project/automations/staleness-high.json").read_text())
SLACK = {"__typename": "SlackIntegration", "id": "SW50OjE=", "teamName": "t", "channelName": "#a"}
HOOK = {"__typename": "GenericWebhookIntegration", "id": "V2g6MQ==", "name": "h"}
HOOK["urlEndpoint"] = "https://example.com/hook"
ACTIONS = {
    "notification": {
        "__typename": "NotificationTriggeredAction",
        "integration": SLACK,
        "title": "T",
        "message": "M",
        "severity": "WARN",
    },
    "webhook": {
        "__typename": "GenericWebhookTriggeredAction",
        "integration": HOOK,
        "requestPayload": '{"a":1,"b":"${run_name}"}',
    },
    "no-op": {"__typename": "NoOpTriggeredAction", "noOp": True},
    "aria": {"__typename": "ARIATriggeredAction", "prompt": "why is off_policy/max high?"},
}
SCOPES = {
    "project": BASE["scope"],
    "entity": {"__typename": "Entity", "id": "RW50aXR5OjE=", "name": "team", "entityType": "team"},
}
QUEUE_JOB = {
    "__typename": "QueueJobTriggeredAction",
    "queue": {"id": "UnVuUXVldWU6MQ==", "name": "q"},
    "template": "{}",
}


def sdk_input(trigger):
    """What `wandb.Api().update_automation` sends for the trigger, as it read it."""
    from wandb.automations import Automation
    from wandb.automations._generated import TriggerFields
    from wandb.automations._inputs import prepare_to_update

    automation = Automation.model_validate(TriggerFields.model_validate(trigger))
    return prepare_to_update(automation).model_dump()


@pytest.mark.parametrize("scope", SCOPES, ids=str)
@pytest.mark.parametrize("action", ACTIONS, ids=str)
def test_the_write_is_what_wandbs_update_automation_sends(action, scope):
    trigger = {**BASE, "action": ACTIONS[action], "scope": SCOPES[scope]}
    assert trigger_input(trigger) == sdk_input(trigger)


def test_a_queue_job_is_refused_as_wandb_refuses_it():
    trigger = {**BASE, "action": QUEUE_JOB}
    with pytest.raises(ValueError, match="QUEUE_JOB actions cannot be assigned"):
        sdk_input(trigger)
    with pytest.raises(UnsupportedTrigger, match="takes no QueueJobTriggeredAction back"):
        trigger_input(trigger)


def _add(live, name, action):
    live.state.add_trigger({**BASE, "name": name, "action": action})


@pytest.mark.parametrize("action", ["no-op", "aria", "webhook"])
def test_every_action_wandb_takes_back_is_applied_then_planned_unchanged(run, live, action):
    live.features["AUTOMATION_ACTION_ARIA"] = True  # else neither wandb nor wbmigrate asks prompt
    _add(live, "added", ACTIONS[action])
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0, result.output
    stored = live.state.triggers[live.state.find("added")]
    assert stored["triggeredAction"] == ACTIONS[action]
    (sent,) = [
        r.variables["input"]
        for r in writes(live)
        if r.variables.get("input", {}).get("id") == stored["id"]
    ]
    expected = sdk_input({**BASE, "id": stored["id"], "name": "added", "action": ACTIONS[action]})
    renamed = expected["eventFilter"].replace("off_policy/max", "staleness/rollout/max")
    assert sent == {**expected, "scopeID": live.state.project_id, "eventFilter": renamed}
    assert run("plan", TARGET, "--detailed-exitcode").exit_code == 0


def test_a_queue_job_is_planned_for_review_and_never_written(run, live):
    _add(live, "queued", QUEUE_JOB)
    before = json.dumps(live.state.triggers[live.state.find("queued")], sort_keys=True)
    plan = run("plan", TARGET).stdout
    block = plan.split('automation "queued"')[1].split("\n\n")[0].splitlines()[2:]
    assert [line.split()[0] for line in block] == ["?"]  # for review, no change
    assert "is needed, but W&B's API takes no QueueJobTriggeredAction back" in block[0]
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0, result.output
    assert "failed" not in result.stdout
    assert json.dumps(live.state.triggers[live.state.find("queued")], sort_keys=True) == before


# wandb's own builders read a deprecated field of theirs while validating (wandb 0.31.0)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_automations_wandb_creates_with_each_action_come_back_migrated(
    run, live, tmp_path, monkeypatch
):
    """wandb's own builders make the automations (DoNothing among them) on the test server;
    wbmigrate migrates them; wandb reads them back, each with its action, on the new key, and
    can update them again."""
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    import wandb
    from wandb.automations import DoNothing, OnRunMetric, RunEvent, SendNotification, SendWebhook
    from wandb.automations.scopes import ProjectScope

    api = wandb.Api(api_key=live.api_key, overrides={"base_url": live.url, "entity": "team"})
    scope = ProjectScope(id=live.state.project_id, name="async-rl")
    event = OnRunMetric(scope=scope, filter=RunEvent.metric("off_policy/mean").mean(5) > 0.5)
    actions = {
        "sdk-no-op": DoNothing(),
        "sdk-slack": SendNotification(integration_id="SW50OjE=", title="t", text="m"),
        "sdk-hook": SendWebhook(integration_id="V2g6MQ==", request_payload={"m": "${run_name}"}),
    }
    for name, action in actions.items():
        api.create_automation(event >> action, name=name)
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0, result.output
    back = {a.name: a for a in api.automations(entity="team") if a.name in actions}
    assert set(back) == set(actions)
    for name, automation in back.items():
        assert automation.event.filter.metric.threshold_filter.name == "staleness/rollout/mean"
        assert automation.action.action_type == actions[name].action_type
        api.update_automation(automation, description="still writable")
    assert run("plan", TARGET, "--detailed-exitcode").exit_code == 0


@pytest.mark.parametrize(
    ("broken", "error"),
    [
        ({"enabled": None}, "W&B's answer lacks fields to copy back"),
        ({"action": {"__typename": "ARIATriggeredAction"}}, "W&B's answer lacks fields"),
        ({"action": {"__typename": "NotificationTriggeredAction"}}, "W&B gave no integration"),
        ({"action": QUEUE_JOB}, None),  # planned for review by the engine instead
    ],
)
def test_an_automation_a_write_could_not_copy_whole_is_an_error_up_front(broken, error):
    from wbmigrate.live.objects import LiveObject

    found = LiveObject.of_trigger({**BASE, **broken}, "team", "async-rl").source().error
    if error is None:
        assert found is None
    else:
        assert found.startswith(f"automation 'staleness-high': {error}")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # as above
def test_an_entity_wide_automation_wandb_creates_is_not_a_projects(
    run, live, tmp_path, monkeypatch
):
    """Read by wandb with its entity scope (the fragment its feature gates), and left out of
    the project's objects, as every automation not scoped to the project is."""
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    import wandb
    from wandb.automations import DoNothing, OnRunMetric, RunEvent
    from wandb.automations.scopes import TeamScope

    live.features["AUTOMATION_SCOPE_ENTITY"] = True
    api = wandb.Api(api_key=live.api_key, overrides={"base_url": live.url, "entity": "team"})
    scope = TeamScope(id="RW50aXR5OnRlYW0=", name="team")
    event = OnRunMetric(scope=scope, filter=RunEvent.metric("off_policy/mean").mean(5) > 0.5)
    api.create_automation(event >> DoNothing(), name="team-wide")
    (created,) = [a for a in api.automations(entity="team") if a.name == "team-wide"]
    assert created.scope.scope_type.value == "ENTITY"
    plan = run("plan", TARGET)
    assert "team-wide" not in plan.stdout
    assert "6 automations" in plan.stderr
