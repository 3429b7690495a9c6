"""Run sets: sort keys are a key list (dual mode keeps the old entry and adds the new one after
it); the legacy single `sort.key` holds one key. Config keys go through the same rules, spelt
as W&B spells them; grouped-run colour keys follow their grouping; several old columns merged
into one take the settings of the one shown. W&B's own SDK reads the results back."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from helpers import FIXTURES

from wbmigrate import find_mapping
from wbmigrate.edit.edits import materialize
from wbmigrate.engine.model import ChangeAction, Mode, NoteKind, Options
from wbmigrate.engine.runsets import URI_SAFE, report_colours, walk_runset, workspace_colours
from wbmigrate.engine.walk import Walk
from wbmigrate.mapping.load import load_mapping
from wbmigrate.plan import Source
from wbmigrate.verify import Check, verify_one

MIGRATION = find_mapping("prime-rl").migration()
DUAL, REPLACE = Mode.DUAL, Mode.REPLACE
# wandb_workspaces' models use pydantic's deprecated validators
sdk = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def walk(runset: dict, mode: Mode) -> tuple[dict, Walk]:
    w = Walk(MIGRATION, Options(mode=mode))
    walk_runset(w, (), runset)
    return materialize(runset, w.edits), w


def sorted_by(*entries: tuple[str, str, bool]) -> dict:
    """A run set sorted by `(section, name, ascending)` entries, in order."""
    keys = [{"key": {"section": s, "name": n}, "ascending": a} for s, n, a in entries]
    return {"name": "Run set", "sort": {"keys": keys}}


def check_transformed(before: dict, after: dict, mode: Mode) -> None:
    result, _ = walk(before, mode)
    assert result == after
    again, w = walk(result, mode)  # a second rewrite changes nothing
    assert (again, w.changes) == (result, [])


def check_noop(before: dict, mode: Mode) -> None:
    result, w = walk(before, mode)
    assert (result, w.changes) == (before, [])


MAX = ("summary", "off_policy/max", False)
NEW_MAX = ("summary", "staleness/rollout/max", False)
MEAN = ("summary", "off_policy/mean", True)
NEW_MEAN = ("summary", "staleness/rollout/mean", True)
CREATED = ("run", "createdAt", False)
GAUGE = ("summary", "dispatcher/off_policy/mean", True)


@pytest.mark.parametrize(
    ("before", "after", "mode"),
    [
        (sorted_by(MAX, CREATED), sorted_by(MAX, NEW_MAX, CREATED), DUAL),
        (
            sorted_by(("keys_info", "off_policy/mean", True)),
            sorted_by(("keys_info", "off_policy/mean", True),
                      ("keys_info", "staleness/rollout/mean", True)),
            DUAL,
        ),
        (sorted_by(MEAN, MAX), sorted_by(MEAN, NEW_MEAN, MAX, NEW_MAX), DUAL),
        (
            sorted_by(MAX, ("summary", "off_policy/token/max", False)),
            sorted_by(MAX, NEW_MAX, ("summary", "off_policy/token/max", False)),
            DUAL,
        ),
        (sorted_by(MAX, CREATED), sorted_by(NEW_MAX, CREATED), REPLACE),
        (sorted_by(MEAN, NEW_MEAN, CREATED), sorted_by(NEW_MEAN, CREATED), REPLACE),
        (sorted_by(GAUGE, CREATED), sorted_by(CREATED), REPLACE),
        (
            {"name": "Old", "sort": {"key": {"section": "summary", "name": "off_policy/mean"}}},
            {"name": "Old", "sort": {"key": {"section": "summary",
                                             "name": "staleness/rollout/mean"}}},
            DUAL,
        ),
    ],
    ids=["dual-adds-after-old", "dual-keeps-section-and-direction", "dual-two-old-keys",
         "dual-two-old-keys-one-new-key", "replace-renames-in-place",
         "replace-drops-old-when-new-listed", "replace-drops-removed-key", "legacy-one-key"],
)  # fmt: skip
def test_transformed(before, after, mode):
    check_transformed(before, after, mode)


@pytest.mark.parametrize(
    ("before", "mode"),
    [
        (sorted_by(MEAN, NEW_MEAN), DUAL),
        (sorted_by(GAUGE, CREATED), DUAL),
        (sorted_by(("config", "off_policy/mean", True)), DUAL),
        (sorted_by(("config", "off_policy/mean", True)), REPLACE),
        (sorted_by(("tags", "off_policy/max", True)), REPLACE),
        (sorted_by(NEW_MAX, CREATED), REPLACE),
        ({"name": "Odd", "sort": {"keys": ["off_policy/max", {"key": "off_policy/max"}]}}, DUAL),
    ],
    ids=["dual-new-key-already-listed", "dual-keeps-removed-key", "config-section-dual",
         "config-section-replace", "tags-section", "already-new", "malformed-entries"],
)  # fmt: skip
def test_noop(before, mode):
    check_noop(before, mode)


def test_dual_records_an_added_key_at_the_old_entry_without_a_history_warning():
    _, w = walk(sorted_by(CREATED, MAX), DUAL)
    [change] = w.changes
    assert (change.action, change.pointer, change.old, change.new, change.field) == (
        ChangeAction.ADDED,
        "/sort/keys/1",
        "off_policy/max",
        "staleness/rollout/max",
        "sort.keys[1]",
    )
    assert w.notes == []


def test_dual_keeps_a_removed_key_with_an_info_note():
    _, w = walk(sorted_by(GAUGE), DUAL)
    [note] = w.notes
    assert (note.kind, note.pointer) == (NoteKind.INFO, "/sort/keys/0")
    assert "kept for runs from before the boundary" in note.message


def test_replace_records_a_removed_key():
    _, w = walk(sorted_by(GAUGE, CREATED), REPLACE)
    [change] = w.changes
    assert (change.action, change.pointer) == (ChangeAction.REMOVED, "/sort/keys/0")


def test_the_legacy_single_key_still_warns_that_it_hides_history():
    _, w = walk({"sort": {"key": {"section": "summary", "name": "off_policy/max"}}}, DUAL)
    assert [n.kind for n in w.notes] == [NoteKind.WARNING]
    assert [c.action for c in w.changes] == [ChangeAction.RENAMED]


# --- filters: (old OR new) in dual mode -----------------------------------------------------


def leaf(name: str, section: str = "summary", **extra) -> dict:
    return {"key": {"section": section, "name": name}, "op": ">=", "value": 0.1, **extra}


def v2(*items: dict) -> dict:
    return {"name": "Filtered", "filters": {"filterFormat": "filterV2", "filters": list(items)}}


def legacy(tree: dict) -> dict:
    return {"name": "Filtered", "filters": tree}


def either(old: dict, new: dict, **connector) -> dict:
    """W&B's v2 group `(old OR new)`, joined to what comes before it by `connector`."""
    return {"filters": [old, {**new, "connector": "OR"}], **connector}


