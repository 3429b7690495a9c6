"""W&B's GraphQL API over `requests`: retries, typed errors, and the few operations wbmigrate
needs (list and read views and triggers, save them). No rename logic here; where to connect and
with which key is `credentials`, the query texts are `queries`.

Retries are urllib3's (`Retry` on the session adapter, POST included): 429 honours `Retry-After`,
transient 5xx and connection errors back off exponentially up to a cap. The API key only ever
travels in the Authorization header of requests to the configured W&B host.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from wbmigrate import __version__
from wbmigrate.errors import WbmigrateError
from wbmigrate.live.queries import GET_VIEW, LIST_TRIGGERS, LIST_VIEWS, UPDATE_TRIGGER, UPSERT_VIEW

PAGE_SIZE = 100
RETRY_STATUSES = (429, 500, 502, 503, 504)


class ApiError(WbmigrateError):
    """A request to W&B that failed; `status` is the HTTP status (0 without a response)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class AuthError(ApiError):
    """No API key, or one W&B refuses (401/403)."""


class NotFoundError(ApiError):
    """404, or a project or object that does not exist."""


class GraphQLError(ApiError):
    """A 200 response that carries GraphQL `errors`."""


# --- the client ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class View:
    """A report, report draft or saved workspace, with its spec string exactly as received."""

    id: str
    name: str
    type: str
    display_name: str
    description: str
    spec: str
    updated_at: str | None
    parent_id: str | None
    entity: str
    project: str

    def node(self) -> dict[str, Any]:
        """The view as the API spells it (the inverse of `from_node`)."""
        return {
            "id": self.id,
            "name": self.name,
            "type": self.type,
            "displayName": self.display_name,
            "description": self.description,
            "parentId": self.parent_id,
            "updatedAt": self.updated_at,
            "spec": self.spec,
        }

    @classmethod
    def from_node(cls, node: dict[str, Any], entity: str, project: str) -> View:
        return cls(
            id=node["id"],
            name=node.get("name") or "",
            type=node.get("type") or "",
            display_name=node.get("displayName") or "",
            description=node.get("description") or "",
            spec=node.get("spec") or "",
            updated_at=node.get("updatedAt"),
            parent_id=node.get("parentId"),
            entity=entity,
            project=project,
        )


class Client:
    """One W&B host. Thread-safe: each thread gets its own session (connection pool)."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 60.0,
        retries: int = 8,
        backoff: float = 0.5,
        backoff_max: float = 30.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._auth = ("api", api_key)
        self._timeout = (min(timeout, 10.0), timeout)
        self._retry = Retry(
            total=retries,
            connect=retries,
            read=retries,
            status=retries,
            status_forcelist=RETRY_STATUSES,
            allowed_methods=None,
            backoff_factor=backoff,
            backoff_max=backoff_max,
            respect_retry_after_header=True,
            raise_on_status=False,
        )
        self._local = threading.local()

    def __repr__(self) -> str:  # never the key
        return f"Client({self.base_url!r})"

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            session.mount("http://", HTTPAdapter(max_retries=self._retry))
            session.mount("https://", HTTPAdapter(max_retries=self._retry))
            session.headers["User-Agent"] = f"wbmigrate/{__version__}"
            self._local.session = session
        return session

    def execute(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """POST one GraphQL operation; its `data`, or a typed error."""
        url = f"{self.base_url}/graphql"
        try:
            response = self._session().post(
                url,
                json={"query": query, "variables": variables},
                auth=self._auth,
                timeout=self._timeout,
            )
        except requests.exceptions.RetryError as exc:
            raise ApiError(f"{url}: still failing after retries ({_reason(exc)})") from None
        except requests.exceptions.RequestException as exc:
            raise ApiError(f"cannot reach {url}: {_reason(exc)}") from None
        if response.status_code in RETRY_STATUSES:
            raise ApiError(
                f"{url}: HTTP {response.status_code} {response.reason}, still failing "
                f"after retries",
                response.status_code,
            )
        return _data(response, url)

    # --- operations -------------------------------------------------------------------------

    def views(self, entity: str, project: str, view_type: str) -> Iterator[View]:
        """Every view of one type in a project, page by page."""
        after: str | None = None
        while True:
            data = self.execute(
                LIST_VIEWS,
                {
                    "entity": entity,
                    "project": project,
                    "viewType": view_type,
                    "first": PAGE_SIZE,
                    "after": after,
                },
            )
            if data.get("project") is None:
                raise NotFoundError(f"project {entity}/{project} not found", 404)
            connection = data["project"]["allViews"]
            for edge in connection["edges"]:
                yield View.from_node(edge["node"], entity, project)
            page = connection["pageInfo"]
            if not page["hasNextPage"] or not connection["edges"]:
                return
            after = page["endCursor"]

    def view(self, view_id: str, entity: str, project: str) -> View | None:
        node = self.execute(GET_VIEW, {"id": view_id}).get("view")
        return View.from_node(node, entity, project) if node else None

    def triggers(self, entity: str, project: str) -> list[dict[str, Any]]:
        """The automations whose scope is the project."""
        data = self.execute(LIST_TRIGGERS, {"entity": entity, "project": project})
        if data.get("project") is None:
            raise NotFoundError(f"project {entity}/{project} not found", 404)
        return list(data["project"].get("triggers") or [])

    def upsert_view(self, view: View, spec: str) -> View:
        """Save `spec` into an existing view, every other field copied from it."""
        fields = {
            "id": view.id,
            "entityName": view.entity,
            "projectName": view.project,
            "name": view.name,
            "type": view.type,
            "displayName": view.display_name,
            "description": view.description,
            "spec": spec,
        }
        if view.parent_id:
            fields["parentId"] = view.parent_id
        data = self.execute(UPSERT_VIEW, {"input": fields})
        return View.from_node(data["upsertView"]["view"], view.entity, view.project)

    def update_trigger(self, fields: dict[str, Any]) -> dict[str, Any]:
        trigger: dict[str, Any] = self.execute(UPDATE_TRIGGER, {"input": fields})[
            "updateFilterTrigger"
        ]["trigger"]
        return trigger


def _reason(exc: Exception) -> str:
    """Why a request failed, from urllib3's reason (its text holds no header, so no key)."""
    inner = exc.args[0] if exc.args else None
    reason = getattr(inner, "reason", None) or inner or exc
    return str(reason)[:200]


def _data(response: requests.Response, url: str) -> dict[str, Any]:
    status = response.status_code
    if status in (401, 403):
        raise AuthError(
            f"W&B refused the API key for {urlparse(url).hostname} (HTTP {status})", status
        )
    if status == 404:
        raise NotFoundError(f"{url}: not found (HTTP 404)", status)
    if status >= 400:
        raise ApiError(f"{url}: HTTP {status} {_first_error(response) or response.reason}", status)
    try:
        body = response.json()
    except ValueError:
        raise ApiError(f"{url}: the response is not JSON (HTTP {status})", status) from None
    errors = body.get("errors") if isinstance(body, dict) else None
    if errors:
        raise GraphQLError(f"W&B answered with an error: {_first_error(response)}", status)
    if not isinstance(body, dict) or not isinstance(body.get("data"), dict):
        raise ApiError(f"{url}: the response has no data (HTTP {status})", status)
    data: dict[str, Any] = body["data"]
    return data


def _first_error(response: requests.Response) -> str:
    try:
        errors = response.json().get("errors") or []
    except (ValueError, AttributeError):
        return ""
    messages = [str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors]
    return "; ".join(messages)[:300]
