"""The test server holding an organisation: several projects and entities, runs with the keys
they logged, a project that refuses; read back through the real wandb SDK and raw GraphQL."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import requests
from helpers import FIXTURES, REPO, sdk_environment

from testserver import WandbServer, WandbState

TRIGGER = json.loads((FIXTURES / "demo-project/automations/staleness-high.json").read_text())
INTERNAL = {"_runtime", "_step", "_timestamp", "_wandb"}


@pytest.fixture
def org() -> Iterator[WandbServer]:
    """team/async-rl (three runs, a report), team/qwen3-8b (a run, a report, an alert),
    team/locked (forbidden) and other/async-rl."""
    main = WandbState()
    main.add_view("{}", display_name="Main report")
    main.add_trigger(TRIGGER)
    main.add_run("r1", "2026-11-01T10:00:00", ["loss", "eval/acc"])
    main.add_run("r2", "2026-11-02T10:00:00", ["loss"], summary_keys=["loss", "best"])
    main.add_run("r3", "2026-11-03T10:00:00", ["loss"], state="running", display_name="third")
    qwen = WandbState("team", "qwen3-8b", first_id=1001)
    qwen.add_view("{}", display_name="Qwen report")
    qwen.add_trigger({**TRIGGER, "name": "qwen-alert"})
    qwen.add_run("q1", "2026-11-01T10:00:00", ["reward"])
    locked = WandbState("team", "locked", first_id=2001, forbidden=True)
    locked.add_trigger({**TRIGGER, "name": "locked-alert"})
    other = WandbState("other", "async-rl", first_id=3001)
    with WandbServer(main, more=[qwen, locked, other]) as server:
        yield server


@pytest.fixture
def api(org: WandbServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The wandb SDK pointed at the server, with a home, config and run folder of its own."""
    for name, value in sdk_environment(tmp_path, org.url).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    import wandb

    return wandb.Api(api_key=org.api_key, overrides={"base_url": org.url})


def graphql(server: Any, query: str, **variables: Any) -> requests.Response:
    """A raw GraphQL request to `server` (anything with `url` and `api_key`)."""
    auth = base64.b64encode(f"api:{server.api_key}".encode()).decode()
    body = {"query": query, "variables": variables}
    headers = {"Authorization": f"Basic {auth}"}
    return requests.post(f"{server.url}/graphql", json=body, headers=headers, timeout=30)


def test_the_sdk_lists_every_project_of_an_entity(api: Any) -> None:
    team = list(api.projects("team", per_page=2))  # two pages
    assert [(p.entity, p.name) for p in team] == [
        ("team", "async-rl"),
        ("team", "qwen3-8b"),
        ("team", "locked"),
    ]
    assert len({p.id for p in team}) == 3
    assert [p.name for p in api.projects("other")] == ["async-rl"]
    assert list(api.projects("nobody")) == []


def test_runs_newest_first_with_their_summary_and_history_keys(api: Any) -> None:
    runs = api.runs("team/async-rl", order="-created_at", per_page=2)  # two pages
    assert len(runs) == 3
    assert [(r.id, r.name, r.state) for r in runs] == [
        ("r3", "third", "running"),
        ("r2", "r2", "finished"),
        ("r1", "r1", "finished"),
    ]
    r2, r1 = runs[1], runs[2]
    assert set(r2.summary.keys()) == {"loss", "best"} | INTERNAL
    assert set(r1.summary.keys()) == {"loss", "eval/acc"} | INTERNAL
    # historyKeys comes with the full fragment, which reading the summary loaded
    assert set(r1.history_keys["keys"]) == {"loss", "eval/acc", "_step", "_runtime", "_timestamp"}
    assert r1.history_keys["keys"]["loss"] == {"typeCounts": [{"type": "number", "count": 10}]}
    assert r1.history_keys["lastStep"] == r1.lastHistoryStep == 9


def test_runs_oldest_first_by_default_as_the_sdk_asks(api: Any) -> None:
    assert [r.id for r in api.runs("team/async-rl")] == ["r1", "r2", "r3"]
    assert [r.id for r in api.runs("team/async-rl", order="created_at")] == ["r1", "r2", "r3"]