OLD_MEAN, NEW_MEAN_LEAF = leaf("off_policy/mean"), leaf("staleness/rollout/mean")
OLD_CONFIG = leaf("orchestrator.max_off_policy_steps", "config")
NEW_CONFIG = leaf("orchestrator.max_staleness", "config")
STATE = {"key": {"section": "run", "name": "state"}, "op": "=", "value": "finished"}
AND_STATE = {**STATE, "connector": "AND"}


@pytest.mark.parametrize(
    ("before", "after", "mode"),
    [
        (v2(OLD_MEAN, AND_STATE), v2(either(OLD_MEAN, NEW_MEAN_LEAF), AND_STATE), DUAL),
        (v2(STATE, {**OLD_MEAN, "connector": "AND", "disabled": True}),
         v2(STATE, either({**OLD_MEAN, "disabled": True}, {**NEW_MEAN_LEAF, "disabled": True},
                          connector="AND")), DUAL),
        (v2(OLD_CONFIG), v2(either(OLD_CONFIG, NEW_CONFIG)), DUAL),
        (v2({"filters": [STATE, {**OLD_MEAN, "connector": "OR"}], "connector": "AND"}),
         v2({"filters": [STATE, {**OLD_MEAN, "connector": "OR"},
                         {**NEW_MEAN_LEAF, "connector": "OR"}], "connector": "AND"}), DUAL),
        (legacy({"op": "OR", "filters": [{"op": "AND", "filters": [OLD_MEAN, STATE]}]}),
         legacy({"op": "OR", "filters": [{"op": "AND", "filters": [
             {"op": "OR", "filters": [OLD_MEAN, NEW_MEAN_LEAF]}, STATE]}]}), DUAL),
        (legacy({"op": "OR", "filters": [OLD_MEAN]}),
         legacy({"op": "OR", "filters": [OLD_MEAN, NEW_MEAN_LEAF]}), DUAL),
        (v2(OLD_MEAN, AND_STATE), v2(NEW_MEAN_LEAF, AND_STATE), REPLACE),
        (v2(either(OLD_MEAN, NEW_MEAN_LEAF), AND_STATE),
         v2({"filters": [{**NEW_MEAN_LEAF, "connector": "OR"}]}, AND_STATE), REPLACE),
        (legacy({"op": "OR", "filters": [{"op": "AND", "filters": [OLD_MEAN]}]}),
         legacy({"op": "OR", "filters": [{"op": "AND", "filters": [NEW_MEAN_LEAF]}]}), REPLACE),
    ],
    ids=["v2-top-level-metric", "v2-keeps-connector-and-disabled", "v2-config-key",
         "v2-or-group-gets-a-sibling", "legacy-leaf-under-and", "legacy-leaf-under-or",
         "replace-renames", "replace-drops-the-old-half-of-a-pair", "legacy-replace"],
)  # fmt: skip
def test_filters(before, after, mode):
    check_transformed(before, after, mode)


