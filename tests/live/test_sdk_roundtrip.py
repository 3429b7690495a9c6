"""The proof against the real thing: a report, a saved workspace and automations built with W&B's
own builders (`wandb_workspaces` and `wandb.automations`), naming the old prime-rl keys, saved
to the local test server by the SDK, migrated by `wbmigrate apply` in each mode, read back by
the SDK (`Report.from_url`, `Workspace.from_url`, `api.automations`) and rolled back.

One server per module: the SDK builds and saves everything once; each mode starts from those
originals, applies, and reads everything back once; the cases below assert on what was read.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import MIGRATION, TARGET, sdk_environment
from wandb_workspaces import expr

from testserver import WandbServer, WandbState
from wbmigrate.cli import cli

# W&B's SDKs use pydantic's V1 validators and read their own deprecated fields (a warning
# each, which the suite would turn into an error inside the SDK).
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SLACK = "SW50ZWdyYXRpb246MQ=="
HOOK = "SW50ZWdyYXRpb246Mg=="
MARKER = "wbmigrate:prime-rl@2026.10.25"
# The automations the SDK reads back. It cannot read a queue-job one: it always leaves that
# action's fragment out of its query (wandb/automations/_compat.py), so the action comes back
# `{}` and the whole listing fails to parse; that one is checked as the server stores it.
SDK_AUTOMATIONS = ("threshold-slack", "change-webhook", "zscore-noop")
OLD_CONFIG = "config:orchestrator.value.max_off_policy_steps"
NEW_CONFIG = "config:orchestrator.value.max_staleness"
# Run-set filters on an old metric and an old config key, as `expr` writes them (it saves
# `>` as `>=`, so the filters say `>=` from the start).
FILTERS = [
    expr.Summary("off_policy/mean") >= 1,
    expr.Config("orchestrator.max_off_policy_steps") >= 4,
]


@dataclass
class Saved:
    """What the SDK saved and what the server holds: ids and URLs, and the originals."""

    server: WandbServer
    report_url: str
    workspace_url: str
    views: dict[str, dict[str, Any]]  # id -> the stored view, as saved
    triggers: dict[str, dict[str, Any]]  # id -> the stored trigger, as saved


@dataclass
class Migrated:
    """One mode's apply and what the SDK and the server show after it."""

    mode: str
    saved: Saved
    apply: Any  # click's Result
    replan: Any
    report: Any  # wandb_workspaces Report
    workspace: Any  # wandb_workspaces Workspace
    automations: dict[str, Any]  # name -> wandb.automations.Automation
    views: dict[str, dict[str, Any]]
    triggers: dict[str, dict[str, Any]]
    backups: Path


# --- the objects, built with W&B's own builders ----------------------------------------------


def build_report() -> Any:
    """A report of one panel grid: a line plot with per-series overrides and a config group-by,
    a bar chart whose overrides are keyed by bare metric names, a run set grouped by a config
    key whose table shows that key, one old key and hides another with the same successor,
    and a run set grouped by a summary metric; group colours for both groupings. The first
    run set filters on an old metric and an old config key."""
    import wandb_workspaces.reports.v2 as wr

    by_steps = wr.Runset(
        entity="team",
        project="async-rl",
        name="By max steps",
        groupby=["config.orchestrator.max_off_policy_steps"],
        filters=FILTERS,
        pinned_columns=["run:displayName"],
        visible_columns=[OLD_CONFIG, "summary:off_policy/max"],
        hidden_columns=["summary:off_policy/token/max"],
        column_widths={OLD_CONFIG: 150, "summary:off_policy/max": 120},
    )
    by_staleness = wr.Runset(
        entity="team", project="async-rl", name="By staleness", groupby=["summary.off_policy/max"]
    )
    line, bar = build_panels()
    colours = {
        group("By max steps", wr.Config("orchestrator.max_off_policy_steps"), "4"): "#4E79A7",
        group("By staleness", wr.SummaryMetric("off_policy/max"), "2"): "#F28E2B",
    }
    grid = wr.PanelGrid(
        runsets=[by_steps, by_staleness], panels=[line, bar], custom_run_colors=colours
    )
    return wr.Report(
        project="async-rl",
        entity="team",
        title="SDK health",
        blocks=[wr.H1("Rollout health"), grid],
    )


