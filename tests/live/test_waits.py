"""Every wait is bounded, and one bad answer never hangs or crashes the run.

Each case runs against the local W&B-compatible server, through the CLI (exit code, one line
on stderr, no traceback) and through `Client` directly, and must end well within a generous
bound: the bounds catch a hang, not a slow machine.
"""

from __future__ import annotations

import io
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import requests
from helpers import TARGET
from wandb_server import (
    Fault,
    endless_pages,
    missing_cursor,
    remove_at,
    repeated_cursor,
    replace_at,
    retry_after,
)

import wbmigrate.cli.project as cli_project
import wbmigrate.live.shapes as shapes
from wbmigrate.live.client import ApiError, Client, DeadlineExceeded, ShapeError, WaitTooLong
from wbmigrate.live.transport import retry_after as parse_retry_after

VIEWS = ("data", "project", "allViews")
TRIGGERS = ("data", "project", "triggers")


@contextmanager
def within(seconds: float) -> Iterator[None]:
    started = time.monotonic()
    yield
    elapsed = time.monotonic() - started
    assert elapsed < seconds, f"took {elapsed:.1f} s (bound {seconds} s)"


def one_line_error(result, pattern: str, code: int = 2) -> None:
    """Exit `code`, the error as one `Error:` line matching `pattern`, and no traceback."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    assert re.search(pattern, errors[0]), errors[0]


def client(live, **options) -> tuple[Client, list[str]]:
    """A client of the test server, and the retry lines it reports."""
    lines: list[str] = []
    return Client(live.url, live.api_key, on_retry=lines.append, **options), lines


def all_views(c: Client) -> list:
    return list(c.views("team", "async-rl", "runs"))


# --- Retry-After --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "asked"),
    [("86400", "86400 s"), ("Wed, 21 Oct 2099 07:28:00 GMT", r"\d{6,} s")],
)
def test_a_retry_after_beyond_the_cap_fails_at_once_naming_it(run, live, value, asked):
    live.faults.append(retry_after(value, operation="WbmigrateViews"))
    with within(10):
        result = run("plan", TARGET)
    one_line_error(result, rf"HTTP 429: W&B asked to wait {asked} .*more than --max-wait 60 s")


def test_max_wait_sets_the_cap(run, live):
    live.faults.append(retry_after("3", operation="WbmigrateTriggers"))
    with within(10):
        result = run("plan", TARGET, "--max-wait", "2")
    one_line_error(result, r"asked to wait 3 s before trying again \(Retry-After\), more than")


def test_a_retry_after_within_the_cap_is_waited_and_reported(run, live):
    live.faults.append(retry_after("1", operation="WbmigrateTriggers"))
    started = time.monotonic()
    with within(20):
        result = run("plan", TARGET)
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started >= 1
    assert "Retrying after HTTP 429 (waiting 1 s) ...\n" in result.stderr


def test_retry_after_zero_falls_back_to_backoff(live):
    live.faults += [retry_after("0")] * 2
    c, lines = client(live, backoff=0.5)
    with within(10):
        assert len(all_views(c)) == 3
    assert lines == [
        "Retrying after HTTP 429 (waiting 0 s) ...",  # urllib3: the first retry is at once
        "Retrying after HTTP 429 (waiting 1 s) ...",  # then 0.5 * 2 ** (tries - 1)
    ]


def test_client_refuses_a_long_retry_after(live):
    live.faults.append(retry_after("86400", status=503))
    c, lines = client(live, max_wait=5)
    with within(10), pytest.raises(WaitTooLong, match=r"HTTP 503: .*86400 s .*--max-wait 5 s"):
        all_views(c)
    assert lines == []


@pytest.mark.parametrize(
    ("value", "seconds"), [("7", 7), (" 12 ", 12), ("Thu, 01 Jan 1970 00:00:00 GMT", 0)]
)
def test_retry_after_values(value, seconds):
    assert parse_retry_after(value) == seconds


def test_an_unreadable_retry_after_means_backoff():
    assert parse_retry_after("soon") is None


# --- a deadline for each try, and for the run ---------------------------------------------------


def test_a_dripping_answer_fails_at_the_timeout(run, live):
    live.faults.append(Fault(drip=1.0, operation="WbmigrateViews"))
    with within(10):
        result = run("plan", TARGET, "--timeout", "2", "--retries", "0")
    one_line_error(result, r"timed out: no whole answer within 2 s")


@pytest.mark.parametrize("headers_too", [False, True])
def test_client_bounds_a_dripping_answer_whole(live, headers_too):
    live.faults.append(Fault(drip=0.5, drip_headers=headers_too))
    c, _ = client(live, timeout=2, retries=0)
    with within(10), pytest.raises(ApiError, match="timed out: no whole answer within 2 s"):
        all_views(c)


def test_a_try_cut_by_its_timeout_is_retried_and_reported(live):
    live.faults.append(Fault(drip=0.5, drip_headers=True))
    c, lines = client(live, timeout=2, retries=1)
    with within(10):
        assert len(all_views(c)) == 3
    assert lines == ["Retrying after no answer within 2 s (waiting 0 s) ..."]


def test_a_dripping_write_fails_that_object_only(run, live):
    live.faults.append(Fault(drip=1.0, operation="WbmigrateUpsertView"))
    with within(30):
        result = run("apply", TARGET, "--yes", "--timeout", "2", "--retries", "0", "--jobs", "1")
    assert result.exit_code == 1, result.output
    assert re.search(r"failed +report .*timed out: no whole answer within 2 s", result.stdout)
    assert "Summary: 9 applied, 1 failed." in result.stdout
    assert "Traceback" not in result.output
    assert run("apply", TARGET, "--yes").exit_code == 0  # the rerun converges


def test_the_run_deadline_stops_plan(run, live):
    live.faults.append(Fault(delay=8, operation="WbmigrateViews"))
    with within(10):
        result = run("plan", TARGET, "--deadline", "2")
    one_line_error(result, r"^Error: stopped: the run's deadline passed \(--deadline 2 s\)$")


def test_a_retry_that_would_pass_the_deadline_stops_at_once(run, live):
    live.faults.append(retry_after("30", operation="WbmigrateTriggers"))
    with within(10):
        result = run("plan", TARGET, "--deadline", "5")
    one_line_error(result, r"a retry in 30 s would pass the run's deadline \(--deadline 5 s\)")


def test_the_run_deadline_stops_apply_and_reports_what_was_done(run, live):
    """Objects written before the deadline are applied; the one in flight and the rest fail
    with the deadline's line, at once; a rerun converges."""
    seen: list[str] = []

    def slow_third_object(variables):
        if variables["id"] not in seen:  # the re-read of an object, before its write
            seen.append(variables["id"])
            if len(seen) == 3:  # of the third object
                time.sleep(8)

    live.hooks["WbmigrateView"] = slow_third_object
    with within(15):
        result = run("apply", TARGET, "--yes", "--jobs", "1", "--deadline", "4")
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "Summary: 2 applied, 8 failed." in result.stdout
    failed = [line for line in result.stdout.splitlines() if line.lstrip().startswith("failed")]
    assert len(failed) == 8
    assert all("stopped: the run's deadline passed (--deadline 4 s)" in f for f in failed)
    live.hooks.clear()
    assert run("apply", TARGET, "--yes").exit_code == 0