@pytest.mark.parametrize(
    ("before", "mode"),
    [
        (v2(either(OLD_MEAN, NEW_MEAN_LEAF), AND_STATE), DUAL),
        (legacy({"op": "AND", "filters": [{"op": "OR", "filters": [OLD_MEAN, NEW_MEAN_LEAF]}]}),
         DUAL),
        (v2(leaf("off_policy/mean", "tags")), DUAL),
        (v2(leaf("off_policy/mean", "config")), DUAL),
    ],
    ids=["v2-pair-already-there", "legacy-pair-already-there", "tags-section",
         "config-section-metric-name"],
)  # fmt: skip
def test_filters_noop(before, mode):
    check_noop(before, mode)


def test_a_filter_companion_is_one_added_change_at_the_name_without_a_history_warning():
    _, w = walk(v2(AND_STATE, {**OLD_MEAN, "connector": "AND"}), DUAL)
    [change] = w.changes
    assert (change.action, change.pointer, change.old, change.new, change.field) == (
        ChangeAction.ADDED,
        "/filters/filters/1/key/name",
        "off_policy/mean",
        "staleness/rollout/mean",
        "filters[1]",
    )
    assert w.notes == []


@pytest.mark.parametrize(
    ("before", "renamed", "why"),
    [
        (v2({"filters": [STATE, {**OLD_MEAN, "connector": "AND"}]}),
         v2({"filters": [STATE, {**NEW_MEAN_LEAF, "connector": "AND"}]}),
         "in a group not joined by OR"),
        (legacy({"op": "OR", "filters": [{"op": "AND", "filters": [
             {"op": "OR", "filters": [{"op": "AND", "filters": [OLD_MEAN, STATE]}, STATE]}]}]}),
         legacy({"op": "OR", "filters": [{"op": "AND", "filters": [
             {"op": "OR", "filters": [{"op": "AND", "filters": [NEW_MEAN_LEAF, STATE]},
                                      STATE]}]}]}),
         "a group inside a group"),
    ],
    ids=["v2-and-group", "legacy-second-level-group"],
)  # fmt: skip
def test_a_filter_that_cannot_get_a_companion_is_renamed_with_a_warning_saying_why(
    before, renamed, why
):
    result, w = walk(before, DUAL)
    assert result == renamed
    [warning] = w.notes
    assert warning.kind is NoteKind.WARNING
    assert why in warning.message
    assert "runs from before the boundary" in warning.message
    check_noop(result, DUAL)


def test_a_filter_on_a_removed_key_stays_for_review():
    for mode in (DUAL, REPLACE):
        before = v2(leaf("dispatcher/off_policy/mean"), AND_STATE)
        result, w = walk(before, mode)
        assert (result, w.changes) == (before, [])
        assert [n.kind for n in w.notes] == [NoteKind.REVIEW]


