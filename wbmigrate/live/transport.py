"""HTTP for the GraphQL client, with every wait bounded.

- **Each try of a request** (connecting, sending, the headers and the whole answer) gets at most
  `timeout` seconds (`watchdog`), so a server that drips one byte at a time cannot stretch it.
- **Retries** are urllib3's (`BoundedRetry`, a `Retry`): 429 and 503 honour `Retry-After` only
  up to `max_wait` (a longer wait fails at once, naming it), and every retry is reported.
  A host that cannot be resolved fails at once; a refused connection after two more tries in
  all (`Outage`: a client's requests run at once, and each would retry it otherwise).
- **The run** may have a deadline (`Deadline`): no try or wait goes past it.
- **Called off** (`stop_with`, or the client closed as its command ends): no retry starts, and a
  retry's wait ends at once.

Retries' waits, the run's deadline and each try's watchdog (a timer that cuts a real socket) go
by `CLOCK`; tests swap in one whose waits pass at once and whose timers run faster.
"""

from __future__ import annotations

import email.utils
import errno
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

from urllib3 import exceptions
from urllib3.connectionpool import ConnectionPool
from urllib3.response import BaseHTTPResponse
from urllib3.util.retry import Retry

from wbmigrate.errors import WbmigrateError
from wbmigrate.live import watchdog

REFUSED_RETRIES = 2  # a refused or unanswered connection is most likely a wrong URL


class ApiError(WbmigrateError):
    """A request to W&B that failed; `status` is the HTTP status (0 without a response)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class WaitTooLong(ApiError):
    """W&B asked for a wait (Retry-After) longer than the run allows."""


class DeadlineExceeded(ApiError):
    """The run passed its `--deadline`: nothing more is sent."""


class Stopped(ApiError):
    """The thread's work was called off (`stop_with`, or its client closed): no request or
    retry is started."""


NOT_WANTED = "stopped: the results are no longer wanted"


def seconds(value: float) -> str:
    """A wait as people read it: `0.5 s`, `2 s`, `86400 s`."""
    return f"{value:.0f} s" if value >= 10 else f"{round(value, 1):g} s"


class Clock:
    """The time retries, deadlines and each try's watchdog go by: the system's monotonic
    clock."""

    def monotonic(self) -> float:
        return time.monotonic()

    def wait(self, event: threading.Event, seconds: float) -> bool:
        """Wait `seconds`, or until `event` is set: whether it was."""
        return event.wait(seconds)

    def timer(self, seconds: float, function: Callable[[], None]) -> threading.Timer:
        """A timer that calls `function` once `seconds` have passed (unless cancelled)."""
        return threading.Timer(seconds, function)


CLOCK = Clock()  # read as each client is made


class Deadline:
    """The end of a run, `seconds` after it was made (by default, never)."""

    def __init__(self, seconds_: float = math.inf, clock: Clock = CLOCK) -> None:
        self.seconds = seconds_
        self.clock = clock
        self.end = clock.monotonic() + seconds_

    def remaining(self) -> float:
        return self.end - self.clock.monotonic()

    def error(self, wait: float = 0.0) -> DeadlineExceeded:
        limit = f"(--deadline {seconds(self.seconds)})"
        if wait > 0 and self.remaining() > 0:
            return DeadlineExceeded(
                f"stopped: a retry in {seconds(wait)} would pass the run's deadline {limit}"
            )
        return DeadlineExceeded(f"stopped: the run's deadline passed {limit}")

    def check(self, wait: float = 0.0) -> None:
        """Raise when the run's time is up, or would be before `wait` seconds pass."""
        if self.remaining() <= wait:
            raise self.error(wait)


class Outage:
    """The retries a client has spent on a host it cannot reach, shared by all its threads (a
    plan reads four listings at once); any answer from the host gives them back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spent = 0

    def spend(self) -> bool:
        """Whether one more retry of an unreachable host is allowed (and take it)."""
        with self._lock:
            self._spent += 1
            return self._spent <= REFUSED_RETRIES

    def end(self) -> None:
        """The host answered: an outage after this gets its retries again."""
        self._spent = 0


@dataclass(frozen=True)
class Bounds:
    """How long one client may wait, and for what; `on_retry` hears one line per retry;
    `closed` is set once the client's command has ended; retries wait on `clock`."""

    timeout: float = 60.0  # each try of a request, from connecting to the answer's last byte
    max_wait: float = 60.0  # the longest Retry-After obeyed
    deadline: Deadline = field(default_factory=Deadline)
    on_retry: Callable[[str], None] | None = None
    closed: threading.Event = field(default_factory=threading.Event)
    clock: Clock = CLOCK
    outage: Outage = field(default_factory=Outage)

    def budget(self) -> float:
        """The time the next try of a request may take."""
        return max(0.0, min(self.timeout, self.deadline.remaining()))

    def retrying(self, cause: str, wait: float) -> None:
        self.deadline.check(wait)
        if self.on_retry is not None:
            self.on_retry(f"Retrying after {cause} (waiting {seconds(wait)}) ...")


