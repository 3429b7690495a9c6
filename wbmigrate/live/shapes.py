"""The shapes of W&B's answers that the client relies on, checked as they are read.

A server (or a proxy before it) can answer with JSON of another shape: a body that is not JSON
or holds no `data` (`data_of`), a null where a listing belongs, an edge without a node, a number
for a string, a page that says more follow but gives no cursor to get them, or the same cursor
again. Each becomes one `ApiError` line naming what was found (never the value, which could be
anything), instead of a traceback deep in the code that used it, or a listing paged for ever.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlparse

import requests

from wbmigrate import json_values
from wbmigrate.live.transport import ApiError
from wbmigrate.redact import printable, redact

# A listing longer than these is a server that pages for ever: ten times the objects of the
# largest project benchmarked, in pages of half the size asked for.
MAX_OBJECTS = 100_000
MAX_PAGES = 2_000
EMPTY_PAGES = 10  # empty pages in a row that still say more follow


class ShapeError(ApiError):
    """An answer of a shape W&B's API never gives."""


class AuthError(ApiError):
    """No API key, or one W&B refuses (401/403)."""


class NotFoundError(ApiError):
    """404, or a project or object that does not exist."""


class GraphQLError(ApiError):
    """A 200 response that carries GraphQL `errors`."""


def shown(value: Any) -> str:
    """What a JSON value is, in words (never its content, which could be anything)."""
    if value is None:
        return "null"
    words = ((bool, "a boolean"), (int | float, "a number"), (str, "a string"), (list, "a list"))
    return next((word for kind, word in words if isinstance(value, kind)), "an object")


def _unexpected(where: str, value: Any, expected: str) -> ShapeError:
    return ShapeError(f"unexpected answer from W&B: {where} is {shown(value)}, not {expected}")


