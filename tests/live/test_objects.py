"""Live objects: listings read ahead in threads, errors and early stops handed on."""

from __future__ import annotations

import itertools
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from helpers import until

from wbmigrate.errors import WbmigrateError
from wbmigrate.live.census import read_run_keys
from wbmigrate.live.client import Client
from wbmigrate.live.listing import _read_ahead, fetch_project
from wbmigrate.live.project import Counts, Project


def test_reading_ahead_hands_on_items_and_errors_in_order():
    stop = threading.Event()

    def items():
        yield from range(5)
        raise ValueError("page 2 failed")

    stream = _read_ahead(items(), 2, stop)
    assert [next(stream) for _ in range(5)] == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="page 2 failed"):
        next(stream)


def test_a_reader_ahead_ends_when_the_consumer_stops():
    stop = threading.Event()
    produced = []

    def items():
        for n in itertools.count():
            produced.append(n)
            yield n

    before = _readers()
    stream = _read_ahead(items(), 3, stop)
    assert next(stream) == 0
    stop.set()
    assert not _end(_readers() - before)  # its reader has stopped ...
    assert len(produced) <= 5  # ... bounded by the queue


@pytest.mark.parametrize(
    ("items", "expected"),
    [([1, 2, 3], ["answered", 1, 2, 3]), ([], ["answered"])],
    ids=["before-the-first-item", "at-the-end-of-none"],
)
def test_a_listing_tells_once_that_it_answered(items, expected):
    """The automations' listing starts from this (with the key census alongside, no more than
    four requests go out at first)."""
    seen: list = []
    stream = _read_ahead(iter(items), 2, threading.Event(), lambda: seen.append("answered"))
    for item in stream:
        seen.append(item)
    assert seen == expected


def test_a_listing_that_fails_never_tells_it_answered():
    """A project that cannot be read fails as before: its automations are never asked for."""
    seen: list = []

    def refused():
        raise ValueError("403")
        yield

    stream = _read_ahead(refused(), 2, threading.Event(), lambda: seen.append("answered"))
    with pytest.raises(ValueError, match="403"):
        next(stream)
    assert seen == []


# --- automations W&B answered without a part ----------------------------------------------------

TRIGGER = {
    "id": "T1",
    "name": "alert",
    "enabled": True,
    "scope": {"__typename": "Project", "id": "P1"},
    "event": {"eventType": "RUN_METRIC", "filter": "{}"},
    "action": {"__typename": "NotificationTriggeredAction", "integration": {"id": "I1"}},
}


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ({"action": None}, "W&B gave no action to copy back"),
        ({"scope": "x"}, "W&B gave no scope to copy back"),
        ({"event": {"eventType": "RUN_METRIC"}}, "lacks fields to copy back"),
        ({"enabled": None}, "lacks fields to copy back"),
        ({"action": {"__typename": "NotificationTriggeredAction"}}, "no integration"),
    ],
)
def test_a_trigger_that_cannot_be_copied_back_whole_is_refused(broken, message):
    from wbmigrate.live.triggers import UnsupportedTrigger, trigger_input

    assert trigger_input(TRIGGER)["scopeID"] == "P1"
    with pytest.raises(UnsupportedTrigger, match=f"automation 'alert': .*{message}"):
        trigger_input({**TRIGGER, **broken})


@pytest.mark.parametrize("part", ["event", "action"])
def test_an_automation_without_its_condition_or_action_is_not_planned(part):
    from wbmigrate.live.objects import LiveObject

    whole = LiveObject.of_trigger(TRIGGER, "team", "proj")
    assert whole.problem is None
    broken = LiveObject.of_trigger({**TRIGGER, part: None}, "team", "proj")
    assert broken.source().error == f"W&B gave no {part} for this automation"


def _readers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.endswith("(produce)")}


def _end(readers: set[threading.Thread]) -> list[threading.Thread]:
    """Joins `readers` (each within a bound): those still running."""
    for reader in readers:
        reader.join(30)
    return [reader for reader in readers if reader.is_alive()]


def test_a_project_listing_asks_at_once_and_its_readers_end_when_it_is_let_go(live):
    """The first requests are out when `fetch_project` returns (the mapping is read meanwhile);
    a listing dropped before its end stops its readers."""
    before = _readers()
    listing = fetch_project(Client(live.url, live.api_key), "team", "async-rl")
    # every listing asked (the automations' after the server's features, as wandb asks them)
    until(lambda: len(live.requests) >= 5, "not every listing was asked")
    assert {r.operation for r in live.requests} >= {"WbmigrateViews", "WbmigrateTriggers"}
    assert next(listing).kind == "report"
    readers = _readers() - before
    del listing
    assert not _end(readers)