@sdk
@pytest.mark.parametrize(
    ("before", "read"),
    [
        (v2(OLD_MEAN, AND_STATE),
         'SummaryMetric("off_policy/mean") >= 0.1'
         ' or SummaryMetric("staleness/rollout/mean") >= 0.1'),
        (legacy({"op": "OR", "filters": [{"op": "AND", "filters": [OLD_CONFIG, STATE]}]}),
         'Config("orchestrator.max_off_policy_steps") >= 0.1'
         ' or Config("orchestrator.max_staleness") >= 0.1'),
    ],
    ids=["v2", "legacy"],
)  # fmt: skip
def test_the_sdk_reads_old_or_new(before, read):
    from wandb_workspaces import expr

    result, _ = walk(before, DUAL)
    filters = result["filters"]
    v2_form = (
        filters
        if expr.is_filter_v2(filters)
        else expr.filters_tree_to_v2(expr.Filters.model_validate(filters))
    )
    assert expr.filters_v2_to_string(v2_form) == f"({read}) and Metric(\"State\") == 'finished'"


# --- config keys ----------------------------------------------------------------------------

OLD_COLUMN, NEW_COLUMN = (
    "config:orchestrator.value.max_off_policy_steps",
    "config:orchestrator.value.max_staleness",
)


def config_runset(name: str, column: str = OLD_COLUMN, section: str = "config") -> dict:
    """A run set filtered, sorted and grouped by a config key `name`, with a `column`."""
    key = {"section": section, "name": name}
    return {
        "name": "Config",
        "filters": {"filterFormat": "filterV2", "filters": [{"key": key, "op": ">=", "value": 4}]},
        "grouping": [key],
        "sort": {"keys": [{"key": key, "ascending": True}]},
        "runFeed": {"columnVisible": {column: True}, "columnOrder": [column]},
    }


def keys_of(runset: dict) -> tuple:
    feed = runset["runFeed"]
    return (
        [
            f["key"]["name"]
            for item in runset["filters"]["filters"]
            for f in item.get("filters", [item])
        ],  # a group (old OR new): its leaves
        [g["name"] for g in runset["grouping"]],
        [k["key"]["name"] for k in runset["sort"]["keys"]],
        list(feed["columnVisible"]),
        feed["columnOrder"],
    )


FLAT_OLD, FLAT_NEW = "orchestrator.max_off_policy_steps.value", "orchestrator.max_staleness.value"
STANDALONE = ("max_off_policy_steps", "config:max_off_policy_steps.value")


@pytest.mark.parametrize(
    ("name", "column", "mode", "expected"),
    [
        ("orchestrator.max_off_policy_steps", OLD_COLUMN, DUAL, (
            ["orchestrator.max_off_policy_steps", "orchestrator.max_staleness"],
            ["orchestrator.max_staleness"],
            ["orchestrator.max_off_policy_steps", "orchestrator.max_staleness"],
            [OLD_COLUMN, NEW_COLUMN], [OLD_COLUMN, NEW_COLUMN])),
        ("orchestrator.value.max_off_policy_steps", OLD_COLUMN, REPLACE, (
            ["orchestrator.value.max_staleness"], ["orchestrator.value.max_staleness"],
            ["orchestrator.value.max_staleness"], [NEW_COLUMN], [NEW_COLUMN])),
        (FLAT_OLD, f"config:{FLAT_OLD}", REPLACE, (
            [FLAT_NEW], [FLAT_NEW], [FLAT_NEW], [f"config:{FLAT_NEW}"], [f"config:{FLAT_NEW}"])),
        (*STANDALONE, REPLACE, (
            ["max_staleness"], ["max_staleness"], ["max_staleness"],
            ["config:max_staleness.value"], ["config:max_staleness.value"])),
    ],
    ids=["sdk-shapes-dual", "value-after-first-part-replace", "flat-dotted-key-replace",
         "standalone-orchestrator-key"],
)  # fmt: skip
def test_config_keys_are_renamed_as_w_and_b_spells_them(name, column, mode, expected):
    result, _ = walk(config_runset(name, column), mode)
    assert keys_of(result) == expected
    check_noop(result, mode)  # a second rewrite changes nothing


def test_every_renamed_config_key_is_found_as_w_and_b_spells_a_nested_one():
    """`a.value.b` for each config rename, not the first alone (the mapping's second here)."""
    migration = load_mapping(FIXTURES / "mappings/valid/deprecated-config.yaml").migration()
    w = Walk(migration, Options(mode=REPLACE))
    walk_runset(w, (), config_runset("orchestrator.max_off_policy_steps"))
    assert [c.new for c in w.changes if c.field.startswith("runFeed")] == [NEW_COLUMN] * 2


