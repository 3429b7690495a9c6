"""The GraphQL client over `responses`: auth, pagination, retries, errors."""

from __future__ import annotations

import base64
import json
from itertools import chain

import pytest
import requests
import responses

from wbmigrate.live.client import Client
from wbmigrate.live.shapes import AuthError, GraphQLError, NotFoundError
from wbmigrate.live.transport import ApiError

BASE = "https://api.example.test"
KEY = "sentinel-" + "x" * 40


def view_node(i: int) -> dict[str, object]:
    return {
        "id": f"V{i}",
        "name": f"v{i}",
        "type": "runs",
        "displayName": f"Report {i}",
        "description": "",
        "parentId": None,
        "spec": '{"blocks":[]}',
        "updatedAt": "t",
    }


def page(nodes: list[dict[str, object]], more: bool) -> dict[str, object]:
    return {
        "data": {
            "project": {
                "allViews": {
                    "edges": [{"node": n, "cursor": n["id"]} for n in nodes],
                    "pageInfo": {
                        "endCursor": nodes[-1]["id"] if nodes else None,
                        "hasNextPage": more,
                    },
                }
            }
        }
    }


@pytest.fixture
def client():
    return Client(BASE, KEY, retries=3, backoff=0)


@responses.activate
def test_basic_auth_and_json_body(client):
    responses.post(f"{BASE}/graphql", json=page([view_node(1)], False))
    (view,) = chain.from_iterable(client.view_pages("team", "proj", "runs"))
    request = responses.calls[0].request
    expected = "Basic " + base64.b64encode(f"api:{KEY}".encode()).decode()
    assert request.headers["Authorization"] == expected
    body = json.loads(request.body)
    assert body["variables"] == {
        "entity": "team",
        "project": "proj",
        "viewType": "runs",
        "first": 100,
        "after": None,
    }
    assert "allViews" in body["query"]
    assert (view.id, view.display_name, view.spec, view.entity) == (
        "V1",
        "Report 1",
        '{"blocks":[]}',
        "team",
    )


@responses.activate
def test_pagination_follows_cursors(client):
    responses.post(f"{BASE}/graphql", json=page([view_node(1), view_node(2)], True))
    responses.post(f"{BASE}/graphql", json=page([view_node(3)], False))
    assert [v.id for v in chain.from_iterable(client.view_pages("team", "proj", "runs"))] == [
        "V1",
        "V2",
        "V3",
    ]
    assert json.loads(responses.calls[1].request.body)["variables"]["after"] == "V2"


@responses.activate
def test_429_with_retry_after_is_retried(client):
    responses.post(f"{BASE}/graphql", status=429, headers={"Retry-After": "0"})
    responses.post(f"{BASE}/graphql", status=503)
    responses.post(f"{BASE}/graphql", json=page([view_node(1)], False))
    assert len(list(chain.from_iterable(client.view_pages("team", "proj", "runs")))) == 1
    assert len(responses.calls) == 3


@responses.activate
def test_retries_run_out(client):
    for _ in range(4):
        responses.post(f"{BASE}/graphql", status=500)
    with pytest.raises(ApiError, match="still failing after retries"):
        list(chain.from_iterable(client.view_pages("team", "proj", "runs")))
    assert len(responses.calls) == 4  # the first try and 3 retries


@pytest.mark.parametrize(
    ("status", "error", "message"),
    [
        (401, AuthError, "W&B refused the API key for api.example.test \\(HTTP 401\\)"),
        (403, AuthError, "HTTP 403"),
        (404, NotFoundError, "not found \\(HTTP 404\\)"),
        (400, ApiError, "HTTP 400 bad query"),
    ],
)
@responses.activate
def test_http_errors_are_typed_and_not_retried(client, status, error, message):
    responses.post(f"{BASE}/graphql", status=status, json={"errors": [{"message": "bad query"}]})
    with pytest.raises(error, match=message) as caught:
        list(chain.from_iterable(client.view_pages("team", "proj", "runs")))
    assert caught.value.status == status
    assert len(responses.calls) == 1
    assert KEY not in str(caught.value)


@responses.activate
def test_200_with_graphql_errors(client):
    responses.post(f"{BASE}/graphql", json={"data": None, "errors": [{"message": "boom"}]})
    with pytest.raises(GraphQLError, match="W&B answered with an error: boom"):
        list(chain.from_iterable(client.view_pages("team", "proj", "runs")))


@responses.activate
def test_missing_project(client):
    responses.post(f"{BASE}/graphql", json={"data": {"project": None}})
    with pytest.raises(NotFoundError, match="project team/proj not found"):
        list(chain.from_iterable(client.view_pages("team", "proj", "runs")))


