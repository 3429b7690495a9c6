"""The GraphQL documents wbmigrate sends: list and read views and triggers, save them. Each
read asks for every field a write must copy back; a save asks back only when W&B saved it (what
was stored is read back after, in the next batch's read)."""

from __future__ import annotations

VIEW_FIELDS = "id name type displayName description parentId spec updatedAt"
# Each fragment of wandb's `TriggerFields` (wandb/automations/_generated/operations.py), by
# name: the scopes, then the actions. `__typename` is asked beside them, so an action whose
# fragment is left out (a server without its type) is still known by its type.
SCOPE_FRAGMENTS = {
    "ProjectScopeFields": "on Project { __typename id name }",
    "ArtifactPortfolioScopeFields": "on ArtifactPortfolio { __typename id name }",
    "ArtifactSequenceScopeFields": "on ArtifactSequence { __typename id name }",
    "EntityScopeFields": "on Entity { __typename id name entityType }",
}
ACTION_FRAGMENTS = {
    "QueueJobActionFields": "on QueueJobTriggeredAction { __typename queue { id name } template }",
    "NotificationActionFields": """on NotificationTriggeredAction { __typename
    integration { __typename ... on SlackIntegration { id teamName channelName } }
    title message severity }""",
    "GenericWebhookActionFields": """on GenericWebhookTriggeredAction { __typename
    integration { __typename ... on GenericWebhookIntegration { id name urlEndpoint } }
    requestPayload }""",
    "NoOpActionFields": "on NoOpTriggeredAction { __typename noOp }",
    "AriaActionFields": "on ARIATriggeredAction { __typename prompt }",
}
OPTIONAL_FRAGMENTS = (
    "EntityScopeFields",
    "QueueJobActionFields",
    "NoOpActionFields",
    "AriaActionFields",
)


def view_fields(parent: bool = True) -> str:
    """A view's fields; without `parentId` for a server that refuses it."""
    return VIEW_FIELDS if parent else VIEW_FIELDS.replace(" parentId", "")


def trigger_fields(omit: frozenset[str] = frozenset()) -> str:
    """The fragment `WbmigrateTrigger` (wandb's `TriggerFields`) and those it spreads, but for
    `omit` (fragments of types the server lacks, as wandb leaves them out)."""
    scopes = [name for name in SCOPE_FRAGMENTS if name not in omit]
    actions = [name for name in ACTION_FRAGMENTS if name not in omit]
    fragments = {**SCOPE_FRAGMENTS, **ACTION_FRAGMENTS}
    spread = " ".join
    return (
        "\nfragment WbmigrateTrigger on Trigger {\n"
        "  __typename id createdAt updatedAt name description enabled\n"
        f"  scope {{ __typename {spread('...' + n for n in scopes)} }}\n"
        "  event: triggeringCondition {\n"
        "    __typename ... on FilterEventTriggeringCondition { eventType filter } }\n"
        f"  action: triggeredAction {{ __typename {spread('...' + n for n in actions)} }}\n"
        "}\n" + "".join(f"fragment {n} {fragments[n]}\n" for n in scopes + actions)
    )


PAGE_INFO = "pageInfo { endCursor hasNextPage }"


def _of_project(operation: str, params: str, fields: str) -> str:
    """A query of one project's `fields`; `params` declares its variables past the project's."""
    return (
        f"query {operation}($entity: String!, $project: String!{params}) {{\n"
        f"  project(name: $project, entityName: $entity) {{ {fields} }}\n}}"
    )


def _page(connection: str, fields: str) -> str:
    """A page of a listing: each node's `fields` and cursor, and where the page ends."""
    return f"{connection} {{ edges {{ node {{ {fields} }} cursor }} {PAGE_INFO} }}"


PAGED = ", $first: Int!, $after: String"
LIST_VIEWS = _of_project(
    "WbmigrateViews",
    f", $viewType: String!{PAGED}",
    _page("allViews(viewType: $viewType, first: $first, after: $after)", VIEW_FIELDS),
)


def list_views(parent: bool = True) -> str:
    return LIST_VIEWS.replace(VIEW_FIELDS, view_fields(parent))


def get_view(parent: bool = True) -> str:
    return f"query WbmigrateView($id: ID!) {{ view(id: $id) {{ {view_fields(parent)} }} }}"


def get_views(count: int, parent: bool = True) -> str:
    """`count` views by id in one request: `view` under the aliases `v0`, `v1`, ..., each id
    a variable (`$id0`, ...), never pasted into the text. The operation keeps the name of the
    single read: it is the same read, of several views."""
    params = ", ".join(f"$id{i}: ID!" for i in range(count))
    fields = " ".join(f"v{i}: view(id: $id{i}) {{ {view_fields(parent)} }}" for i in range(count))
    return f"query WbmigrateView({params}) {{ {fields} }}"


_PROJECT_TRIGGERS = _of_project("WbmigrateTriggers", "", "id triggers { ...WbmigrateTrigger }")


def list_triggers(omit: frozenset[str] = frozenset()) -> str:
    return _PROJECT_TRIGGERS + trigger_fields(omit)


def get_triggers(count: int, omit: frozenset[str] = frozenset()) -> str:
    """The automations of an entity named each of `count` names, in one request: `triggers`
    filtered by name (W&B's SDK asks `{"name": ...}` the same way) under the aliases `t0`,
    `t1`, ..., each filter a variable. The operation keeps the name of the listing: it is the
    same read, of fewer automations."""
    params = ", ".join(f"$name{i}: JSONString!" for i in range(count))
    fields = " ".join(
        f"t{i}: triggers(filters: $name{i}, first: {TRIGGERS_PER_NAME}) "
        "{ edges { node { ...WbmigrateTrigger } } }"
        for i in range(count)
    )
    return (
        f"query WbmigrateTriggers($entity: String!, {params}) "
        f"{{ entity(name: $entity) {{ {fields} }} }}" + trigger_fields(omit)
    )


# Automations of one name asked for at most: an automation among more of its name is read
# from its project's listing instead.
TRIGGERS_PER_NAME = 50
UPSERT_VIEW = """
mutation WbmigrateUpsertView($input: UpsertViewInput!) {
  upsertView(input: $input) { view { id updatedAt } }
}"""
UPDATE_TRIGGER = """
mutation WbmigrateUpdateTrigger($input: UpdateFilterTriggerInput!) {
  updateFilterTrigger(input: $input) { trigger { id updatedAt } }
}"""
# The key census: runs newest first (light fields), then the keys of the runs not cached.
RUN_FIELDS = "id name displayName state createdAt heartbeatAt"
LIST_RUNS = _of_project(
    "WbmigrateRuns",
    PAGED,
    "runCount " + _page('runs(first: $first, after: $after, order: "-created_at")', RUN_FIELDS),
)
RUN_KEYS = _of_project(
    "WbmigrateRunKeys",
    ", $filters: JSONString!, $first: Int!",
    "runs(filters: $filters, first: $first) "
    f"{{ edges {{ node {{ name historyKeys summaryMetrics }} }} {PAGE_INFO} }}",
)