@pytest.mark.parametrize(
    ("name", "column", "section"),
    [
        ("orchestrator.max_off_policy_steps_hint",
         "config:orchestrator.value.max_off_policy_steps_hint", "config"),
        ("trainer.orchestrator.max_off_policy_steps",
         "config:trainer.value.orchestrator.max_off_policy_steps", "config"),
        ("orchestrator.max_off_policy_steps",
         "summary:orchestrator.max_off_policy_steps", "summary"),
        ("orchestrator.async_level", "config:orchestrator.value.async_level", "config"),
    ],
    ids=["longer-name", "deeper-path", "summary-section", "other-config-key"],
)  # fmt: skip
def test_config_keys_that_are_not_renamed(name, column, section):
    for mode in (DUAL, REPLACE):
        check_noop(config_runset(name, column, section), mode)


def test_config_key_changes_ask_nothing_of_the_metric_census():
    _, w = walk(config_runset("orchestrator.max_off_policy_steps"), DUAL)
    assert w.changes
    assert w.shown == []


# --- two old columns, one new column ----------------------------------------------------------

TOKEN_MAX, NEW_MAX_COLUMN = "summary:off_policy/token/max", "summary:staleness/rollout/max"


def feed(visible: dict, order: list, pinned: dict | None = None, widths: dict | None = None):
    return {
        "name": "Table",
        "runFeed": {
            "columnVisible": visible,
            "columnPinned": pinned or {},
            "columnWidths": widths or {},
            "columnOrder": order,
        },
    }


@pytest.mark.parametrize("mode", [DUAL, REPLACE])
@pytest.mark.parametrize(
    ("before", "visible", "pinned", "width", "listed"),
    [
        (feed({TOKEN_MAX: False, "summary:off_policy/max": True}, ["summary:off_policy/max"],
              {TOKEN_MAX: True}, {TOKEN_MAX: 300, "summary:off_policy/max": 120}),
         True, None, 120, True),
        (feed({TOKEN_MAX: True, "summary:off_policy/max": False}, [TOKEN_MAX], {TOKEN_MAX: True}),
         True, True, None, True),
        (feed({TOKEN_MAX: False, "summary:off_policy/max": False}, [], {}, {TOKEN_MAX: 90}),
         False, None, 90, False),
    ],
    ids=["shown-one-unpinned", "shown-one-pinned", "none-shown-first-wins"],
)  # fmt: skip
def test_merged_columns_take_the_settings_of_the_one_shown(
    before, visible, pinned, width, listed, mode
):
    result, w = walk(before, mode)
    new = result["runFeed"]
    assert (new["columnVisible"].get(NEW_MAX_COLUMN), new["columnPinned"].get(NEW_MAX_COLUMN)) == (
        visible,
        pinned,
    )
    assert (new["columnWidths"].get(NEW_MAX_COLUMN), NEW_MAX_COLUMN in new["columnOrder"]) == (
        width,
        listed,
    )
    # the SDK's rule: a column listed in columnOrder is never hidden
    assert all(new["columnVisible"].get(c) is not False for c in new["columnOrder"])
    [warning] = [n for n in w.notes if n.kind is NoteKind.WARNING]
    assert warning.pointer == "/runFeed"
    assert "all become summary:staleness/rollout/max" in warning.message
    check_noop(result, mode)


# --- grouped-run colours: what W&B's SDK reads back ------------------------------------------

CASES = FIXTURES / "cases"


def case_spec(kind: str, name: str, which: str) -> dict:
    return json.loads((CASES / kind / name / f"{which}.json").read_text())


@sdk
@pytest.mark.parametrize("name", ["runset-group-colors", "runset-group-colors-replace"])
def test_the_sdk_reads_a_workspace_s_group_colours_for_the_renamed_grouping(name):
    from wandb_workspaces import workspaces as ws
    from wandb_workspaces.workspaces import internal

    def read(which: str):
        spec = internal.WorkspaceViewspec.model_validate(case_spec("workspace", name, which))
        view = internal.View(entity="e", project="p", display_name="d", name="n", id="i", spec=spec)
        return ws.Workspace._from_model(view).runset_settings

    before, after = read("before"), read("after")
    assert [g.name for g in after.groupby] == [
        "orchestrator.max_staleness",
        "staleness/rollout/max",
    ]
    assert after.group_colors == before.group_colors
    assert len(after.group_colors) == 3