def test_filters_pick_runs(api: Any) -> None:
    chosen = api.runs("team/async-rl", filters={"name": {"$in": ["r1", "r3"]}})
    assert [r.id for r in chosen] == ["r1", "r3"]
    assert len(chosen) == 2
    assert [r.id for r in api.runs("team/async-rl", filters={"state": "running"})] == ["r3"]
    either = {"$or": [{"name": "r2"}, {"display_name": "third"}]}
    assert [r.id for r in api.runs("team/async-rl", filters=either)] == ["r2", "r3"]


def test_a_filter_the_server_does_not_know_is_an_error_not_ignored(api: Any) -> None:
    from wandb.sdk.lib.service.service_connection import WandbApiFailedError

    with pytest.raises(WandbApiFailedError, match="unsupported run filter field"):
        list(api.runs("team/async-rl", filters={"config.lr": 1}))


def test_one_run_by_its_path_in_another_project(api: Any) -> None:
    run = api.run("team/qwen3-8b/q1")
    assert set(run.history_keys["keys"]) == {"reward", "_step", "_runtime", "_timestamp"}
    assert run.summary_metrics["reward"] == 0.5
    assert [r.id for r in api.runs("team/qwen3-8b")] == ["q1"]
    assert list(api.runs("other/async-rl")) == []


def test_a_forbidden_project_refuses_and_the_others_still_answer(
    api: Any, org: WandbServer
) -> None:
    from wandb.errors import CommError
    from wandb.sdk.lib.service.service_connection import WandbApiFailedError

    with pytest.raises(WandbApiFailedError, match="permission denied") as refused:
        list(api.runs("team/locked"))
    assert refused.value.response is not None
    assert refused.value.response.http_status == 403
    with pytest.raises(CommError, match="permission denied"):
        api.run("team/locked/x")
    assert [r.id for r in api.runs("team/qwen3-8b")] == ["q1"]
    assert "locked" in [p.name for p in api.projects("team")]
    answer = graphql(org, 'query P { project(name: "locked", entityName: "team") { id } }')
    assert answer.status_code == 403
    assert answer.json()["errors"] == [
        {
            "message": "permission denied",
            "path": ["project"],
            "extensions": {"code": "PERMISSION_ERROR"},
        }
    ]


VIEW = "query V($id: ID!) { view(id: $id) { id displayName project { name entityName } } }"
UPSERT = """mutation U($input: UpsertViewInput!) {
  upsertView(input: $input) { inserted view { id displayName project { name } } } }"""
UPDATE = """mutation T($input: UpdateFilterTriggerInput!) {
  updateFilterTrigger(input: $input) { trigger { id name } } }"""
TRIGGERS = """query E($entity: String!) {
  entity(name: $entity) { triggers { edges { node { name } } } } }"""


def test_each_object_acts_on_its_own_project(org: WandbServer) -> None:
    main, qwen, locked = org.states[:3]
    main_view, qwen_view = next(iter(main.views)), next(iter(qwen.views))
    assert main_view == base64.b64encode(b"View:101").decode()  # the default ids, as before
    assert qwen_view == base64.b64encode(b"View:1001").decode()
    found = graphql(org, VIEW, id=qwen_view).json()["data"]["view"]
    assert found["project"] == {"name": "qwen3-8b", "entityName": "team"}
    edit = {"id": qwen_view, "displayName": "Renamed"}
    graphql(org, UPSERT, input=edit).raise_for_status()
    assert qwen.views[qwen_view]["displayName"] == "Renamed"
    assert main.views[main_view]["displayName"] == "Main report"
    new = {"entityName": "team", "projectName": "qwen3-8b", "displayName": "New", "spec": "{}"}
    made = graphql(org, UPSERT, input=new).json()["data"]["upsertView"]
    assert made["inserted"] is True
    assert made["view"]["project"] == {"name": "qwen3-8b"}
    assert made["view"]["id"] in qwen.views
    qwen_trigger = next(iter(qwen.triggers))
    graphql(org, UPDATE, input={"id": qwen_trigger, "enabled": False}).raise_for_status()
    assert qwen.triggers[qwen_trigger]["enabled"] is False
    assert all(t["enabled"] for t in main.triggers.values())
    listed = graphql(org, TRIGGERS, entity="team").json()["data"]["entity"]["triggers"]
    names = [e["node"]["name"] for e in listed["edges"]]
    assert names == ["staleness-high", "qwen-alert"]  # not the forbidden project's
    locked_trigger = next(iter(locked.triggers))
    refused = graphql(org, UPDATE, input={"id": locked_trigger, "enabled": False})
    assert refused.status_code == 403
    assert locked.triggers[locked_trigger]["enabled"] is True