def build_panels() -> tuple[Any, Any]:
    """A line plot on two old keys, grouped by the old config key, with per-run series
    overrides; a bar chart with overrides keyed by bare metric names (as BarPlot writes them)."""
    import wandb_workspaces.reports.v2 as wr

    line = wr.LinePlot(
        title="Rollouts",
        y=["off_policy/mean", "off_policy/max"],
        groupby=wr.Config("orchestrator.max_off_policy_steps"),
        line_titles={"grpo-old-1:off_policy/mean": "Mean (old build)"},
        line_colors={"grpo-old-1:off_policy/mean": "#E15759"},
    )
    bar = wr.BarPlot(
        title="Drops",
        metrics=["off_policy/dropped", "off_policy/token/mean"],
        line_titles={"off_policy/dropped": "Dropped"},
        line_colors={"off_policy/dropped": "#76B7B2"},
    )
    return line, bar


def group(runset: str, key: Any, value: str) -> Any:
    import wandb_workspaces.reports.v2 as wr

    return wr.RunsetGroup(runset, (wr.RunsetGroupKey(key, value),))


def build_workspace() -> Any:
    """A saved workspace of two sections (the same line plot and bar chart), its run set
    grouped by the config key, with group colours and the config key's column pinned, and
    filtered on an old metric and an old config key."""
    import wandb_workspaces.workspaces as ws
    from wandb_workspaces import expr

    line, bar = build_panels()
    return ws.Workspace(
        entity="team",
        project="async-rl",
        name="SDK staleness",
        sections=[
            ws.Section(name="Rollouts", panels=[line], is_open=True),
            ws.Section(name="Drops", panels=[bar]),
        ],
        runset_settings=ws.RunsetSettings(
            groupby=[expr.Config("orchestrator.max_off_policy_steps")],
            group_colors={"4": "#4E79A7", "8": "#F28E2B"},
            filters=FILTERS,
            pinned_columns=[OLD_CONFIG, "summary:off_policy/max"],
        ),
    )


def create_automations(api: Any, state: WandbState) -> None:
    """One automation per action type the SDK creates (notification, webhook, no-op), on a
    threshold, a change and a z-score filter; and a queue-job one, which the SDK reads but
    refuses to create (`INVALID_INPUT_ACTIONS`), stored as the SDK parses a saved one."""
    from wandb.automations import (
        DoNothing,
        OnRunMetric,
        ProjectScope,
        RunEvent,
        SendNotification,
        SendWebhook,
    )

    scope = ProjectScope(id=state.project_id, name=state.project)
    metric = RunEvent.metric
    grpo = RunEvent.name.contains("grpo")
    notify = SendNotification(
        integration_id=SLACK, title="Rollouts too stale", message="See SDK health.", severity="WARN"
    )
    threshold = OnRunMetric(scope=scope, filter=grpo & (metric("off_policy/max").max(5) > 24))
    api.create_automation(threshold >> notify, name="threshold-slack", description="max")
    rising = metric("off_policy/mean").avg(3).increases_by(frac=0.5)
    webhook = SendWebhook(integration_id=HOOK, request_payload={"text": "staleness rising"})
    change = OnRunMetric(scope=scope, filter=rising)
    api.create_automation(change >> webhook, name="change-webhook", description="mean")
    spike = OnRunMetric(scope=scope, filter=abs(metric("off_policy/in_queue/max").zscore(30)) > 3)
    api.create_automation(spike >> DoNothing(), name="zscore-noop", description="queue")
    made = next(iter(state.triggers.values()))
    token = made["triggeringCondition"]["filter"].replace("off_policy/max", "off_policy/token/mean")
    queue = {"id": "UnVuUXVldWU6MQ==", "name": "rl-retrain"}
    template = json.dumps({"job": "team/async-rl/job-retrain:latest", "config": {}})
    state.add_trigger(
        {
            "__typename": "Trigger",
            **{k: made[k] for k in ("createdAt", "enabled")},
            "name": "queue-job",
            "description": "token",
            "event": {**made["triggeringCondition"], "filter": token},
            "action": {
                "__typename": "QueueJobTriggeredAction",
                "queue": queue,
                "template": template,
            },
        }
    )