def test_the_census_and_the_view_listings_ask_at_once_and_the_automations_after(live):
    """Four requests at first (every view type, the runs), the automations once a view listing
    has answered: the census never waits for the listings."""
    live.latency = 0.5
    project = Project(Client(live.url, live.api_key), "team", "async-rl")
    objects = project.read(Counts())
    with ThreadPoolExecutor(1) as pool:
        census = pool.submit(read_run_keys, project.client, "team", "async-rl")
        until(lambda: len(live.requests) >= 4, "the first requests are not out")  # none answered
        first = ["WbmigrateRuns", *["WbmigrateViews"] * 3]
        assert sorted(r.operation for r in live.requests) == first
        assert [obj.kind for obj in objects][-1] == "automation"
        census.result(timeout=30)  # read without an error
    assert "WbmigrateTriggers" in {r.operation for r in live.requests[4:]}


def test_a_project_that_cannot_be_read_is_not_asked_for_its_automations(live):
    before = _readers()
    project = Project(Client(live.url, live.api_key, retries=0), "team", "no-such-project")
    with pytest.raises(WbmigrateError):
        next(iter(project.read(Counts())))
    assert not _end(_readers() - before)  # nothing more can be asked
    assert "WbmigrateTriggers" not in {r.operation for r in live.requests}


# --- where the W&B app shows each object ---------------------------------------------------


def _view(type_: str, name: str, title: str, parent: str | None = None):
    from wbmigrate.live.client import View
    from wbmigrate.live.objects import LiveObject

    node = {"id": "Vmlldzo0Mg==", "name": name, "type": type_, "displayName": title}
    node |= {"spec": "{}", "updatedAt": None, "parentId": parent}
    return LiveObject.of_view(View.from_node(node, "my team", "async-rl"))


@pytest.mark.parametrize(
    ("obj", "url"),
    [
        (lambda: _view("runs", "x", "Async health: v2 (final)"),
         "https://wandb.ai/my%20team/async-rl/reports/Async-health-v2-final--Vmlldzo0Mg"),
        (lambda: _view("runs/draft", "x", "Async health", parent="Vmlldzo3"),
         "https://wandb.ai/my%20team/async-rl/reports/Async-health--Vmlldzo3"),
        (lambda: _view("project-view", "nw-abc123-v", "Staleness"),
         "https://wandb.ai/my%20team/async-rl?nw=abc123"),
        (lambda: _view("project-view", "odd", "Staleness"),
         "https://wandb.ai/my%20team/async-rl/workspace"),
    ],
    ids=["report", "draft-opens-its-report", "saved-workspace", "workspace-without-nw-name"],
)  # fmt: skip
def test_each_object_links_to_its_page_in_the_app(obj, url):
    assert obj().url("https://api.wandb.ai") == url


def test_an_automation_links_to_its_projects_automations_on_its_own_host():
    from wbmigrate.live.objects import LiveObject

    trigger = LiveObject.of_trigger({"id": "VHJpZ2dlcjox", "name": "alert"}, "team", "p")
    assert trigger.url("http://127.0.0.1:8080") == "http://127.0.0.1:8080/team/p/automations"


def test_a_hostile_title_or_id_cannot_leave_its_link():
    from wbmigrate.live.client import View
    from wbmigrate.live.objects import LiveObject

    node = {"id": "a/b?c#d e=", "name": "nw-x&y=z#w-v", "type": "runs", "displayName": "](x) <b>"}
    report = LiveObject.of_view(View.from_node({**node, "spec": "{}"}, "t", "p"))
    assert (
        report.url("https://api.wandb.ai") == "https://wandb.ai/t/p/reports/x-b--a%2Fb%3Fc%23d%20e"
    )
    workspace = LiveObject.of_view(View.from_node({**node, "type": "project-view"}, "t", "p"))
    assert workspace.url("https://api.wandb.ai") == "https://wandb.ai/t/p?nw=x%26y%3Dz%23w"


def test_apply_plans_each_object_with_its_link():
    """What `apply` shows before it asks names each object with its link, as `plan` does."""
    from helpers import MIGRATION

    from wbmigrate.engine.model import Options
    from wbmigrate.live.prepare import plan_write

    planned, _ = plan_write(
        _view("runs", "x", "Async"), MIGRATION, Options(), "https://api.wandb.ai"
    )
    assert planned.source.url == "https://wandb.ai/my%20team/async-rl/reports/Async--Vmlldzo0Mg"