_current = threading.local()  # this thread's stop event


def stop_with(event: threading.Event) -> None:
    """Call off this thread's requests once `event` is set: a reader whose consumer has gone
    starts no retry (and reports none) after it."""
    _current.stop = event


# --- retries ------------------------------------------------------------------------------------


class BoundedRetry(Retry):
    """urllib3's retries, with every wait bounded by the client's `Bounds` and reported."""

    def __init__(self, *args: Any, bounds: Bounds | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bounds = bounds or Bounds()

    def new(self, **kwargs: Any) -> Self:
        retry = super().new(**kwargs)
        retry.bounds = self.bounds
        return retry

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: BaseHTTPResponse | None = None,
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> Self:
        """Give up at once on a name that does not resolve, and after `REFUSED_RETRIES` more
        tries of the client on a connection refused or never answered: retrying them only makes
        a wrong URL (or no network) slow to report."""
        why = unreachable(error)
        if why == "host not found" or (why is not None and not self.bounds.outage.spend()):
            raise exceptions.MaxRetryError(_pool, url or "", error)  # type: ignore[arg-type]
        return super().increment(method, url, response, error, _pool, _stacktrace)

    def sleep(self, response: BaseHTTPResponse | None = None) -> None:
        """Wait before the next try: `Retry-After` when given and not zero (beyond
        `max_wait` the request fails), else urllib3's exponential backoff."""
        stop: threading.Event | None = getattr(_current, "stop", None)
        if (stop is not None and stop.is_set()) or self.bounds.closed.is_set():
            raise Stopped(NOT_WANTED)
        # the wait `Retry-After` asks for, in full (seconds or an HTTP date; unreadable: None)
        value = response.headers.get("Retry-After") if response is not None else None
        asked = retry_after(value) if value is not None else None
        if response is not None and asked is not None and asked > self.bounds.max_wait:
            raise WaitTooLong(
                f"HTTP {response.status}: W&B asked to wait {seconds(asked)} before trying "
                f"again (Retry-After), more than --max-wait {seconds(self.bounds.max_wait)}",
                response.status,
            )
        wait = asked or self.get_backoff_time()
        self.bounds.retrying(self._cause(response), wait)
        watch = watchdog.current()
        if watch is not None:
            watch.pause()  # the wait is bounded here; the next try is armed as it starts
        if wait > 0 and self.bounds.clock.wait(self.bounds.closed, wait):  # closed: no next try
            raise Stopped(NOT_WANTED)

    def _cause(self, response: BaseHTTPResponse | None) -> str:
        if response is not None:
            return f"HTTP {response.status}"
        error = self.history[-1].error if self.history else None
        watch = watchdog.current()
        if watch is not None and watch.expired:
            return f"no answer within {seconds(self.bounds.timeout)}"
        if unreachable(error):
            return str(unreachable(error))
        if isinstance(error, exceptions.ReadTimeoutError):
            return "a timeout"
        return "a dropped connection"


def retry_after(value: str) -> float | None:
    """Seconds from a `Retry-After` value: ASCII digits (`str.isdigit` takes `²` too, which
    `float` refuses) or an HTTP date; anything else is None."""
    value = value.strip()
    if re.fullmatch(r"[0-9]+", value):
        return float(value)
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def unreachable(error: BaseException | None) -> str | None:
    """Why no connection could be made at all, or None: a name that does not resolve, a
    refused connection, an unreachable network, a host that never answers."""
    if isinstance(error, exceptions.NameResolutionError):
        return "host not found"
    if not isinstance(error, exceptions.NewConnectionError):
        return "connection timed out" if isinstance(error, exceptions.ConnectTimeoutError) else None
    cause = error.__cause__ or error.__context__
    if isinstance(cause, ConnectionRefusedError):
        return "connection refused"
    if isinstance(cause, OSError) and cause.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
        return "network unreachable"
    return None
