"""A total deadline for each try of a request: connecting, sending, the headers and the whole
answer.

A socket timeout bounds each read, not their sum: a server (or proxy) that drips one byte a
second never trips it. Here each try is armed as it starts (`Watch.arm`, from the connection's
`request`), and when its budget runs out the try's socket is shut, which wakes the blocked
read with an error; `Watch.expired` then tells the client why. Each try has a timer thread of
its own (a quarter of a millisecond each: nothing beside a request's round trip).

The adapter, pools and connections are urllib3's and requests' own, subclassed only to arm the
watch: retries, pooling, TLS and proxies work as before.
"""

from __future__ import annotations

import contextlib
import socket
import threading
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
    """Bounds every try of one request to `budget()` seconds, from the time it starts, on a
    `timer` (its client clock's); used as a context around the request, in the thread that
    makes it. Arming, cancelling and expiring share one lock, so a try that has ended (and
    whose connection may be reused) is never cut."""

    def __init__(self, budget: Callable[[], float], timer: Callable[..., threading.Timer]) -> None:
        self.budget = budget
        self.timer = timer
        self.expired = False  # the last try was cut when its time ran out
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None  # the armed try's; any other is cancelled
        self._connection: HTTPConnection | None = None

    def __enter__(self) -> Watch:
        _current.watch = self
        return self

    def __exit__(self, *exc: object) -> None:
        self.pause()
        _current.watch = None

    def arm(self, connection: HTTPConnection) -> None:
        """A try starts on `connection`: cut it when its budget runs out."""
        with self._lock:
            self._cancel()
            self.expired, self._connection = False, connection
            self._timer = self.timer(self.budget(), self._expire)
            self._timer.daemon = True
            self._timer.start()

    def pause(self) -> None:
        """Between tries: the last one has ended, and its connection may be reused."""
        with self._lock:
            self._cancel()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._connection = None

    def _expire(self) -> None:
        """On the armed try's timer: its time ran out (unless it ended, or another was armed,
        while this waited for the lock)."""
        with self._lock:
            if self._timer is threading.current_thread() and self._connection is not None:
                self.expired = True
                cut(self._connection)


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