@sdk
@pytest.mark.parametrize("name", ["runset-group-colors", "runset-group-colors-replace"])
def test_the_sdk_reads_a_report_grid_s_group_colours_for_the_renamed_grouping(name):
    import wandb_workspaces.reports.v2 as wr
    from wandb_workspaces.reports.v2 import internal

    block = case_spec("report", name, "after")["blocks"][0]
    grid = wr.PanelGrid._from_model(internal.PanelGrid.model_validate(block))
    groups = [k for k in grid.custom_run_colors if isinstance(k, wr.RunsetGroup)]
    assert {tuple(key.key.name for key in group.keys) for group in groups} >= {
        ("orchestrator.max_staleness", "staleness/rollout/max"),
        ("orchestrator.max_staleness",),
    }
    assert grid.runsets[0].groupby == [
        "config.orchestrator.value.max_staleness",
        "summary.staleness/rollout/max",
    ]


# --- verify: nothing of the above left behind --------------------------------------------------

VERIFIED_CASES = [
    ("report", "runset-config-keys"),
    ("report", "runset-group-colors"),
    ("workspace", "runset-group-colors"),
    ("report", "runset-merged-columns"),
    ("report", "runset-filters-v2"),
    ("report", "runset-filters-v2-group"),
    ("report", "runset-filters-legacy"),
]


@pytest.mark.parametrize("mode", [DUAL, REPLACE])
@pytest.mark.parametrize(("kind", "name"), VERIFIED_CASES)
def test_verify_fails_until_run_set_keys_and_colours_are_migrated(kind, name, mode):
    case = f"{name}-replace" if mode is REPLACE else name
    options = Options(mode=mode, annotate=False)

    def left(which: str) -> list[Check]:
        text = json.dumps(case_spec(kind, case, which))
        verified = verify_one(Source(case, f"{case}.json", text), MIGRATION, options)
        return [f.check for f in verified.findings]

    assert left("before")
    assert set(left("before")) == {Check.OLD_NAME_LEFT}
    assert left("after") == []


def colour_walk(kind: str, colours: dict, mode: Mode) -> dict:
    w = Walk(MIGRATION, Options(mode=mode))
    if kind == "workspace":
        workspace_colours(w, (), colours)
    else:
        report_colours(w, (), colours, [{"id": "rs1"}, "not a run set"])
    return materialize(colours, w.edits)


def group_key(*keys: str) -> str:
    """A workspace colour key as wandb_workspaces builds it (`build_run_color_group_key`)."""
    path = [{"kind": "group", "key": key, "value": "2"} for key in keys]
    return f"{GROUP}{quote(json.dumps(path, separators=(',', ':')), safe=URI_SAFE)}"


GROUP = "run-color-group:%22rs1%22:"
OLD_GROUP, NEW_GROUP = (
    group_key("summary:off_policy/max"),
    group_key("summary:staleness/rollout/max"),
)


@pytest.mark.parametrize(
    ("kind", "before", "mode", "after"),
    [
        ("workspace", {OLD_GROUP: "#111"}, DUAL, {NEW_GROUP: "#111"}),
        ("workspace", {OLD_GROUP: "#111", NEW_GROUP: "#222"}, REPLACE, {NEW_GROUP: "#222"}),
        ("workspace", {GROUP + "%5Bnot%20json": "#111", "run1": "#222"}, REPLACE,
         {GROUP + "%5Bnot%20json": "#111", "run1": "#222"}),
        ("report", {"rs1-summary_metrics.off_policy/max:2": "#111"}, REPLACE,
         {"rs1-summary_metrics.staleness/rollout/max:2": "#111"}),
        ("report", {"rs1-off_policy/max:2-off_policy/mean:3": "#111"}, REPLACE,
         {"rs1-staleness/rollout/max:2-staleness/rollout/mean:3": "#111"}),
        ("report", {"rs2-summary_metrics.off_policy/max:2": "#111"}, REPLACE,
         {"rs2-summary_metrics.off_policy/max:2": "#111"}),
        ("report", {"rs1-summary_metrics.eval/off_policy/max:2": "#111", "rs1-abc": "#222"},
         REPLACE, {"rs1-summary_metrics.eval/off_policy/max:2": "#111", "rs1-abc": "#222"}),
    ],
    ids=["workspace-dual", "workspace-replace-new-colour-kept", "workspace-not-a-group",
         "report-replace", "report-two-levels-one-key", "report-other-run-set",
         "report-whole-names-and-run-ids"],
)  # fmt: skip
def test_group_colour_keys(kind, before, mode, after):
    assert colour_walk(kind, before, mode) == after
    assert colour_walk(kind, after, mode) == after  # a second rewrite changes nothing