def test_client_deadline(live):
    # Two answers take 2 s of latency, the third would end at 3 s: 0.5 s of margin either side
    # for a loaded machine (with 0.5 s answers and 1.2 s, the second one ran out under xdist).
    live.latency = 1.0
    c, _ = client(live, deadline=2.5)
    c.triggers("team", "async-rl")
    c.triggers("team", "async-rl")
    with within(10), pytest.raises(DeadlineExceeded, match="deadline passed"):
        c.triggers("team", "async-rl")


# --- a command that has ended ------------------------------------------------------------------


def test_a_command_cut_short_leaves_no_request_or_retry_behind(run, live, capfd):
    """The listings' and the census's first requests go out before the mapping is read: when
    the mapping then fails, their threads, retrying a W&B that answers 503, send and report
    nothing more once the command has ended (in-process, they would print into the next)."""
    live.faults.append(Fault(status=503, sticky=True))
    result = run("plan", TARGET, "--to", "1999.01.01")
    one_line_error(result, r"^Error: mapping prime-rl has no version '1999.01.01'")
    time.sleep(0.3)  # a request already on its way as the command ended still lands
    sent = len(live.requests)
    time.sleep(2.0)  # the retries' backoff: 0.5 s, 1 s, 2 s ...
    assert len(live.requests) == sent
    assert "Retrying" not in capfd.readouterr().err


def test_a_closed_client_sends_nothing_and_stops_its_wait(live):
    live.faults.append(retry_after("5", status=503))
    c, lines = client(live)
    closer = threading.Timer(0.5, c.close)
    closer.start()
    with within(3), pytest.raises(ApiError, match="no longer wanted"):
        c.triggers("team", "async-rl")  # waiting 5 s to retry when the client closes
    assert lines == ["Retrying after HTTP 503 (waiting 5 s) ..."]
    sent = len(live.requests)
    with pytest.raises(ApiError, match="no longer wanted"):
        c.triggers("team", "async-rl")
    assert len(live.requests) == sent


