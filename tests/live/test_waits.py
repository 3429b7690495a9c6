"""Every wait is bounded, and one bad answer never hangs or crashes the run.

Each case runs against the local W&B-compatible server, through the CLI (exit code, one line
on stderr, no traceback) and through `Client` directly. Retries wait on the `clock` fixture,
which lets no time pass and records each wait asked for: a bound is asserted on what was waited,
never on the wall clock. The watchdog's timers (cutting a real socket) run on that clock too, a
fraction of their length on the wall clock.
"""

from __future__ import annotations

import io
import re
import socket
import threading
from itertools import chain

import pytest
import requests
from helpers import TARGET, FastClock, until

import wbmigrate.cli.project as cli_project
import wbmigrate.live.shapes as shapes
from testserver import (
    Fault,
    endless_pages,
    missing_cursor,
    remove_at,
    repeated_cursor,
    replace_at,
    retry_after,
)
from wbmigrate.live.client import Client
from wbmigrate.live.shapes import ShapeError
from wbmigrate.live.transport import ApiError, DeadlineExceeded, WaitTooLong
from wbmigrate.live.transport import retry_after as parse_retry_after

VIEWS = ("data", "project", "allViews")
TRIGGERS = ("data", "project", "triggers")


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
    return list(chain.from_iterable(c.view_pages("team", "async-rl", "runs")))


# --- Retry-After --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "asked"),
    [("86400", "86400 s"), ("Wed, 21 Oct 2099 07:28:00 GMT", r"\d{6,} s")],
)
def test_a_retry_after_beyond_the_cap_fails_at_once_naming_it(run, live, clock, value, asked):
    live.faults.append(retry_after(value, operation="WbmigrateViews"))
    result = run("plan", TARGET)
    assert clock.waits == []
    one_line_error(result, rf"HTTP 429: W&B asked to wait {asked} .*more than --max-wait 60 s")


def test_max_wait_sets_the_cap(run, live, clock):
    live.faults.append(retry_after("3", operation="WbmigrateTriggers"))
    result = run("plan", TARGET, "--max-wait", "2")
    assert clock.waits == []
    one_line_error(result, r"asked to wait 3 s before trying again \(Retry-After\), more than")


def test_a_retry_after_within_the_cap_is_waited_and_reported(run, live, clock):
    live.faults.append(retry_after("1", operation="WbmigrateTriggers"))
    result = run("plan", TARGET)
    assert result.exit_code == 0, result.output
    assert clock.waits == [1]
    assert "Retrying after HTTP 429 (waiting 1 s) ...\n" in result.stderr


def test_retry_after_zero_falls_back_to_backoff(live, clock):
    live.faults += [retry_after("0")] * 2
    c, lines = client(live, backoff=0.5)
    assert len(all_views(c)) == 3
    assert clock.waits == [1]  # the first retry is at once
    assert lines == [
        "Retrying after HTTP 429 (waiting 0 s) ...",  # urllib3: the first retry is at once
        "Retrying after HTTP 429 (waiting 1 s) ...",  # then 0.5 * 2 ** (tries - 1)
    ]


def test_client_refuses_a_long_retry_after(live, clock):
    live.faults.append(retry_after("86400", status=503))
    c, lines = client(live, max_wait=5)
    with pytest.raises(WaitTooLong, match=r"HTTP 503: .*86400 s .*--max-wait 5 s"):
        all_views(c)
    assert lines == []
    assert clock.waits == []


@pytest.mark.parametrize(
    ("value", "seconds"), [("7", 7), (" 12 ", 12), ("Thu, 01 Jan 1970 00:00:00 GMT", 0)]
)
def test_retry_after_values(value, seconds):
    assert parse_retry_after(value) == seconds


def test_an_unreadable_retry_after_means_backoff():
    assert parse_retry_after("soon") is None


# --- a deadline for each try, and for the run ---------------------------------------------------


def test_a_dripping_answer_fails_at_the_timeout(run, live, clock):
    clock.timers = 0.2
    live.faults.append(Fault(drip=0.1, operation="WbmigrateViews"))
    result = run("plan", TARGET, "--timeout", "1", "--retries", "0")
    one_line_error(result, r"timed out: no whole answer within 1 s")


@pytest.mark.parametrize("headers_too", [False, True])
def test_client_bounds_a_dripping_answer_whole(live, clock, headers_too):
    clock.timers = 0.2
    live.faults.append(Fault(drip=0.1, drip_headers=headers_too))
    c, _ = client(live, timeout=0.5, retries=0)
    with pytest.raises(ApiError, match=r"timed out: no whole answer within 0\.5 s"):
        all_views(c)