@responses.activate
def test_connection_error_names_no_secret(client):
    responses.post(f"{BASE}/graphql", body=requests.exceptions.ConnectionError("refused"))
    with pytest.raises(ApiError, match="cannot reach") as caught:
        client.triggers("team", "proj")
    assert KEY not in str(caught.value)
    assert KEY not in repr(client)


@responses.activate
def test_upsert_copies_every_field(client):
    from wbmigrate.live.client import View

    view = View("V1", "abc123", "runs/draft", "Title", "desc", "{}", "t", "P1", "team", "proj")
    responses.post(
        f"{BASE}/graphql",
        json={
            "data": {
                "upsertView": {"view": {**view_node(1), "spec": '{"new":1}'}, "inserted": False}
            }
        },
    )
    client.upsert_view(view, '{"new":1}')
    sent = json.loads(responses.calls[0].request.body)["variables"]["input"]
    assert sent == {
        "id": "V1",
        "entityName": "team",
        "projectName": "proj",
        "name": "abc123",
        "type": "runs/draft",
        "displayName": "Title",
        "description": "desc",
        "spec": '{"new":1}',
        "parentId": "P1",
    }


# --- odd answers, and the retry policy ----------------------------------------------------------


@responses.activate
def test_a_null_mutation_answer_is_one_line(client):
    from wbmigrate.live.client import View
    from wbmigrate.live.shapes import ShapeError

    view = View("V1", "abc123", "runs", "Title", "", "{}", "t", None, "team", "proj")
    responses.post(f"{BASE}/graphql", json={"data": {"upsertView": None}})
    with pytest.raises(ShapeError, match="upsertView is null, not an object"):
        client.upsert_view(view, "{}")
    responses.post(f"{BASE}/graphql", json={"data": {"updateFilterTrigger": {"trigger": 3}}})
    with pytest.raises(ShapeError, match=r"updateFilterTrigger\.trigger is a number"):
        client.update_trigger({"id": "T1"})


@responses.activate
def test_graphql_errors_of_any_shape_are_one_line(client):
    responses.post(f"{BASE}/graphql", json={"data": None, "errors": "rate limited"})
    with pytest.raises(GraphQLError, match=r"W&B answered with an error: rate limited$"):
        client.triggers("team", "proj")


@responses.activate
def test_a_view_field_of_the_wrong_type_is_one_line(client):
    responses.post(f"{BASE}/graphql", json=page([{**view_node(1), "displayName": ["x"]}], False))
    with pytest.raises(ApiError, match="displayName of view V1 is a list, not a string"):
        list(chain.from_iterable(client.view_pages("team", "proj", "runs")))


@pytest.mark.parametrize(
    ("pages", "message"),
    [
        ([("c1", True), ("c1", True)], "repeats an earlier page's cursor at page 2"),
        ([(None, True)], "says more pages follow page 1 but gives no cursor"),
        ([("", True)], "says more pages follow page 1 but gives no cursor"),
    ],
)
@responses.activate
def test_a_listing_that_would_loop_stops(client, pages, message):
    for cursor, more in pages:
        answer = page([view_node(1)], more)
        answer["data"]["project"]["allViews"]["pageInfo"]["endCursor"] = cursor  # type: ignore[index]
        responses.post(f"{BASE}/graphql", json=answer)
    with pytest.raises(ApiError, match=message):
        list(chain.from_iterable(client.view_pages("team", "proj", "runs")))
    assert len(responses.calls) == len(pages)


def test_a_retry_after_the_work_was_called_off_is_not_started():
    import threading

    from wbmigrate.live.transport import BoundedRetry, Stopped, stop_with

    stop = threading.Event()
    stop_with(stop)
    try:
        BoundedRetry(total=3).sleep()  # not called off: backs off (at once, the first time)
        stop.set()
        with pytest.raises(Stopped):
            BoundedRetry(total=3).sleep()
    finally:
        stop_with(threading.Event())


def test_unreachable_hosts_are_retried_little_or_not_at_all():
    import socket

    from urllib3.exceptions import (
        ConnectTimeoutError,
        MaxRetryError,
        NameResolutionError,
        NewConnectionError,
        ProtocolError,
    )

    from wbmigrate.live.transport import BoundedRetry, unreachable

    def refused() -> NewConnectionError:
        try:
            raise NewConnectionError(None, "refused") from ConnectionRefusedError()  # type: ignore[arg-type]
        except NewConnectionError as exc:
            return exc

    unanswered = ConnectTimeoutError(None, "connect timed out")
    not_found = NameResolutionError("x.invalid", None, socket.gaierror())  # type: ignore[arg-type]
    assert unreachable(refused()) == "connection refused"
    assert unreachable(unanswered) == "connection timed out"
    assert unreachable(not_found) == "host not found"
    assert unreachable(ProtocolError("Connection aborted.")) is None  # retried as usual
    with pytest.raises(MaxRetryError):
        BoundedRetry(total=8).increment("POST", "/graphql", error=not_found)
    for error in (refused(), unanswered):
        retry = BoundedRetry(total=8).increment("POST", "/graphql", error=error)
        retry = retry.increment("POST", "/graphql", error=error)
        with pytest.raises(MaxRetryError):
            retry.increment("POST", "/graphql", error=error)