# --- listings that could page for ever ----------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (repeated_cursor, r"repeats an earlier page's cursor at page 2; stopped"),
        (missing_cursor, r"says more pages follow page 1 but gives no cursor"),
        (endless_pages, r"goes on past 25 pages; stopped"),
    ],
)
def test_a_listing_that_would_never_end_stops(run, live, monkeypatch, fault, message):
    monkeypatch.setattr(shapes, "MAX_PAGES", 25)
    live.faults.append(fault())
    with within(20):
        result = run("apply", TARGET, "--yes")
    one_line_error(result, r"W&B's listing of report.* of team/async-rl " + message)
    assert live.mutations() == []


def test_empty_pages_that_say_more_follow_stop(live):
    pages = endless_pages()
    assert pages.answer is not None
    more = pages.answer

    def empty(payload, variables):
        payload["data"]["project"]["allViews"]["edges"] = []
        return more(payload, variables)

    live.faults.append(Fault(answer=empty, operation="WbmigrateViews", sticky=True))
    c, _ = client(live)
    with within(10), pytest.raises(ShapeError, match="10 empty pages in a row"):
        all_views(c)


# --- odd shapes ---------------------------------------------------------------------------------

ODD_SHAPES = [
    (replace_at(VIEWS, None, "WbmigrateViews"), r"project\.allViews is null, not an object"),
    (replace_at((*VIEWS, "edges", 0, "node"), None, "WbmigrateViews"), r"a view is null"),
    (remove_at((*VIEWS, "edges", 0, "node", "id"), "WbmigrateViews"), r"a view has no id"),
    (
        replace_at((*VIEWS, "edges", 0, "node", "spec"), 7, "WbmigrateViews"),
        r"spec of view .* is a number",
    ),
    (replace_at((*VIEWS, "pageInfo"), None, "WbmigrateViews"), r"pageInfo of page 1 .* is null"),
    (replace_at(TRIGGERS, None, "WbmigrateTriggers"), r"project\.triggers is null, not a list"),
    (replace_at((*TRIGGERS, 0), "x", "WbmigrateTriggers"), r"an automation is a string"),
    (remove_at((*TRIGGERS, 0, "id"), "WbmigrateTriggers"), r"an automation has no id"),
    (replace_at(("data", "project"), [], "WbmigrateTriggers"), r"project is a list"),
    (Fault(body=b"<html>busy</html>", operation="WbmigrateViews"), r"the response is not JSON"),
    (replace_at((), [], "WbmigrateViews"), r"the response has no data"),
    (replace_at(("data",), "x", "WbmigrateTriggers"), r"the response has no data"),
]


@pytest.mark.parametrize(("fault", "message"), ODD_SHAPES)
def test_an_odd_answer_is_one_line(run, live, fault, message):
    live.faults.append(fault)
    with within(10):
        result = run("plan", TARGET)
    one_line_error(result, message)


@pytest.mark.parametrize(("fault", "message"), ODD_SHAPES)
def test_client_turns_an_odd_answer_into_an_api_error(live, fault, message):
    live.faults.append(fault)
    c, _ = client(live)
    with pytest.raises(ApiError, match=message):
        all_views(c) if fault.operation == "WbmigrateViews" else c.triggers("team", "async-rl")


def test_null_automations_are_left_out(run, live):
    live.faults.append(replace_at(TRIGGERS, [None], "WbmigrateTriggers"))
    result = run("plan", TARGET)
    assert result.exit_code == 0, result.output
    assert "Found 4 reports (1 draft), 1 saved workspace, 0 automations." in result.stderr


def test_an_automation_without_scope_is_skipped(run, live):
    live.faults.append(remove_at((*TRIGGERS, 0, "scope"), "WbmigrateTriggers"))
    result = run("plan", TARGET)
    assert result.exit_code == 0, result.output
    assert "Found 4 reports (1 draft), 1 saved workspace, 5 automations." in result.stderr


@pytest.mark.parametrize("part", ["event", "action"])
def test_an_automation_without_its_condition_or_action_is_unreadable(run, live, part):
    for _ in range(2):  # plan, then apply
        live.faults.append(replace_at((*TRIGGERS, 1, part), None, "WbmigrateTriggers"))
    plan = run("plan", TARGET)
    assert plan.exit_code == 1, plan.output
    assert f"W&B gave no {part} for this automation" in plan.stdout
    apply = run("apply", TARGET, "--yes")
    assert apply.exit_code == 1, apply.output
    assert re.search(rf"skipped +automation .*W&B gave no {part}", apply.stdout)
    assert "Traceback" not in plan.output + apply.output


