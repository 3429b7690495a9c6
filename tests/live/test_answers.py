"""Answers a hostile server (or a proxy before W&B) gives: JSON labelled with another charset,
bytes that are not UTF-8, an id listed twice, an answer of gigabytes, a gzip bomb, a listing of
fresh objects for ever, a `Retry-After` of a digit only Unicode reads. Each runs against the
local W&B-compatible server with caps made small: a cap is a parameter, so no test makes an
answer of the size it guards against.
"""

from __future__ import annotations

import gzip
import itertools
import tracemalloc
from collections import Counter

import pytest
from helpers import TARGET

import wbmigrate.live.client as client_module
import wbmigrate.live.shapes as shapes
from testserver import Fault, retry_after
from wbmigrate.live.client import MAX_ANSWER, Client
from wbmigrate.live.transport import ApiError
from wbmigrate.live.transport import retry_after as parse_retry_after

DASH = "—"  # U+2014: three bytes in UTF-8, three other characters in latin-1
LATIN_1 = {"Content-Type": "application/json; charset=latin-1"}


def one_line_error(result, pattern: str) -> None:
    """Exit 2, the error as one `Error:` line matching `pattern`, and no traceback."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    assert pattern in errors[0], errors[0]


def with_a_dash(live) -> str:
    """A report whose title and spec hold an em dash (the server sends `\\u2014`); its id."""
    report = live.state.find("Async health")
    view = live.state.views[report]
    view["displayName"] = f"Async {DASH} health"
    view["spec"] = view["spec"][:-1] + f',"note":"a {DASH} b"}}'
    return report


def dash_as(replacement: bytes) -> Fault:
    """Every answer labelled latin-1, with each escaped em dash sent as `replacement`."""
    return Fault(
        headers=LATIN_1, raw=lambda data: data.replace(b"\\u2014", replacement), sticky=True
    )


# --- charsets -----------------------------------------------------------------------------------


def test_json_labelled_latin_1_is_read_as_utf_8_and_written_back_intact(run, live):
    report = with_a_dash(live)
    live.faults.append(dash_as(DASH.encode()))  # raw UTF-8, as W&B sends it
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0, result.output
    view = live.state.views[report]
    assert [r.variables["input"]["id"] for r in live.mutations()].count(report) == 1
    assert view["displayName"] == f"Async {DASH} health"
    assert f'"note":"a {DASH} b"' in view["spec"]
    assert "\u00e2" not in view["spec"] + view["displayName"]


def test_an_answer_that_is_not_utf_8_is_refused_and_nothing_is_written(run, live):
    with_a_dash(live)
    live.faults.append(dash_as(b"\x97"))  # the dash in cp1252: not UTF-8
    result = run("apply", TARGET, "--yes")
    one_line_error(result, "the response is not UTF-8")
    assert live.mutations() == []


def test_a_spec_holding_a_lone_surrogate_is_that_objects_error_alone(run, live):
    view = live.state.views[live.state.find("Async health")]
    view["spec"] = view["spec"][:-1] + ',"note":"a \udc80 b"}'
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    written = {r.variables["input"]["id"] for r in live.mutations()}
    assert live.state.find("Async health") not in written
    assert live.state.find("Token masking") in written


# --- an id listed twice -------------------------------------------------------------------------


def test_an_id_on_two_pages_is_one_object_and_a_warning(run, live, monkeypatch):
    monkeypatch.setattr(client_module, "PAGE_SIZE", 2)  # the three reports on two pages
    first: list = []

    def again(payload, variables):
        if variables["viewType"] == "runs":
            edges = payload["data"]["project"]["allViews"]["edges"]
            edges += first if variables["after"] else []
            first[:] = first or edges[:1]
        return payload

    live.faults.append(Fault(answer=again, operation="WbmigrateViews", sticky=True))
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0, result.output
    written = Counter(r.variables["input"]["id"] for r in live.mutations())
    assert written[first[0]["node"]["id"]] == 1
    assert set(written.values()) == {1}
    assert "conflict" not in result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning: W&B")]
    assert warnings == [
        f"Warning: W&B listed report {first[0]['node']['id']!r} of team/async-rl more than "
        "once; it is read and written once"
    ]


# --- answers too large --------------------------------------------------------------------------


def test_an_answer_over_the_cap_is_one_line(run, live):
    live.faults.append(Fault(body=b'{"data": {}' + b" " * (1 << 20) + b"}"))
    result = run("plan", TARGET, "--max-answer", "1")
    one_line_error(result, "an answer over 1 MB (--max-answer); stopped reading it")


def test_the_cap_is_128_mb_unless_raised(run):
    assert MAX_ANSWER == 128 << 20
    assert Client("http://127.0.0.1:9", "k" * 40).max_answer == MAX_ANSWER
    shown = " ".join(run("plan", "--help").output.split())
    assert "--max-answer MB The largest answer to one request" in shown
    assert "fails the request. [default: 128; x>=1]" in shown


@pytest.mark.parametrize(
    "body",
    [b"{}," * 40, b'{"a":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},' * 2],
    ids=["objects", "numbers"],
)
def test_an_answer_of_more_values_than_any_page_is_not_parsed(run, live, monkeypatch, body):
    """`[{},{},...]` in 256 MB parsed to 21 GB: an answer is not parsed past MAX_VALUES values
    (small here), counted in its bytes."""
    monkeypatch.setattr(shapes, "MAX_VALUES", 30)
    edges = b'{"data":{"project":{"allViews":{"edges":[' + body[:-1] + b"]}}}}"
    live.faults.append(Fault(operation="WbmigrateViews", body=edges, sticky=True))
    result = run("plan", TARGET, "--runs", "0")
    one_line_error(result, "the response holds more than 30 JSON values, more than any page")


def test_values_inside_strings_are_not_counted(monkeypatch):
    """A spec is text: its commas and brackets are no values of the answer."""
    monkeypatch.setattr(shapes, "MAX_VALUES", 6)  # {"spec": ..., "b": [1, 2]} holds 6
    assert shapes.json_of(b'{"spec": "' + b"[1,2,3]," * 100 + b'", "b": [1, 2]}')["b"] == [1, 2]
    with pytest.raises(shapes.TooManyValues):
        shapes.json_of(b'{"spec": "x", "b": [1, 2, 3, 4, 5, 6]}')


def test_a_view_of_a_type_no_listing_asked_for_is_one_line(run, live):
    """A node of type "" (or any type that is not a report's or a workspace's) was a KeyError
    traceback."""
    node = b'{"node":{"id":"x","type":"","spec":"{}"}}'
    edges = b'{"data":{"project":{"allViews":{"edges":[' + node + b"]}}}}"
    live.faults.append(Fault(operation="WbmigrateViews", body=edges, sticky=True))
    result = run("plan", TARGET, "--runs", "0")
    one_line_error(result, "view x is of no type it lists")


def refused_peak(live, error: str) -> int:
    """The peak of memory traced while a client with a 1 MB cap is refused the next answer."""
    client = Client(live.url, live.api_key, max_answer=1 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(ApiError, match=error):
            client.triggers("team", "async-rl")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip-bomb"])
def test_an_answer_is_read_no_further_than_the_cap(live, compressed):
    body = b" " * (64 << 20)
    if compressed:  # 64 KB on the wire
        body, headers = gzip.compress(body), {"Content-Encoding": "gzip"}
    else:
        headers = {}
    live.faults.append(Fault(body=body, headers=headers))
    peak = refused_peak(live, r"an answer over 1 MB \(--max-answer\)")
    assert peak < (1 << 20) + 2 * client_module.READ_AT_ONCE  # the cap and a piece or two


def test_a_redirect_is_not_followed_nor_its_answer_read_past_the_cap(live):
    """requests follows a redirect after reading its whole answer, past any cap (and a POST
    redirected is a GET elsewhere): the API's own URL never redirects."""
    body = b" " * (64 << 20)
    live.faults.append(Fault(status=302, headers={"Location": "/elsewhere"}, body=body))
    peak = refused_peak(live, r"HTTP 302, a redirect, not followed")
    assert peak < (1 << 20) + 2 * client_module.READ_AT_ONCE
    assert len(live.requests) == 1