@responses.activate
def test_a_listing_is_handed_on_a_page_at_a_time(client):
    responses.post(f"{BASE}/graphql", json=page([view_node(1), view_node(2)], True))
    responses.post(f"{BASE}/graphql", json=page([view_node(3)], False))
    pages = client.view_pages("team", "proj", "runs")
    assert [v.id for v in next(pages)] == ["V1", "V2"]
    assert len(responses.calls) == 1  # the next page is asked for when the first is handed on
    assert [[v.id for v in p] for p in pages] == [["V3"]]


@responses.activate
def test_a_page_with_an_edge_that_is_no_view_gives_the_views_before_it_then_the_error(client):
    broken = page([view_node(1), view_node(2), view_node(3)], False)
    broken["data"]["project"]["allViews"]["edges"][1]["node"] = 7  # type: ignore[index]
    responses.post(f"{BASE}/graphql", json=broken)
    pages = client.view_pages("team", "proj", "runs")
    assert [v.id for v in next(pages)] == ["V1"]
    with pytest.raises(ApiError, match="a view is a number, not an object"):
        next(pages)


BODY = {"data": {"project": {"name": "caf\u00e9 \U0001f600", "n": 2**70, "x": 0.1}}}


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (json.dumps(BODY).encode(), "application/json"),
        (json.dumps(BODY, ensure_ascii=False).encode(), "application/json; charset=utf-8"),
        (json.dumps(BODY).encode(), "application/json; charset=no-such-codec"),
    ],
    ids=["ascii", "utf-8", "unknown-charset"],
)
@responses.activate
def test_an_answer_reads_as_requests_reads_it(client, body, content_type):
    """Bodies are read by `json_values` (orjson where it can), to what `Response.json()` gives
    for UTF-8."""
    responses.post(f"{BASE}/graphql", body=body, content_type=content_type)
    responses.post(f"{BASE}/graphql", body=body, content_type=content_type)
    expected = requests.post(f"{BASE}/graphql", timeout=5).json()["data"]
    assert client.execute("query { x }", {}) == expected


@responses.activate
def test_an_answer_is_utf_8_whatever_charset_it_declares(client):
    """JSON is UTF-8 (RFC 8259): a charset of its headers is not honoured."""
    body = json.dumps(BODY, ensure_ascii=False).encode()
    responses.post(f"{BASE}/graphql", body=body, content_type="application/json; charset=latin-1")
    assert client.execute("query { x }", {}) == BODY["data"]


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b'{"data": {"project": {"name": "caf\xe9 \xff"}}}', "application/json"),
        (b'{"data": {"project": {"name": "caf\xe9"}}}', "application/json; charset=latin-1"),
        (b'{"data": {"project": {"name": "caf\xe9"}}}', "text/plain"),
    ],
    ids=["not-utf-8", "latin-1", "text-plain"],
)
@responses.activate
def test_an_answer_that_is_not_utf_8_is_refused_never_repaired(client, body, content_type):
    responses.post(f"{BASE}/graphql", body=body, content_type=content_type)
    with pytest.raises(ApiError, match=r"the response is not UTF-8 \(HTTP 200\)"):
        client.execute("query { x }", {})


@responses.activate
def test_an_answer_is_read_in_one_piece_not_requests_10_kib(client, monkeypatch):
    """Each read lets go of the interpreter's lock and waits to win it back while another
    thread plans: a page of views read 10 KiB at a time waited 0.3 s, read whole 0.1 s."""
    from wbmigrate.live import client as module

    asked = []
    iter_content = requests.Response.iter_content

    def recorded(self, chunk_size=1, decode_unicode=False):
        asked.append(chunk_size)
        return iter_content(self, chunk_size, decode_unicode)

    monkeypatch.setattr(requests.Response, "iter_content", recorded)
    responses.post(f"{BASE}/graphql", json=page([view_node(1)], False))
    assert [v.id for v in chain.from_iterable(client.view_pages("team", "proj", "runs"))] == ["V1"]
    assert asked == [module.READ_AT_ONCE]
    assert module.READ_AT_ONCE >= 8 << 20


@responses.activate
def test_an_answer_nested_too_deeply_to_read_is_one_line(client):
    responses.post(f"{BASE}/graphql", body=b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(ApiError, match="the response is nested too deeply to read"):
        client.execute("query { x }", {})