def test_a_null_mutation_answer_fails_that_object(run, live):
    live.faults.append(replace_at(("data", "upsertView"), None, "WbmigrateUpsertView"))
    result = run("apply", TARGET, "--yes", "--jobs", "1")
    assert result.exit_code == 1, result.output
    assert re.search(r"failed +report .*upsertView is null, not an object", result.stdout)
    assert "Traceback" not in result.output


# --- failing fast when W&B cannot be reached ----------------------------------------------------


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_refused_connection_fails_fast_with_a_hint(run, live, monkeypatch):
    url = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("WANDB_BASE_URL", url)
    with within(15):
        result = run("plan", TARGET)
    one_line_error(
        result, rf"^Error: cannot reach {url} \(connection refused\); is WANDB_BASE_URL right\?$"
    )
    retries = [line for line in result.stderr.splitlines() if line.startswith("Retrying")]
    assert 2 <= len(retries) <= 2 * 4  # two per listing at most, four listings read at once
    assert all(line.startswith("Retrying after connection refused") for line in retries)


def test_a_host_that_does_not_resolve_fails_without_retries(run, live, monkeypatch):
    monkeypatch.setenv("WANDB_BASE_URL", "https://no-such-host.invalid")
    with within(30):  # the system resolver's own timeout, at worst
        result = run("plan", TARGET)
    one_line_error(result, r"cannot reach https://no-such-host\.invalid \(host not found\)")
    assert "Retrying" not in result.stderr


# --- progress on stderr -------------------------------------------------------------------------


def test_piped_apply_and_rollback_print_progress_lines(run, live, monkeypatch):
    monkeypatch.setattr(cli_project, "PROGRESS_EVERY", 0.2)
    live.latency = 0.1
    result = run("apply", TARGET, "--yes", "--jobs", "1", "--backup-dir", "b")
    assert result.exit_code == 0, result.output
    lines = re.findall(r"^Applying: (\d+)/10 objects \.\.\.$", result.stderr, re.M)
    assert len(lines) >= 2
    assert lines == sorted(lines, key=int)
    undo = run("rollback", "b", "--yes")
    assert undo.exit_code == 0, undo.output
    assert re.search(r"^Restoring: \d+/10 objects \.\.\.$", undo.stderr, re.M)


def test_a_short_run_prints_no_progress_line(run, live):
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0
    assert "objects ..." not in result.stderr


def test_retries_are_reported_during_apply(run, live):
    live.faults.append(retry_after("1", operation="WbmigrateUpsertView"))
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0, result.output
    assert "Retrying after HTTP 429 (waiting 1 s) ...\n" in result.stderr


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_keeps_its_progress_bar(monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setattr(cli_project, "PROGRESS_EVERY", 0.05)
    with cli_project.progress(10, "Applying") as tick:
        cli_project.retry_line("Retrying after HTTP 429 (waiting 1 s) ...")  # would break it
        for _ in range(10):
            tick(None)  # type: ignore[arg-type]
            time.sleep(0.02)
    assert "Applying" in terminal.getvalue()
    assert "objects ..." not in terminal.getvalue()
    assert "Retrying" not in terminal.getvalue()
    cli_project.retry_line("Retrying after HTTP 429 (waiting 1 s) ...")  # no bar: shown
    assert terminal.getvalue().endswith("Retrying after HTTP 429 (waiting 1 s) ...\n")


# --- the test server's own modes ----------------------------------------------------------------


@pytest.mark.parametrize("status", [0, 400])
def test_the_echo_fault_repeats_the_request_secrets(live, status):
    """For redaction tests: the server's error carries the Authorization header and key."""
    live.faults.append(Fault(status=status, echo_key=True))
    response = requests.post(
        f"{live.url}/graphql",
        json={"query": "{viewer{id}}"},
        auth=("api", live.api_key),
        timeout=10,
    )
    header = response.request.headers["Authorization"]
    assert response.status_code == (status or 200)
    assert live.api_key in response.json()["errors"][0]["message"]
    assert header in response.json()["errors"][0]["message"]
    assert live.api_key in response.reason


def test_edit_on_makes_a_colleague_edit_between_read_and_write(run, live):
    report = live.state.find("Token masking")
    live.edit_on("WbmigrateView", report, lambda spec: spec.replace("Token masking", "Edited"))
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 1
    assert re.search(r'skipped +report "Token masking" +changed since it was read', result.stdout)
    assert "Edited" in live.state.views[report]["spec"]


def test_no_thread_is_left_behind(live):
    """The watchdog of each try ends with it."""
    before = threading.active_count()
    c, _ = client(live)
    for _ in range(20):
        c.triggers("team", "async-rl")
    time.sleep(0.2)
    assert threading.active_count() <= before + 2  # the session's pool, at most