# --- the module's server, the SDK's session and each mode's run -------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Saved]:
    """The server, with everything the SDK built saved on it; the SDK's environment set."""
    home = tmp_path_factory.mktemp("sdk")
    state = WandbState()
    for name, day in [("grpo-old-1", "2026-10-20"), ("grpo-new-1", "2026-11-06")]:
        state.add_run(name, f"{day}T08:00:00Z", ["loss", "off_policy/mean", "off_policy/max"])
    with WandbServer(state) as server, pytest.MonkeyPatch.context() as env:
        server.integrations[SLACK] = {
            "__typename": "SlackIntegration",
            "id": SLACK,
            "teamName": "prime",
            "channelName": "#rl-alerts",
        }
        server.integrations[HOOK] = {
            "__typename": "GenericWebhookIntegration",
            "id": HOOK,
            "name": "pager",
            "urlEndpoint": "https://hooks.example.com/staleness",
        }
        environment = sdk_environment(home, server.url) | {"WANDB_API_KEY": server.api_key}
        for name, value in environment.items():
            env.setenv(name, value)
        env.delenv("NETRC", raising=False)
        env.chdir(home)
        import wandb

        report = build_report().save()
        workspace = build_workspace().save()
        api = wandb.Api(api_key=server.api_key, overrides={"base_url": server.url})
        create_automations(api, state)
        yield Saved(
            server,
            report.url,
            workspace.url,
            copy.deepcopy(state.views),
            copy.deepcopy(state.triggers),
        )


