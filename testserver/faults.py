"""Faults: what the server does to one request instead of answering it normally (see the
package's docstring), and the constructors tests use."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Fault:
    """What to do to one request instead of answering it normally."""

    status: int = 0  # answer with this status (429, 500, ...)
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False  # close the connection without an answer
    delay: float = 0.0  # wait this long first
    die: bool = False  # stop the whole server (it answers nothing more)
    operation: str | None = None  # only for this GraphQL operation (None: the next request)
    drip: float = 0.0  # send the body one byte every this many seconds
    drip_headers: bool = False  # with `drip`: the status line and headers too
    body: bytes | None = None  # these bytes instead of the JSON answer
    answer: Callable[[Any, dict[str, Any]], Any] | None = None  # (payload, variables) -> sent
    raw: Callable[[bytes], bytes] | None = None  # the answer's bytes, as sent, edited by this
    echo_key: bool = False  # an error repeating the request's Authorization header and key
    sticky: bool = False  # applies to every matching request, until removed


def retry_after(value: str, status: int = 429, operation: str | None = None) -> Fault:
    """An error status asking the client to wait `value` (seconds or an HTTP date)."""
    return Fault(status=status, headers={"Retry-After": value}, operation=operation)


def _at(payload: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        payload = payload[step]
    return payload


def replace_at(path: tuple[Any, ...], value: Any, operation: str | None = None) -> Fault:
    """The answer with the value at `path` (keys and indexes from the top) set to `value`; an
    empty path replaces the whole answer."""

    def answer(payload: Any, _variables: dict[str, Any]) -> Any:
        if not path:
            return value
        _at(payload, path[:-1])[path[-1]] = value
        return payload

    return Fault(answer=answer, operation=operation)


def remove_at(path: tuple[Any, ...], operation: str | None = None) -> Fault:
    """The answer without the key at `path` (a node without `id`, a trigger without `scope`)."""

    def answer(payload: Any, _variables: dict[str, Any]) -> Any:
        del _at(payload, path[:-1])[path[-1]]
        return payload

    return Fault(answer=answer, operation=operation)


def _paging(page_info: Callable[[dict[str, Any]], dict[str, Any]]) -> Fault:
    """Every views listing page with `page_info(variables)` as its pageInfo, for ever."""

    def answer(payload: Any, variables: dict[str, Any]) -> Any:
        project = (payload.get("data") or {}).get("project")
        if project and project.get("allViews"):
            project["allViews"]["pageInfo"] = page_info(variables)
        return payload

    return Fault(answer=answer, operation="WbmigrateViews", sticky=True)


def repeated_cursor() -> Fault:
    """Listings that always say more follow, with the same cursor."""
    return _paging(lambda _v: {"hasNextPage": True, "endCursor": "same-cursor"})


def missing_cursor() -> Fault:
    """Listings that say more follow but give no cursor."""
    return _paging(lambda _v: {"hasNextPage": True, "endCursor": None})


def endless_pages() -> Fault:
    """Listings whose every page has a new cursor and says more follow."""
    pages = itertools.count(1)
    return _paging(lambda _v: {"hasNextPage": True, "endCursor": f"page-{next(pages)}"})
