"""A local W&B-compatible GraphQL server for end-to-end tests, on 127.0.0.1.

It executes real GraphQL (graphql-core) against a schema written for the part of W&B's API that
wbmigrate and the wandb SDK use: views (reports, drafts, saved workspaces), automations (read,
updated, and created as the SDK's `api.create_automation` does: `createFilterTrigger`, its
action naming one of `server.integrations` by id, the Slack and webhook integrations as an
action shows them; no-op and queue-job actions too), and
runs with the keys they logged (`WandbState.add_run`: `runs`, `run`, `runCount`; `summaryMetrics`
a JSON string, `historyKeys` a JSON object; run filters on name, display name, state and times
with `$eq $ne $in $nin $gt $gte $lt $lte $and $or`, order `[+-]created_at|heartbeat_at`, any
other is an error). It checks HTTP Basic auth and records every request.

An organisation: `WandbServer(state, more=[...])` or `server.add_project(state)` serves further
projects, of any entity, each numbering its objects from its own `first_id`; `project`,
`models` and `entity { projects }` (the entity's projects, as `api.projects` lists them), `view`,
`upsertView`, `updateFilterTrigger` and `entity { triggers }` each act on the right project. A
`WandbState(..., forbidden=True)` answers every request about it with HTTP 403 and W&B's
"permission denied" (code PERMISSION_ERROR); listings still name it, but leave its alerts out
of `entity { triggers }`.

Faults: `server.faults` is a list of `Fault`s, each used by the next request of its
`operation` (any, when None) and then removed, unless `sticky`; `server.chaos(operation)` may
return one per request; `server.latency` delays every answer. What a `Fault` does:

- `status=429, headers={"Retry-After": "1"}`: an error status instead of the answer, with any
  headers (`retry_after(value)` builds one; the value may be seconds or an HTTP date).
- `delay=2.5`: answer that much later. `drop=True`: close the connection without an answer.
  `die=True`: stop the whole server.
- `drip=2.0`: the normal answer, its body sent one byte every 2 s (`drip_headers=True`: the
  status line and headers too), for deadlines that must be total, not per read.
- `body=b"<html>"`: these raw bytes instead of the JSON answer (a body that is not JSON).
- `answer=fn`: the JSON answer passed through `fn(payload, variables)`, which returns what to
  send instead: any JSON value (a list, a string: the wrong type), or the payload edited.
  `replace_at(path, value)` and `remove_at(path)` build such faults for odd shapes
  (`allViews: null`, a null edge node, a node without `id`, `triggers: null` or `[null]`, a
  trigger without `scope`, `event` or `action`); `repeated_cursor()`, `missing_cursor()` and
  `endless_pages()` make listings that would page for ever.
- `raw=fn`: the JSON answer's bytes passed through `fn(data)`, for what JSON's escapes cannot
  say: raw UTF-8 beside a `headers` charset that claims another, bytes that are not UTF-8.
- `echo_key=True`: an error that repeats the request's secrets, as a careless server might:
  the request's Authorization header and API key in the GraphQL error message, in the body
  and in the HTTP reason phrase (with `status`: that status; without: a 200 with `errors`),
  for tests that the key never reaches output.

Server features and refusals: `server.features` (name: enabled) is what `serverInfo { features }`
answers, as wandb and wbmigrate gate on it (default: `QUERY_AUTOMATIONS_ON_ENTITY` on; clear it
for a server before 0.83). `server.refuse(...)` answers from then on as an older W&B without a
field (`View.parentId`, `Entity.triggers`, `ServerInfo.features`), a union member
(`TriggerScope.Entity`), a type (`NoOpTriggeredAction`, `QueueJobTriggeredAction`, ...) or the
draft listing (`runs/draft`): a query naming one fails validation with an error naming it.
`updateFilterTrigger` takes every action input wandb writes (notification, webhook, no-op,
ARIA, queue job).

Hooks: `server.hooks[operation](variables)` runs before that operation is answered, to edit an
object between a read and a write the way a colleague in the UI would; `edit_on(operation,
object_id, change)` installs one that edits a view's spec (or a trigger) once. A read of several
views at once (variables `id0`, `id1`, ...) runs the hook once per view, with `{"id": ...}`, as
a read of that view alone would.
"""

from testserver.faults import (
    Fault,
    endless_pages,
    missing_cursor,
    remove_at,
    repeated_cursor,
    replace_at,
    retry_after,
)
from testserver.schema import ACTION_TYPES, PERMISSION
from testserver.server import WandbServer, serve
from testserver.state import HISTORY_STEPS, USER, Request, WandbState

__all__ = [
    "ACTION_TYPES",
    "HISTORY_STEPS",
    "PERMISSION",
    "USER",
    "Fault",
    "Request",
    "WandbServer",
    "WandbState",
    "endless_pages",
    "missing_cursor",
    "remove_at",
    "repeated_cursor",
    "replace_at",
    "retry_after",
    "serve",
]