@pytest.fixture(scope="module")
def migrations(saved: Saved, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Each mode's run, made the first time a case asks for it and kept for the others."""
    made: dict[str, Migrated] = {}

    def migration(mode: str) -> Migrated:
        if mode not in made:
            made[mode] = migrate(saved, mode, tmp_path_factory.mktemp(f"backups-{mode}"))
        return made[mode]

    return migration


@pytest.fixture
def migrated(request: pytest.FixtureRequest, migrations: Any) -> Migrated:
    """The run of the mode the case is parametrized with."""
    run: Migrated = migrations(request.param)
    return run


def migrate(saved: Saved, mode: str, backups: Path) -> Migrated:
    """The originals back in place, `wbmigrate apply --mode MODE`, and everything read back;
    what the SDK cannot load is kept as the error it raised, for the cases that read it to
    fail on, one by one."""
    import wandb
    import wandb_workspaces.reports.v2 as wr
    import wandb_workspaces.workspaces as ws

    state = saved.server.state
    state.views, state.triggers = copy.deepcopy(saved.views), copy.deepcopy(saved.triggers)
    apply = wbmigrate("apply", TARGET, "--mode", mode, "--backup-dir", str(backups), "--yes")
    replan = wbmigrate("plan", TARGET, "--mode", mode, "--detailed-exitcode")
    api = wandb.Api(api_key=saved.server.api_key, overrides={"base_url": saved.server.url})
    return Migrated(
        mode,
        saved,
        apply,
        replan,
        attempt(wr.Report.from_url, saved.report_url),
        attempt(ws.Workspace.from_url, saved.workspace_url),
        {name: attempt(api.automation, name, entity="team") for name in SDK_AUTOMATIONS},
        copy.deepcopy(state.views),
        copy.deepcopy(state.triggers),
        backups,
    )


def attempt(load: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return load(*args, **kwargs)
    except Exception as error:  # the SDK's own errors, of many kinds
        return error


def wbmigrate(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), prog_name="wbmigrate", catch_exceptions=False)


def modes(only: str | None = None) -> Any:
    """Parametrize a case by mode: both, or `only` one."""
    params = [mode for mode in ("dual", "replace") if only in (None, mode)]
    return pytest.mark.parametrize("migrated", params, indirect=True)


def specs(migrated: Migrated, view_type: str) -> tuple[Any, Any]:
    """The spec of the one view of `view_type`, as saved and as migrated."""
    (view_id,) = [i for i, v in migrated.views.items() if v["type"] == view_type]
    before = json.loads(migrated.saved.views[view_id]["spec"])
    return before, json.loads(migrated.views[view_id]["spec"])


# The mapped names as they appear in spec strings: plain, in `config:` columns and URI-encoded
# inside workspace colour keys (where `/` is `%2F`).
OLD_NAMES = ("off_policy/", "off_policy%2F", "max_off_policy_steps")
NEW_NAMES = ("staleness/", "staleness%2F", "max_staleness")


def mentions(text: str) -> bool:
    return any(name in text for name in OLD_NAMES + NEW_NAMES)


def skeleton(value: Any) -> Any:
    """`value` without what a migration may change: entries whose key names a mapped key,
    list items that are one, and any other string naming one becomes `<key>`. Two specs with
    the same skeleton differ in mapped keys alone."""
    if isinstance(value, dict):
        return {k: skeleton(v) for k, v in value.items() if not mentions(k)}
    if isinstance(value, list):
        return [skeleton(v) for v in value if not (isinstance(v, str) and mentions(v))]
    if isinstance(value, str) and mentions(value):
        return "<key>"
    return value


def unpaired(value: Any) -> Any:
    """`value` with each run-set filter group (old OR new), which dual mode makes of a filter
    on an old key, back to its one filter: what is left differs from the original in keys
    alone."""
    if isinstance(value, dict):
        pair = value.get("filters")
        if "key" not in value and isinstance(pair, list) and len(pair) == 2:
            old, new = pair
            bare = {k: v for k, v in new.items() if k != "connector"}
            if new.get("connector") == "OR" and skeleton(old) == skeleton(bare):
                return {**old, **{k: v for k, v in value.items() if k == "connector"}}
        return {k: unpaired(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unpaired(v) for v in value]
    return value


def old_names(value: Any) -> list[str]:
    """Every key and string of `value` that still names an old key."""
    if isinstance(value, dict):
        return [k for k in value if any(n in k for n in OLD_NAMES)] + [
            s for v in value.values() for s in old_names(v)
        ]
    if isinstance(value, list):
        return [s for v in value for s in old_names(v)]
    return [value] if isinstance(value, str) and any(n in value for n in OLD_NAMES) else []


def dual(mode: str, old: list[Any], new: list[Any]) -> list[Any]:
    """A key list as each mode leaves it: dual keeps each old key with its new one right after
    it; replace has the new keys only."""
    if mode == "replace":
        return new
    return [key for pair in zip(old, new, strict=True) for key in pair]


def series_key(mode: str) -> str:
    """The line plot's per-series override key: `<runId>:<metric>`, which dual mode leaves (that
    old run only logged the old key) and replace mode renames."""
    return "grpo-old-1:" + ("off_policy/mean" if mode == "dual" else "staleness/rollout/mean")


def grid(report: Any) -> Any:
    (panel_grid,) = [b for b in report.blocks if type(b).__name__ == "PanelGrid"]
    return panel_grid


def panel(panels: list[Any], kind: str) -> Any:
    (found,) = [p for p in panels if type(p).__name__ == kind]
    return found


# --- every mode: apply succeeds, nothing is left to migrate, every object loads ---------------


@modes()
def test_apply_writes_every_object_and_leaves_nothing_to_migrate(migrated: Migrated) -> None:
    """Every object but the queue-job automation, which W&B's API takes no write of (the SDK
    refuses to: `INVALID_INPUT_ACTIONS`): it is planned for review, never failed at apply."""
    assert migrated.apply.exit_code == 0, migrated.apply.output
    assert "Summary: 5 applied." in migrated.apply.stdout
    assert migrated.replan.exit_code == 0, migrated.replan.output


@modes()
def test_every_object_loads_in_the_sdk(migrated: Migrated) -> None:
    from wandb.automations import Automation
    from wandb_workspaces.reports.v2 import Report
    from wandb_workspaces.workspaces import Workspace

    assert isinstance(migrated.report, Report)
    assert isinstance(migrated.workspace, Workspace)
    assert all(isinstance(a, Automation) for a in migrated.automations.values())
    assert sorted(migrated.automations) == sorted(SDK_AUTOMATIONS)


# --- the report ---------------------------------------------------------------------------


@modes()
def test_report_line_plot_shows_the_new_keys_where_the_old_were(migrated: Migrated) -> None:
    from wandb_workspaces.reports.v2 import Metric

    line = panel(grid(migrated.report).panels, "LinePlot")
    old = [Metric("off_policy/mean"), Metric("off_policy/max")]
    new = [Metric("staleness/rollout/mean"), Metric("staleness/rollout/max")]
    assert line.y == dual(migrated.mode, old, new)


@modes()
def test_report_line_plot_groups_by_the_new_config_key(migrated: Migrated) -> None:
    from wandb_workspaces.reports.v2 import Config

    assert panel(grid(migrated.report).panels, "LinePlot").groupby == Config(
        "orchestrator.max_staleness"
    )


@modes()
def test_report_line_plot_series_overrides(migrated: Migrated) -> None:
    line = panel(grid(migrated.report).panels, "LinePlot")
    run = series_key(migrated.mode)
    assert line.line_titles == {run: "Mean (old build)"}
    assert line.line_colors == {run: {"color": "#E15759", "transparentColor": "#E1575919"}}


@modes()
def test_report_bar_chart_overrides_follow_their_metric(migrated: Migrated) -> None:
    from wandb_workspaces.reports.v2 import Metric

    bar = panel(grid(migrated.report).panels, "BarPlot")
    old = [Metric("off_policy/dropped"), Metric("off_policy/token/mean")]
    new = [Metric("staleness/rollout/dropped"), Metric("staleness/token/mean")]
    assert bar.metrics == dual(migrated.mode, old, new)
    keys = dual(migrated.mode, ["off_policy/dropped"], ["staleness/rollout/dropped"])
    assert bar.line_titles == dict.fromkeys(keys, "Dropped")
    colour = {"color": "#76B7B2", "transparentColor": "#76B7B219"}
    assert bar.line_colors == dict.fromkeys(keys, colour)


@modes()
def test_report_run_sets_group_by_the_new_keys_and_keep_their_colours(migrated: Migrated) -> None:
    """Grouping holds one key (renamed in both modes); each group colour names its run set's
    grouping key, so it must follow it or the group loses its colour."""
    import wandb_workspaces.reports.v2 as wr

    panel_grid = grid(migrated.report)
    by_steps, by_staleness = panel_grid.runsets
    assert by_steps.groupby == ["config.orchestrator.value.max_staleness"]
    assert by_staleness.groupby == ["summary.staleness/rollout/max"]
    assert panel_grid.custom_run_colors == {
        group("By max steps", wr.Config("orchestrator.max_staleness"), "4"): "#4E79A7",
        group("By staleness", wr.SummaryMetric("staleness/rollout/max"), "2"): "#F28E2B",
    }


@modes()
def test_report_run_table_shows_the_new_columns_the_user_showed(migrated: Migrated) -> None:
    """`off_policy/max` shown and `off_policy/token/max` hidden share one successor: it is
    shown (what the user showed wins); the config key's column gets its new key too."""
    rs = grid(migrated.report).runsets[0]
    old = [OLD_CONFIG, "summary:off_policy/max"]
    new = [NEW_CONFIG, "summary:staleness/rollout/max"]
    assert rs.pinned_columns == ["run:displayName"]
    assert rs.column_order == ["run:displayName", *dual(migrated.mode, old, new)]
    assert rs.visible_columns == dual(migrated.mode, old, new)
    hidden = ["summary:off_policy/token/max"] if migrated.mode == "dual" else []
    assert rs.hidden_columns == hidden
    widths = dict(zip(old + new, [150, 120, 150, 120], strict=True))
    assert rs.column_widths == {column: widths[column] for column in dual(migrated.mode, old, new)}


def read_filters(mode: str) -> str:
    """The run-set filters as the SDK reads them back (`filters_v2_to_string`): in dual mode
    each filter on an old key is (old OR new), same operator and value."""
    if mode == "replace":
        return (
            'SummaryMetric("staleness/rollout/mean") >= 1'
            ' and Config("orchestrator.max_staleness") >= 4'
        )
    return (
        '(SummaryMetric("off_policy/mean") >= 1 or SummaryMetric("staleness/rollout/mean") >= 1)'
        ' and (Config("orchestrator.max_off_policy_steps") >= 4'
        ' or Config("orchestrator.max_staleness") >= 4)'
    )


@modes()
def test_report_run_set_filters_keep_old_runs_and_take_new_ones(migrated: Migrated) -> None:
    by_steps, by_staleness = grid(migrated.report).runsets
    assert by_steps.filters == read_filters(migrated.mode)
    assert by_staleness.filters == ""


@modes()
def test_report_note_follows_the_leading_empty_paragraph(migrated: Migrated) -> None:
    """The SDK writes an empty paragraph first and drops it when it loads: the note goes
    right after it, so the SDK loads it first and its next save adds no second paragraph."""
    blocks = specs(migrated, "runs")[1]["blocks"]
    assert blocks[0] == {"type": "paragraph", "children": [{"text": ""}]}
    assert blocks[1]["type"] == "markdown-block"
    assert MARKER in blocks[1]["content"]
    kinds = [type(b).__name__ for b in migrated.report.blocks]
    assert kinds == ["MarkdownBlock", "H1", "PanelGrid"]
    assert MARKER in migrated.report.blocks[0].text
    # what the SDK's next save sends (`Report.save` sends `_to_model().spec`): the same blocks
    resaved = migrated.report._to_model().spec.model_dump(by_alias=True)["blocks"]
    assert [b["type"] for b in resaved] == [b["type"] for b in blocks]


@modes()
def test_report_only_keys_and_the_note_changed(migrated: Migrated) -> None:
    before, after = specs(migrated, "runs")
    notes = [b for b in after["blocks"] if MARKER in b.get("content", "")]
    assert len(notes) == 1
    after["blocks"].remove(notes[0])
    assert skeleton(unpaired(after)) == skeleton(before)


@modes(only="replace")
def test_report_keeps_no_old_key_in_replace_mode(migrated: Migrated) -> None:
    _, after = specs(migrated, "runs")
    after["blocks"] = [b for b in after["blocks"] if MARKER not in b.get("content", "")]
    assert old_names(after) == []


# --- the saved workspace ------------------------------------------------------------------


def sections(migrated: Migrated) -> dict[str, Any]:
    return {s.name: s for s in migrated.workspace.sections}


@modes()
def test_workspace_panels_show_the_new_keys_where_the_old_were(migrated: Migrated) -> None:
    from wandb_workspaces.reports.v2 import Metric

    found = sections(migrated)
    line = panel(found["Rollouts"].panels, "LinePlot")
    bar = panel(found["Drops"].panels, "BarPlot")
    assert line.y == dual(
        migrated.mode,
        [Metric("off_policy/mean"), Metric("off_policy/max")],
        [Metric("staleness/rollout/mean"), Metric("staleness/rollout/max")],
    )
    assert bar.metrics == dual(
        migrated.mode,
        [Metric("off_policy/dropped"), Metric("off_policy/token/mean")],
        [Metric("staleness/rollout/dropped"), Metric("staleness/token/mean")],
    )
    run = series_key(migrated.mode)
    assert line.line_titles == {run: "Mean (old build)"}


@modes()
def test_workspace_line_plot_groups_by_the_new_config_key(migrated: Migrated) -> None:
    from wandb_workspaces.reports.v2 import Config

    line = panel(sections(migrated)["Rollouts"].panels, "LinePlot")
    assert line.groupby == Config("orchestrator.max_staleness")


@modes()
def test_workspace_bar_chart_overrides_follow_their_metric(migrated: Migrated) -> None:
    bar = panel(sections(migrated)["Drops"].panels, "BarPlot")
    keys = dual(migrated.mode, ["off_policy/dropped"], ["staleness/rollout/dropped"])
    assert bar.line_titles == dict.fromkeys(keys, "Dropped")
    colour = {"color": "#76B7B2", "transparentColor": "#76B7B219"}
    assert bar.line_colors == dict.fromkeys(keys, colour)


@modes()
def test_workspace_groups_by_the_new_key_and_keeps_its_group_colours(migrated: Migrated) -> None:
    """The SDK reads a group colour only when its (URI-encoded) key names the run set's
    grouping key: renaming one without the other loses every colour."""
    settings = migrated.workspace.runset_settings
    # (`expr` keys compare into filter expressions, so by their section and name)
    assert [g.to_key() for g in settings.groupby] == [
        expr.Key(section="config", name="orchestrator.max_staleness")
    ]
    assert settings.group_colors == {"4": "#4E79A7", "8": "#F28E2B"}


@modes()
def test_workspace_run_set_filters_keep_old_runs_and_take_new_ones(migrated: Migrated) -> None:
    assert migrated.workspace.runset_settings.filters == read_filters(migrated.mode)


@modes()
def test_workspace_pins_the_new_columns(migrated: Migrated) -> None:
    old = [OLD_CONFIG, "summary:off_policy/max"]
    new = [NEW_CONFIG, "summary:staleness/rollout/max"]
    pinned = migrated.workspace.runset_settings.pinned_columns
    assert pinned == ["run:displayName", *dual(migrated.mode, old, new)]


@modes()
def test_workspace_note_section_is_shaped_as_the_sdk_writes_one(migrated: Migrated) -> None:
    before, after = specs(migrated, "project-view")
    written = before["section"]["panelBankConfig"]["sections"]
    (note,) = [s for s in after["section"]["panelBankConfig"]["sections"] if MARKER in str(s)]
    assert set(note["localPanelSettings"]) == set(written[0]["localPanelSettings"])
    assert set(note) - {"__id__", "isPanelsAuto"} == set(written[0])
    (loaded,) = [s for s in migrated.workspace.sections if MARKER in str(s.panels)]
    assert [type(p).__name__ for p in loaded.panels] == ["MarkdownPanel"]


@modes()
def test_workspace_only_keys_and_the_note_changed(migrated: Migrated) -> None:
    before, after = specs(migrated, "project-view")
    bank = after["section"]["panelBankConfig"]
    notes = [s for s in bank["sections"] if MARKER in str(s)]
    assert len(notes) == 1
    bank["sections"].remove(notes[0])
    assert skeleton(unpaired(after)) == skeleton(before)


@modes(only="replace")
def test_workspace_keeps_no_old_key_in_replace_mode(migrated: Migrated) -> None:
    _, after = specs(migrated, "project-view")
    bank = after["section"]["panelBankConfig"]
    bank["sections"] = [s for s in bank["sections"] if MARKER not in str(s)]
    assert old_names(after) == []


def run_feeds(spec: Any) -> list[dict[str, Any]]:
    """Every run set's table settings in a report or workspace spec."""
    if isinstance(spec, dict):
        found = [spec["runFeed"]] if isinstance(spec.get("runFeed"), dict) else []
        return found + [f for v in spec.values() for f in run_feeds(v)]
    if isinstance(spec, list):
        return [f for v in spec for f in run_feeds(v)]
    return []


@pytest.mark.parametrize(
    ("migrated", "view_type"),
    [
        pytest.param(mode, view_type, id=f"{mode}-{view_type}")
        for mode in ("dual", "replace")
        for view_type in ("runs", "project-view")
    ],
    indirect=["migrated"],
)
def test_no_column_the_user_showed_is_hidden(migrated: Migrated, view_type: str) -> None:
    """W&B's rule (the SDK's `_to_model`): the listed columns are the visible ones. Every
    listed column stays visible; a column that was visible keeps its new key visible (and, in
    dual mode, itself)."""
    before, after = specs(migrated, view_type)
    for old, new in zip(run_feeds(before), run_feeds(after), strict=True):
        assert [c for c in new["columnOrder"] if new["columnVisible"].get(c) is False] == []
        for column in (c for c, shown in old["columnVisible"].items() if shown):
            renamed = column.replace("off_policy/max", "staleness/rollout/max").replace(
                "max_off_policy_steps", "max_staleness"
            )
            for kept in {renamed, column} if migrated.mode == "dual" else {renamed}:
                assert new["columnVisible"].get(kept) is True, kept


# --- the automations ----------------------------------------------------------------------

AUTOMATIONS = {  # name: (the key its filter names, the new key)
    "threshold-slack": ("off_policy/max", "staleness/rollout/max"),
    "change-webhook": ("off_policy/mean", "staleness/rollout/mean"),
    "zscore-noop": ("off_policy/in_queue/max", "staleness/rollout/in_queue/max"),
}


@pytest.mark.parametrize("name", sorted(AUTOMATIONS))
@modes()
def test_automation_moves_to_the_new_key_and_keeps_its_action(
    migrated: Migrated, name: str
) -> None:
    """One key per alert (the new one in both modes); the action, scope and every other field
    as they were, byte for byte in what the server stores."""
    old, new = AUTOMATIONS[name]
    (trigger_id,) = [i for i, t in migrated.triggers.items() if t["name"] == name]
    before, after = migrated.saved.triggers[trigger_id], migrated.triggers[trigger_id]
    moved = before["triggeringCondition"]["filter"].replace(f'"name":"{old}"', f'"name":"{new}"')
    assert moved != before["triggeringCondition"]["filter"]
    assert after["triggeringCondition"]["filter"] == moved
    unchanged = {k: v for k, v in before.items() if k not in ("updatedAt", "triggeringCondition")}
    assert {k: after[k] for k in unchanged} == unchanged
    event = migrated.automations[name].event
    (metric_filter,) = event.filter.metric.model_dump().values()
    assert metric_filter["name"] == new


@modes()
def test_a_queue_job_automation_is_reviewed_and_left_as_it_is(migrated: Migrated) -> None:
    (trigger_id,) = [i for i, t in migrated.triggers.items() if t["name"] == "queue-job"]
    assert migrated.triggers[trigger_id] == migrated.saved.triggers[trigger_id]
    assert "0 to change, 6 unchanged, 0 unreadable. 0 warnings, 1 needs review." in (
        migrated.replan.stdout
    )


# --- the rollback: from what this mode's apply left (another mode may have run since) -----


@modes()
def test_rollback_restores_every_object_byte_for_byte(migrated: Migrated) -> None:
    state = migrated.saved.server.state
    state.views, state.triggers = copy.deepcopy(migrated.views), copy.deepcopy(migrated.triggers)
    result = wbmigrate("rollback", str(migrated.backups), "--yes")
    assert result.exit_code == 0, result.output
    assert "Summary: 5 restored." in result.stdout
    assert {i: v["spec"] for i, v in state.views.items()} == {
        i: v["spec"] for i, v in migrated.saved.views.items()
    }
    for trigger_id, original in migrated.saved.triggers.items():
        restored = state.triggers[trigger_id]
        assert {**restored, "updatedAt": None} == {**original, "updatedAt": None}


# --- nothing silent: every old name in what the SDK wrote gets a result -----------------------


@pytest.mark.parametrize("mode", ["dual", "replace"])
def test_every_old_name_the_sdk_wrote_gets_a_result(saved: Saved, mode: str) -> None:
    """Each old name in the report and workspace the SDK saved is one a change or note of the
    plan is about (check's test of it, `check.unread`: a name no result is about is left)."""
    from wbmigrate.check.targets import Targets
    from wbmigrate.check.unread import by_path, unread
    from wbmigrate.engine.model import Mode, Options
    from wbmigrate.rewrite import rewrite

    options = Options(mode=Mode(mode))
    targets = Targets(MIGRATION, options)
    for view in saved.views.values():
        spec = json.loads(view["spec"])
        result = rewrite(spec, MIGRATION, options=options)
        assert result.changes
        assert unread(spec, result.kind, result, targets, by_path) == []
