"""The GraphQL schema the test server executes: the part of W&B's API that wbmigrate and the
wandb SDK use, and the names it answers with."""

SDL = """
scalar JSONString
scalar JSON
scalar DateTime
enum ViewSource { WANDB_SDK WANDB_UI WANDB_UI_SHARE_PANEL WEAVE_UI }
enum AlertSeverity { INFO WARN ERROR }
enum TriggerScopeType { PROJECT ARTIFACT_COLLECTION ENTITY }
enum TriggeredActionType { NOTIFICATION GENERIC_WEBHOOK NO_OP QUEUE_JOB ARIA PUSH_NOTIFICATION }
enum EventTriggeringConditionType {
  RUN_METRIC RUN_METRIC_CHANGE RUN_METRIC_ZSCORE RUN_STATE CREATE_ARTIFACT ADD_ARTIFACT_ALIAS
  LINK_MODEL UNLINK_ARTIFACT ADD_ARTIFACT_TAG REMOVE_ARTIFACT_TAG ADD_COLLECTION_TAG
  REMOVE_COLLECTION_TAG UPDATE_ARTIFACT_ALIAS WEAVE_METRIC_THRESHOLD
}

type Query {
  viewer: User
  serverInfo: ServerInfo
  project(name: String, entityName: String): Project
  view(id: ID!): View
  entity(name: String!): Entity
  models(entityName: String, after: String, first: Int, order: String, anonymous: Boolean):
    ProjectConnection
}
type Mutation {
  upsertView(input: UpsertViewInput!): UpsertViewPayload
  updateFilterTrigger(input: UpdateFilterTriggerInput!): UpdateFilterTriggerPayload
  createFilterTrigger(input: CreateFilterTriggerInput!): CreateFilterTriggerPayload
}

type User { id: ID! name: String entity: String username: String email: String
            photoUrl: String flags: JSONString teams: EntityConnection admin: Boolean
            deletedAt: DateTime apiKeys: ApiKeyConnection }
type ApiKeyConnection { edges: [ApiKeyEdge!]! }
type ApiKeyEdge { node: ApiKey }
type ApiKey { id: ID! name: String! description: String }
type EntityConnection { edges: [EntityEdge!]! }
type EntityEdge { node: Entity }
type ServerInfo { features: [ServerFeature!]! cliVersionInfo: JSON }
type ServerFeature { name: String! isEnabled: Boolean! }
type PageInfo { endCursor: String hasNextPage: Boolean! startCursor: String
                hasPreviousPage: Boolean }

type Project {
  id: ID! internalId: ID name: String! entityName: String! createdAt: DateTime
  isBenchmark: Boolean readOnly: Boolean user: User
  allViews(viewType: String, viewName: String, userName: String, first: Int, after: String):
    ViewConnection
  triggers: [Trigger!]!
  runCount(filters: JSONString): Int
  runs(filters: JSONString, after: String, first: Int, order: String): RunConnection
  run(name: String!): Run
}
type ProjectConnection { edges: [ProjectEdge!]! pageInfo: PageInfo! }
type ProjectEdge { node: Project cursor: String! }
type RunConnection { edges: [RunEdge!]! pageInfo: PageInfo! }
type RunEdge { node: Run cursor: String! }
type Run {
  id: ID! projectId: Int name: String! displayName: String state: String createdAt: DateTime
  heartbeatAt: DateTime historyLineCount: Int summaryMetrics: JSONString config: JSONString
  systemMetrics: JSONString historyKeys(format: String): JSON tags: [String!] group: String
  jobType: String sweepName: String commit: String readOnly: Boolean description: String
  notes: String user: User
}
type ViewConnection { edges: [ViewEdge!]! pageInfo: PageInfo! }
type ViewEdge { node: View cursor: String! }
type View {
  id: ID! name: String type: String displayName: String description: String spec: JSONString
  updatedAt: DateTime createdAt: DateTime parentId: ID user: User project: Project
  entityName: String projectName: String
}
input UpsertViewInput {
  id: ID entityName: String projectName: String name: String displayName: String
  description: String type: String spec: String parentId: ID locked: Boolean
  coverUrl: String previewUrl: String createdUsing: ViewSource clientMutationId: String
}
type UpsertViewPayload { view: View inserted: Boolean }

type Entity {
  id: ID! name: String! entityType: String
  projects(first: Int, after: String, order: String): ProjectConnection
  triggers(after: String, first: Int, order: String, filters: JSONString): TriggerConnection
}
type TriggerConnection { edges: [TriggerEdge!]! pageInfo: PageInfo! }
type TriggerEdge { node: Trigger cursor: String! }
type Trigger {
  id: ID! createdAt: DateTime! updatedAt: DateTime name: String! description: String
  enabled: Boolean! scope: TriggerScope! triggeringCondition: TriggeringCondition!
  triggeredAction: TriggeredAction!
}
union TriggerScope = Project | ArtifactPortfolio | ArtifactSequence | Entity
type ArtifactPortfolio { id: ID! name: String! }
type ArtifactSequence { id: ID! name: String! }
union TriggeringCondition = FilterEventTriggeringCondition
type FilterEventTriggeringCondition {
  eventType: EventTriggeringConditionType! filter: JSONString!
}
union TriggeredAction = NotificationTriggeredAction | GenericWebhookTriggeredAction
  | NoOpTriggeredAction | QueueJobTriggeredAction | ARIATriggeredAction
union Integration = SlackIntegration | GenericWebhookIntegration
type SlackIntegration { id: ID! teamName: String! channelName: String! }
type GenericWebhookIntegration { id: ID! name: String! urlEndpoint: String! }
type NotificationTriggeredAction { integration: Integration! title: String message: String
                                  severity: AlertSeverity }
type GenericWebhookTriggeredAction { integration: Integration! requestPayload: JSONString }
type NoOpTriggeredAction { noOp: Boolean }
type RunQueue { id: ID! name: String! }
type QueueJobTriggeredAction { queue: RunQueue template: JSONString }
type ARIATriggeredAction { prompt: String }

input UpdateFilterTriggerInput {
  id: ID! name: String description: String enabled: Boolean scopeType: TriggerScopeType
  scopeID: ID triggeringEventType: EventTriggeringConditionType eventFilter: JSONString
  triggeredActionType: TriggeredActionType triggeredActionConfig: TriggeredActionConfig
  clientMutationId: String
}
input TriggeredActionConfig {
  notificationActionInput: NotificationActionInput
  genericWebhookActionInput: GenericWebhookActionInput
  noOpActionInput: NoOpTriggeredActionInput
  ariaActionInput: ARIAActionInput
  queueJobActionInput: QueueJobActionInput
}
input NotificationActionInput { integrationID: ID! title: String message: String
                                severity: AlertSeverity }
input GenericWebhookActionInput { integrationID: ID! requestPayload: JSONString }
input NoOpTriggeredActionInput { noOp: Boolean }
input ARIAActionInput { prompt: String! }
input QueueJobActionInput { queueID: ID! template: String! }
type UpdateFilterTriggerPayload { trigger: Trigger }
input CreateFilterTriggerInput {
  name: String! description: String enabled: Boolean! scopeType: TriggerScopeType! scopeID: ID!
  triggeringEventType: EventTriggeringConditionType! eventFilter: JSONString!
  triggeredActionType: TriggeredActionType! triggeredActionConfig: TriggeredActionConfig!
  clientMutationId: String
}
type CreateFilterTriggerPayload { trigger: Trigger }
"""

ACTION_TYPES = {
    "NOTIFICATION": "NotificationTriggeredAction",
    "GENERIC_WEBHOOK": "GenericWebhookTriggeredAction",
    "NO_OP": "NoOpTriggeredAction",
    "ARIA": "ARIATriggeredAction",
    "QUEUE_JOB": "QueueJobTriggeredAction",
}
# The integration an action's input names (`integrationID`), by the action's input.
INTEGRATIONS = {
    "notificationActionInput": {
        "__typename": "SlackIntegration",
        "teamName": "",
        "channelName": "",
    },
    "genericWebhookActionInput": {
        "__typename": "GenericWebhookIntegration",
        "name": "",
        "urlEndpoint": "",
    },
}
# Each action's input (`TriggeredActionConfig`) and the fields of the action it sets.
ACTION_INPUTS = {
    "notificationActionInput": ("title", "message", "severity"),
    "genericWebhookActionInput": ("requestPayload",),
    "noOpActionInput": ("noOp",),
    "ariaActionInput": ("prompt",),
    "queueJobActionInput": ("template",),
}

PERMISSION = "PERMISSION_ERROR"  # W&B's code for a refusal, answered with HTTP 403