NAMED = """query N($entity: String!, $filters: JSONString) {
  entity(name: $entity) { triggers(filters: $filters) { edges { node { name } } } } }"""


def test_the_automations_of_an_entity_are_filtered_by_name_as_w_and_b_does(org: WandbServer):
    def names(filters: str) -> list[str]:
        listed = graphql(org, NAMED, entity="team", filters=filters).json()["data"]["entity"]
        return [e["node"]["name"] for e in listed["triggers"]["edges"]]

    assert names('{"name": "qwen-alert"}') == ["qwen-alert"]
    assert names('{"name": "nobody"}') == []
    refused = graphql(org, NAMED, entity="team", filters='{"description": "x"}').json()
    assert "unsupported trigger filter" in refused["errors"][0]["message"]


def test_a_project_is_served_once_with_ids_of_its_own(org: WandbServer) -> None:
    with pytest.raises(ValueError, match="served already"):
        org.add_project(WandbState("team", "qwen3-8b", first_id=9001))
    with pytest.raises(ValueError, match="first_id=1001"):
        org.add_project(WandbState("team", "new"))
    assert org.add_project(WandbState("team", "new", first_id=4001)) in org.states


def test_a_query_text_parsed_once_answers_each_time_as_graphql_core_does(org: WandbServer) -> None:
    """The server keeps each query text parsed and validated, as production servers do: the
    same text with other variables, a syntax error and an invalid field answer as ever."""
    query = "query P($entity: String) { models(entityName: $entity) { edges { node { name } } } }"
    names = {
        entity: [
            e["node"]["name"]
            for e in graphql(org, query, entity=entity).json()["data"]["models"]["edges"]
        ]
        for entity in ("team", "other", "team")
    }
    assert names == {"team": ["async-rl", "qwen3-8b", "locked"], "other": ["async-rl"]}
    for _ in range(2):
        broken = graphql(org, "query {").json()
        assert broken["data"] is None
        assert broken["errors"][0]["message"].startswith("Syntax Error")
        unknown = graphql(org, "query { nosuchfield }").json()
        assert unknown["data"] is None
        assert "Cannot query field 'nosuchfield'" in unknown["errors"][0]["message"]


PROJECTS = """query M($entity: String) { models(entityName: $entity) { edges { node { name
  runs { edges { node { name summaryMetrics historyKeys } } } } } } }"""


def test_a_state_file_describes_several_projects(tmp_path: Path) -> None:
    run = {"name": "a1", "created_at": "2026-11-01T10:00:00", "history_keys": ["loss"]}
    state = {
        "runs": [run],
        "projects": [{"project": "qwen3-8b", "runs": [{**run, "name": "b1"}]}],
    }
    (tmp_path / "state.json").write_text(json.dumps(state))
    command = [sys.executable, "-m", "testserver", str(tmp_path / "state.json")]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=REPO) as process:
        try:
            assert process.stdout is not None
            url, api_key = process.stdout.readline().split()
            server = SimpleNamespace(url=url, api_key=api_key)
            answer = graphql(server, PROJECTS, entity="team").json()["data"]["models"]
        finally:
            process.terminate()
    projects = {e["node"]["name"]: e["node"]["runs"]["edges"] for e in answer["edges"]}
    assert list(projects) == ["async-rl", "qwen3-8b"]
    b1 = projects["qwen3-8b"][0]["node"]
    assert b1["name"] == "b1"
    assert "loss" in json.loads(b1["summaryMetrics"])
    assert b1["historyKeys"]["lastStep"] == 9