# --- listings that never end --------------------------------------------------------------------


def test_a_listing_of_fresh_objects_for_ever_stops(run, live, monkeypatch):
    monkeypatch.setattr(shapes, "MAX_OBJECTS", 20)
    pages = itertools.count(1)

    def fresh(payload, variables):
        number = next(pages)
        connection = payload["data"]["project"]["allViews"]
        for edge in connection["edges"]:
            edge["node"]["id"] += f"-{number}"
        connection["pageInfo"] = {"hasNextPage": True, "endCursor": f"page-{number}"}
        return payload

    live.faults.append(Fault(answer=fresh, operation="WbmigrateViews", sticky=True))
    result = run("apply", TARGET, "--yes")
    one_line_error(result, "goes on past 20 objects; stopped")
    assert live.mutations() == []


def test_the_listing_bounds_are_beyond_any_honest_project():
    assert shapes.MAX_OBJECTS == 100_000  # ten times the largest project benchmarked
    assert shapes.MAX_PAGES == 2_000  # pages of half the size asked for, or more


# --- Retry-After --------------------------------------------------------------------------------


def test_a_retry_after_of_a_unicode_digit_means_backoff(run, live, clock):
    live.faults.append(retry_after("\u00b2", operation="WbmigrateTriggers"))  # "²"
    result = run("plan", TARGET)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert "Retrying after HTTP 429 (waiting 0 s) ...\n" in result.stderr


@pytest.mark.parametrize(
    "value", ["\u00b2", "\u0663", "1e400", "-1", "1.5", "Mon, 01 Jan 99999 00:00:00 GMT", ""]
)
def test_an_unreadable_retry_after_is_none(value):
    assert parse_retry_after(value) is None