def a_dict(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _unexpected(where, value, "an object")
    return value


def a_list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _unexpected(where, value, "a list")
    return value


def text(obj: dict[str, Any], key: str, where: str) -> str | None:
    """A string field of `obj`, or None when it is absent or null."""
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise _unexpected(f"{key} of {where}", value, "a string")
    return value


def project_of(data: dict[str, Any], entity: str, project: str) -> dict[str, Any]:
    """The `project` of an answer; null is a project W&B does not have."""
    if data.get("project") is None:
        raise NotFoundError(f"project {entity}/{project} not found", 404)
    return a_dict(data["project"], "project")


def listing_pages(page: Callable[[str | None], dict[str, Any]], what: str) -> Iterator[list[Any]]:
    """The edges of each page of a cursor listing (`page(after)` gives its connection), until
    a page says none follow. A listing that could go on for ever stops with a `ShapeError`:
    a cursor seen before, a page that says more follow without a cursor, more than `MAX_PAGES`
    pages or `MAX_OBJECTS` edges, or `EMPTY_PAGES` empty pages in a row. Memory: a 16-byte
    digest per page."""
    after: str | None = None
    seen: set[bytes] = set()
    empty = objects = 0
    for number in itertools.count(1):
        if number > MAX_PAGES:
            raise _endless(what, f"goes on past {MAX_PAGES:,} pages; stopped")
        connection = page(after)
        edges = a_list(connection.get("edges"), f"page {number} of the {what}")
        objects += len(edges)
        if objects > MAX_OBJECTS:
            raise _endless(what, f"goes on past {MAX_OBJECTS:,} objects; stopped")
        yield edges
        info = a_dict(connection.get("pageInfo"), f"pageInfo of page {number} of the {what}")
        more = info.get("hasNextPage")
        if not isinstance(more, bool):
            raise _unexpected(f"hasNextPage of page {number} of the {what}", more, "a boolean")
        if not more:
            return
        empty = empty + 1 if not edges else 0
        after = _next_cursor(info.get("endCursor"), seen, number, what)
        if empty >= EMPTY_PAGES:
            why = f"gives {empty} empty pages in a row that say more follow; stopped"
            raise _endless(what, why)


def _next_cursor(cursor: Any, seen: set[bytes], number: int, what: str) -> str:
    if not isinstance(cursor, str) or not cursor:
        why = f"says more pages follow page {number} but gives no cursor to read them; stopped"
        raise _endless(what, why)
    digest = hashlib.blake2b(cursor.encode(), digest_size=16).digest()
    if digest in seen:
        why = (
            f"repeats an earlier page's cursor at page {number}; stopped rather than read it again"
        )
        raise _endless(what, why)
    seen.add(digest)
    return cursor


def _endless(what: str, why: str) -> ShapeError:
    return ShapeError(f"W&B's listing of {what} {why}")


# --- the envelope: status, JSON, errors, data ------------------------------------------------


def data_of(
    response: requests.Response, body: bytes | bytearray, url: str, relogin: str = ""
) -> dict[str, Any]:
    """The `data` of a GraphQL answer (`body`: the whole of it), or the typed error its status
    and body say; `relogin` follows a refused key (where it came from, how to log in again)."""
    status = response.status_code
    if status == 401:
        why = f"W&B refused the API key for {urlparse(url).hostname} (HTTP 401)"
        raise AuthError(why + relogin, status)
    if status == 403:  # a good key without access to this (one project of many, say)
        why = _first_error(body) or "permission denied"
        raise AuthError(f"W&B refused access on {urlparse(url).hostname} (HTTP 403: {why})", status)
    if status == 404:
        raise NotFoundError(f"{url}: not found (HTTP 404)", status)
    if status >= 400:
        why = _first_error(body) or printable(str(response.reason))
        raise ApiError(f"{url}: HTTP {status} {why}", status)
    if status >= 300:  # the API's own URL never redirects: a wrong URL, or a hostile one
        why = "a redirect, not followed; is WANDB_BASE_URL right?"
        raise ApiError(f"{url}: HTTP {status}, {why}", status)
    try:
        found = json_of(body)
    except UnicodeDecodeError:
        raise ApiError(f"{url}: the response is not UTF-8 (HTTP {status})", status) from None
    except TooManyValues:
        why = f"holds more than {MAX_VALUES:,} JSON values, more than any page of W&B's"
        raise ApiError(f"{url}: the response {why}; not read", status) from None
    except ValueError:
        raise ApiError(f"{url}: the response is not JSON (HTTP {status})", status) from None
    except RecursionError:
        raise ApiError(f"{url}: the response is nested too deeply to read", status) from None
    if isinstance(found, dict) and found.get("errors"):
        raise GraphQLError(f"W&B answered with an error: {_errors(found)}", status)
    if not isinstance(found, dict) or not isinstance(found.get("data"), dict):
        raise ApiError(f"{url}: the response has no data (HTTP {status})", status)
    data: dict[str, Any] = found["data"]
    return data


# The most JSON values one answer may hold, counted before it is parsed: each costs 50-100 bytes
# parsed, so `[{},{},...]` in 256 MB was 21 GB. A page of the key census (100 runs that logged
# 10,000 keys each) holds about 6 million; a page of views a few thousand (their specs are text).
MAX_VALUES = 8_000_000


class TooManyValues(ValueError):
    """An answer of more than MAX_VALUES values, not parsed."""


STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


def json_of(body: bytes | bytearray) -> Any:
    """The JSON value of a body, read as UTF-8 whatever charset its headers declare: JSON is
    UTF-8 (RFC 8259), and a title read in another charset would be written back altered.
    Bytes that are not UTF-8 are a `UnicodeDecodeError`, never replaced: an answer that cannot
    be read exactly is refused. One of more than MAX_VALUES values is a ValueError. By orjson
    where that is the same value (a page of views is megabytes)."""
    if _values(body) > MAX_VALUES:
        raise TooManyValues
    value = json_values.read_fast(body)
    return json.loads(body.decode("utf-8")) if value is json_values.UNREAD else value


def _values(body: bytes | bytearray) -> int:
    """At least as many as the JSON values in `body` (each but the first follows a `,`, `:` or
    `[`): counted in its bytes, and only if that is too many, outside its strings."""

    def count(text: bytes | bytearray) -> int:
        return text.count(b",") + text.count(b":") + text.count(b"[") + 1

    found = count(body)
    return found if found <= MAX_VALUES else count(STRING.sub(b"", body))


def _first_error(body: bytes | bytearray) -> str:
    try:
        found = json_of(body)
    except (ValueError, RecursionError):
        return ""
    return _errors(found)


def _errors(found: Any) -> str:
    errors = found.get("errors") if isinstance(found, dict) else None
    if not errors:
        return ""
    if not isinstance(errors, list):
        errors = [errors]
    messages = [str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors]
    # redacted first (a cut leaves no part of a key); escaped before any line is laid out
    return printable(redact("; ".join(messages)))[:300]
