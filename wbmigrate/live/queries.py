"""The GraphQL documents wbmigrate sends: list and read views and triggers, save them. Each
read asks for every field a write must copy back; a save asks back only when W&B saved it (what
was stored is read back after, in the next batch's read)."""

from __future__ import annotations

VIEW_FIELDS = "id name type displayName description parentId spec updatedAt"
TRIGGER_FIELDS = """
fragment WbmigrateTrigger on Trigger {
  __typename id createdAt updatedAt name description enabled
  scope { __typename ... on Project { id name } ... on ArtifactPortfolio { id name }
          ... on ArtifactSequence { id name } }
  event: triggeringCondition {
    __typename ... on FilterEventTriggeringCondition { eventType filter } }
  action: triggeredAction {
    __typename
    ... on NotificationTriggeredAction {
      integration { __typename ... on SlackIntegration { id teamName channelName } }
      title message severity }
    ... on GenericWebhookTriggeredAction {
      integration { __typename ... on GenericWebhookIntegration { id name urlEndpoint } }
      requestPayload }
  }
}
"""
LIST_VIEWS = f"""
query WbmigrateViews($entity: String!, $project: String!, $viewType: String!, $first: Int!,
                     $after: String) {{
  project(name: $project, entityName: $entity) {{
    allViews(viewType: $viewType, first: $first, after: $after) {{
      edges {{ node {{ {VIEW_FIELDS} }} cursor }}
      pageInfo {{ endCursor hasNextPage }}
    }}
  }}
}}"""
GET_VIEW = f"query WbmigrateView($id: ID!) {{ view(id: $id) {{ {VIEW_FIELDS} }} }}"


def get_views(count: int) -> str:
    """`count` views by id in one request: `view` under the aliases `v0`, `v1`, ..., each id
    a variable (`$id0`, ...), never pasted into the text. The operation keeps the name of the
    single read: it is the same read, of several views."""
    params = ", ".join(f"$id{i}: ID!" for i in range(count))
    fields = " ".join(f"v{i}: view(id: $id{i}) {{ {VIEW_FIELDS} }}" for i in range(count))
    return f"query WbmigrateView({params}) {{ {fields} }}"


LIST_TRIGGERS = (
    """
query WbmigrateTriggers($entity: String!, $project: String!) {
  project(name: $project, entityName: $entity) { id triggers { ...WbmigrateTrigger } }
}"""
    + TRIGGER_FIELDS
)


def get_triggers(count: int) -> str:
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
        f"{{ entity(name: $entity) {{ {fields} }} }}" + TRIGGER_FIELDS
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
LIST_RUNS = """
query WbmigrateRuns($entity: String!, $project: String!, $first: Int!, $after: String) {
  project(name: $project, entityName: $entity) {
    runCount
    runs(first: $first, after: $after, order: "-created_at") {
      edges { node { id name displayName state createdAt heartbeatAt } cursor }
      pageInfo { endCursor hasNextPage }
    }
  }
}"""
RUN_KEYS = """
query WbmigrateRunKeys($entity: String!, $project: String!, $filters: JSONString!,
                       $first: Int!) {
  project(name: $project, entityName: $entity) {
    runs(filters: $filters, first: $first) {
      edges { node { name historyKeys summaryMetrics } }
      pageInfo { endCursor hasNextPage }
    }
  }
}"""
