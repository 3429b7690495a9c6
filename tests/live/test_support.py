"""What a server supports: its features, asked once as wandb asks them, gate what wbmigrate
asks for; a part only wbmigrate relies on that the server refuses is asked no more, said once
in one line, and the listing goes on without it."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES, TARGET, writes

from wbmigrate.live.shapes import GraphQLError, ShapeError
from wbmigrate.live.support import Support

NOOP = {"__typename": "NoOpTriggeredAction", "noOp": True}


def notes(result):
    return [line for line in result.stderr.splitlines() if line.startswith("Note: ")]


def operations(live):
    return [r.operation for r in live.requests]


def test_a_server_without_parent_ids_still_has_its_drafts_migrated(run, live):
    live.refuse("View.parentId")
    draft = next(i for i, v in live.state.views.items() if v["type"] == "runs/draft")
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0, result.output
    assert 'applied    report "Async health" (draft)' in result.stdout
    (note,) = notes(result)
    assert "W&B refused parentId" in note
    assert "drafts are saved without it" in note
    saves = [r.variables["input"] for r in writes(live) if "upsertView" in r.body]
    assert all("parentId" not in sent for sent in saves)
    assert live.state.views[draft]["parentId"] is not None  # W&B keeps the draft's report


def test_a_server_that_refuses_the_draft_listing_lists_none_and_says_so(run, live):
    live.refuse("runs/draft")
    result = run("plan", TARGET, "--detailed-exitcode")
    assert result.exit_code == 2, result.output  # changes, and no error
    assert "Found 3 reports (0 drafts)" in result.stderr
    (note,) = notes(result)
    assert "W&B refused runs/draft" in note
    assert "no drafts are listed" in note


def test_without_the_entity_feature_automations_are_read_per_project(run, live):
    live.features.clear()  # as a server before 0.83 answers
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0, result.output
    assert "Summary: 10 applied." in result.stdout
    assert "entity(" not in "".join(r.body for r in live.requests)
    (note,) = notes(result)
    assert "QUERY_AUTOMATIONS_ON_ENTITY is off" in note
    assert "per project" in note
    assert operations(live).count("WbmigrateServerFeatures") == 1


@pytest.mark.parametrize("refused", ["Entity.triggers", "ServerInfo.features"])
def test_a_server_refusing_entity_triggers_or_features_is_read_per_project(run, live, refused):
    live.refuse(refused)
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0, result.output
    assert "Summary: 10 applied." in result.stdout
    (note,) = notes(result)
    assert "per project" in note


@pytest.mark.parametrize(
    ("refused", "fragment"),
    [
        ("NoOpTriggeredAction", "NoOpActionFields"),
        ("QueueJobTriggeredAction", "QueueJobActionFields"),
    ],
)
def test_an_action_type_the_server_lacks_is_asked_no_more(run, live, refused, fragment):
    live.refuse(refused)
    result = run("plan", TARGET)
    assert result.exit_code == 0, result.output
    assert "6 automations" in result.stderr
    (note,) = notes(result)
    assert f"W&B refused {fragment}" in note
    listings = [r.body for r in live.requests if r.operation == "WbmigrateTriggers"]
    assert fragment in listings[0]
    assert fragment not in listings[-1]


def test_gated_fragments_are_asked_only_when_the_feature_says_so(run, live):
    trigger = json.loads((FIXTURES / "demo-project/automations/staleness-high.json").read_text())
    live.state.add_trigger({**trigger, "name": "no-op", "action": NOOP})
    assert run("plan", TARGET).exit_code == 0
    (listing,) = [r.body for r in live.requests if r.operation == "WbmigrateTriggers"]
    assert "NoOpActionFields" in listing  # ungated (servers from 0.67), as in wandb
    assert "AriaActionFields" not in listing
    assert "EntityScopeFields" not in listing
    live.features |= {"AUTOMATION_ACTION_ARIA": True, "AUTOMATION_SCOPE_ENTITY": True}
    live.requests.clear()
    assert run("plan", TARGET).exit_code == 0
    (listing,) = [r.body for r in live.requests if r.operation == "WbmigrateTriggers"]
    assert "AriaActionFields" in listing
    assert "EntityScopeFields" in listing


def test_a_refusal_is_said_once_however_often_it_is_met(run, live):
    live.refuse("View.parentId")
    result = run("apply", TARGET, "--yes", "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert len(notes(result)) == 1


@pytest.mark.parametrize(
    ("message", "named"),
    [
        ("Cannot query field 'parentId' on type 'View'.", "parentId"),
        ('Cannot query field "triggers" on type "Entity".', "Entity.triggers"),
        (
            "Unknown type 'NoOpTriggeredAction'. Did you mean 'ARIATriggeredAction' or "
            "'QueueJobTriggeredAction'?",
            "NoOpActionFields",
        ),
        ("objects of type 'TriggerScope' can never be of type 'Entity'.", "EntityScopeFields"),
        ("permission denied", None),
        ("Cannot query field 'parentIds' on type 'View'.", None),
    ],
)
def test_a_refusal_names_the_part_it_quotes(message, named):
    parts = ("parentId", "Entity.triggers", "EntityScopeFields", "QueueJobActionFields")
    parts += ("NoOpActionFields", "AriaActionFields")
    said = []
    support = Support(lambda *_: {}, said.append)
    assert support.refuse(GraphQLError(message), parts) is (named is not None)
    assert support.refused == ({named} if named else set())
    # met again (a request sent side by side): asked again, and not said again
    assert support.refuse(GraphQLError(message), parts) is (named is not None)
    assert len(said) == (1 if named else 0)
    assert named is None or not support.asks(named)


@pytest.mark.parametrize(
    "answer", [{"serverInfo": "x"}, {"serverInfo": {"features": 5}}], ids=["info", "features"]
)
def test_features_of_the_wrong_shape_are_one_line(answer):
    """They were an AttributeError or a TypeError: a traceback."""
    with pytest.raises(ShapeError, match="unexpected answer from W&B: serverInfo"):
        Support(lambda query, variables: answer).enabled("QUERY_AUTOMATIONS_ON_ENTITY")
