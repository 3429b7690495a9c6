"""A total deadline for each try of a request: connecting, sending, the headers and the whole
answer.

A socket timeout bounds each read, not their sum: a server (or proxy) that drips one byte a
second never trips it. Here each try is armed as it starts (`Watch.arm`, from the connection's
`request`), and when its budget runs out the try's socket is shut, which wakes the blocked
read with an error; `Watch.expired` then tells the client why. One thread of the process
keeps every armed deadline (a timer thread per try cost half a millisecond each).

The adapter, pools and connections are urllib3's and requests' own, subclassed only to arm the
watch: retries, pooling, TLS and proxies work as before.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool, PoolManager
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.poolmanager import pool_classes_by_scheme

_current = threading.local()  # the Watch of the request this thread is making, if any


def current() -> Watch | None:
    watch: Watch | None = getattr(_current, "watch", None)
    return watch


class Watch:
    """Bounds every try of one request to `budget()` seconds, from the time it starts; used
    as a context around the request, in the thread that makes it."""

    def __init__(self, budget: Callable[[], float]) -> None:
        self.budget = budget
        self.expired = False  # the last try was cut when its time ran out
        self.attempt = 0  # which try is armed; any other is cancelled
        self.connection: HTTPConnection | None = None

    def __enter__(self) -> Watch:
        _current.watch = self
        return self

    def __exit__(self, *exc: object) -> None:
        _KEEPER.cancel(self)
        _current.watch = None

    def arm(self, connection: HTTPConnection) -> None:
        _KEEPER.arm(self, connection, self.budget())

    def pause(self) -> None:
        """Between tries: the last one has ended, and its connection may be reused."""
        _KEEPER.cancel(self)

    def expire(self) -> None:
        """Called by the keeper, under its lock: the armed try ran out of time."""
        self.expired = True
        if self.connection is not None:
            cut(self.connection)


class _Keeper:
    """The one thread that ends tries whose time ran out: it sleeps until the earliest armed
    deadline. Arming, cancelling and expiring share one lock, so a try that has ended (and
    whose connection may be reused) is never cut."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._heap: list[tuple[float, int, Watch, int]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, watch: Watch, connection: HTTPConnection, seconds: float) -> None:
        with self._lock:
            watch.attempt += 1
            watch.expired = False
            watch.connection = connection
            entry = (time.monotonic() + seconds, next(self._order), watch, watch.attempt)
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="wbmigrate-watchdog")
                self._thread.daemon = True
                self._thread.start()
            self._lock.notify()

    def cancel(self, watch: Watch) -> None:
        with self._lock:
            watch.attempt += 1
            watch.connection = None

    def _run(self) -> None:
        with self._lock:
            while True:
                if not self._heap:
                    self._lock.wait()
                    continue
                when, _, watch, attempt = self._heap[0]
                if watch.attempt != attempt:  # that try has ended or was re-armed
                    heapq.heappop(self._heap)
                    continue
                left = when - time.monotonic()
                if left > 0:
                    self._lock.wait(left)
                    continue
                heapq.heappop(self._heap)
                watch.expire()


_KEEPER = _Keeper()


def cut(connection: HTTPConnection) -> None:
    """Shut a connection's socket, waking a read blocked on it (TLS included: the plain
    socket's shutdown leaves the TLS object to fail the read)."""
    sock = getattr(connection, "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Connection(HTTPConnection):
    """A connection watched by the per-try budget (TLS too: `_TLSConnection` puts
    HTTPSConnection right after it in the method order)."""

    def connect(self) -> None:
        super().connect()
        watch = current()
        if watch is not None and watch.expired:  # while the name was resolved: no socket yet
            cut(self)

    def request(self, *args: Any, **kwargs: Any) -> None:
        watch = current()
        if watch is not None:
            watch.arm(self)
        super().request(*args, **kwargs)


class _TLSConnection(_Connection, HTTPSConnection):
    pass


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Connection


class _TLSPool(HTTPSConnectionPool):
    ConnectionCls = _TLSConnection


class WatchedAdapter(HTTPAdapter):
    """An adapter whose connections are watched (directly, or through an HTTP proxy)."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        _watched(self.poolmanager)

    def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
        return _watched(super().proxy_manager_for(proxy, **kwargs))


def _watched(manager: PoolManager) -> PoolManager:
    if manager.pool_classes_by_scheme is pool_classes_by_scheme:  # not SOCKS: its own classes
        manager.pool_classes_by_scheme = {"http": _Pool, "https": _TLSPool}
    return manager