def test_a_try_cut_by_its_timeout_is_retried_and_reported(live, clock):
    clock.timers = 0.2
    live.faults.append(Fault(drip=0.1, drip_headers=True))
    c, lines = client(live, timeout=0.5, retries=1)
    assert len(all_views(c)) == 3
    assert lines == ["Retrying after no answer within 0.5 s (waiting 0 s) ..."]


def test_a_dripping_write_fails_that_object_only(run, live, clock):
    clock.timers = 0.3
    live.faults.append(Fault(drip=0.1, operation="WbmigrateUpsertView"))
    result = run("apply", TARGET, "--yes", "--timeout", "1", "--retries", "0", "--jobs", "1")
    assert result.exit_code == 1, result.output
    assert re.search(r"failed +report .*timed out: no whole answer within 1 s", result.stdout)
    assert "Summary: 9 applied, 1 failed." in result.stdout
    assert "Traceback" not in result.output
    assert run("apply", TARGET, "--yes").exit_code == 0  # the rerun converges


def test_the_run_deadline_stops_plan(run, live, clock):
    """A try still waiting for its answer is cut when the run's deadline passes (by the
    watchdog, on the clock)."""
    clock.timers = 0.2
    live.faults.append(Fault(delay=8, operation="WbmigrateViews"))
    result = run("plan", TARGET, "--deadline", "0.5")
    one_line_error(result, r"^Error: stopped: the run's deadline passed \(--deadline 0.5 s\)$")


def test_a_retry_that_would_pass_the_deadline_stops_at_once(run, live, clock):
    live.faults.append(retry_after("30", operation="WbmigrateTriggers"))
    result = run("plan", TARGET, "--deadline", "5")
    assert clock.waits == []
    one_line_error(result, r"a retry in 30 s would pass the run's deadline \(--deadline 5 s\)")


def test_the_run_deadline_stops_apply_and_reports_what_was_done(run, live, clock):
    """Objects written before the deadline are applied; the one in flight and the rest fail
    with the deadline's line, at once; a rerun converges."""
    seen: list[str] = []

    def slow_third_object(variables):
        if variables["id"] not in seen:  # the re-read of an object, before its write
            seen.append(variables["id"])
            if len(seen) == 3:  # of the third object: answered once the second is written
                read_back(live, seen[1])  # and its read-back is out, after the deadline
                clock.advance(8)

    live.hooks["WbmigrateView"] = slow_third_object
    result = run("apply", TARGET, "--yes", "--jobs", "1", "--deadline", "4")
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "Summary: 2 applied, 8 failed." in result.stdout
    failed = [line for line in result.stdout.splitlines() if line.lstrip().startswith("failed")]
    assert len(failed) == 8
    assert all("stopped: the run's deadline passed (--deadline 4 s)" in f for f in failed)
    live.hooks.clear()
    assert run("apply", TARGET, "--yes").exit_code == 0


def read_back(live, view_id: str) -> None:
    """Until `view_id` has been read twice: before its write, and back after it."""
    until(
        lambda: sum(view_id in r.variables.values() for r in list(live.requests)) >= 2,
        "no read-back seen",
    )


def test_client_deadline(live, clock):
    # Two answers take 1 s each (on the clock), the third would end at 3 s: the watchdog cuts
    # it when the last 0.5 s have passed (on the clock: a fifth of it on the wall clock).
    clock.timers = 0.2
    live.hooks["WbmigrateTriggers"] = lambda _variables: clock.advance(1.0)
    c, _ = client(live, deadline=2.5)
    c.triggers("team", "async-rl")
    c.triggers("team", "async-rl")
    live.faults.append(Fault(delay=8))
    with pytest.raises(DeadlineExceeded, match="deadline passed"):
        c.triggers("team", "async-rl")


# --- a command that has ended ------------------------------------------------------------------


def test_a_command_cut_short_leaves_no_request_or_retry_behind(run, live, capfd, monkeypatch):
    """The listings' and the census's first requests go out before the mapping is read: when
    the mapping then fails, their threads, retrying a W&B that answers 503, send and report
    nothing more once the command has ended (in-process, they would print into the next)."""
    clock = FastClock(real=0.1)  # the retries' backoff, 0.5 s, 1 s, 2 s ..., a tenth of it
    monkeypatch.setattr("wbmigrate.live.transport.CLOCK", clock)
    live.faults.append(Fault(status=503, sticky=True))
    before = set(threading.enumerate())
    result = run("plan", TARGET, "--to", "1999.01.01")
    one_line_error(result, r"^Error: mapping prime-rl has no version '1999.01.01'")
    sent = len(live.requests)
    working = [t for t in threading.enumerate() if t not in before and not _serving(t)]
    for thread in working:
        thread.join(30)
    assert not [t for t in working if t.is_alive()]  # they end with the command
    assert len(live.requests) <= sent + len(working)  # at most one each already on its way
    assert "Retrying" not in capfd.readouterr().err


def _serving(thread: threading.Thread) -> bool:
    """One of the test server's threads, answering a connection."""
    return thread.name.endswith("(process_request_thread)")


def test_a_closed_client_sends_nothing_and_stops_its_wait(live, monkeypatch):
    clock = FastClock(real=1)  # really waits
    monkeypatch.setattr("wbmigrate.live.transport.CLOCK", clock)
    live.faults.append(retry_after("5", status=503))
    c, lines = client(live)

    def close_once_waiting() -> None:  # (not after a fixed time: the 503 may come late)
        until(lambda: clock.waits, "no wait to retry")
        c.close()

    closer = threading.Thread(target=close_once_waiting)
    closer.start()
    with pytest.raises(ApiError, match="no longer wanted"):  # (not cut: retried, answered)
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
    with pytest.raises(ShapeError, match="10 empty pages in a row"):
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


def test_a_refused_connection_fails_fast_with_a_hint(run, live, clock, monkeypatch):
    url = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("WANDB_BASE_URL", url)
    result = run("plan", TARGET)
    one_line_error(
        result, rf"^Error: cannot reach {url} \(connection refused\); is WANDB_BASE_URL right\?$"
    )
    retries = [line for line in result.stderr.splitlines() if line.startswith("Retrying")]
    assert 2 <= len(retries) <= 2 * 4  # two per listing at most, four listings read at once
    assert all(line.startswith("Retrying after connection refused") for line in retries)
    assert len(clock.waits) == sum("(waiting 0 s)" not in line for line in retries)


def test_a_refused_host_is_retried_twice_in_all_one_line_each(run, live, clock, monkeypatch):
    """docs/live.md: "a refused connection only twice" -- for the whole client, not per request
    (a plan reads four listings at once, which made eight lines)."""
    monkeypatch.setenv("WANDB_BASE_URL", f"http://127.0.0.1:{closed_port()}")
    result = run("plan", TARGET)
    retries = [line for line in result.stderr.splitlines() if line.startswith("Retrying")]
    assert len(retries) == 2, result.stderr
    assert all(
        re.fullmatch(r"Retrying after connection refused \(waiting [01] s\) \.\.\.", line)
        for line in retries
    )
    assert len(clock.waits) == sum("(waiting 0 s)" not in line for line in retries)


def test_a_host_answering_again_gets_its_retries_again():
    """The two retries are per outage: any answer from the host gives them back."""
    from urllib3.exceptions import MaxRetryError, NewConnectionError

    from wbmigrate.live.transport import BoundedRetry, Bounds

    try:
        raise NewConnectionError(None, "refused") from ConnectionRefusedError()  # type: ignore[arg-type]
    except NewConnectionError as exc:
        refused = exc
    bounds = Bounds()
    for _ in range(2):  # two outages, each retried twice, with an answer between them
        retry = BoundedRetry(total=8, bounds=bounds).increment("POST", "/graphql", error=refused)
        retry = BoundedRetry(total=8, bounds=bounds).increment("POST", "/graphql", error=refused)
        with pytest.raises(MaxRetryError):
            retry.increment("POST", "/graphql", error=refused)
        bounds.outage.end()


def test_a_host_that_does_not_resolve_fails_without_retries(run, live, clock, monkeypatch):
    monkeypatch.setenv("WANDB_BASE_URL", "https://no-such-host.invalid")
    result = run("plan", TARGET)
    assert clock.waits == []
    one_line_error(result, r"cannot reach https://no-such-host\.invalid \(host not found\)")
    assert "Retrying" not in result.stderr


# --- progress on stderr -------------------------------------------------------------------------


def test_piped_apply_and_rollback_print_progress_lines(run, live, monkeypatch):
    monkeypatch.setattr(cli_project, "PROGRESS_EVERY", 0.02)
    live.latency = 0.01
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


def test_retries_are_reported_during_apply(run, live, clock):
    live.faults.append(retry_after("1", operation="WbmigrateUpsertView"))
    result = run("apply", TARGET, "--yes")
    assert result.exit_code == 0, result.output
    assert clock.waits == [1]
    assert "Retrying after HTTP 429 (waiting 1 s) ...\n" in result.stderr


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_keeps_its_progress_bar(monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setattr(cli_project, "_progress_lines", None)  # no plain lines at a terminal
    with cli_project.progress(10, "Applying") as tick:
        cli_project.retry_line("Retrying after HTTP 429 (waiting 1 s) ...")  # would break it
        for _ in range(10):
            tick(None)  # type: ignore[arg-type]
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
    for watchdog in [t for t in threading.enumerate() if isinstance(t, threading.Timer)]:
        watchdog.join(30)  # a cancelled one ends at once
    assert threading.active_count() <= before + 2  # the session's pool, at most
