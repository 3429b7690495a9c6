"""Reports through W&B's own SDK: the migration note sits where wandb_workspaces keeps it, so
loading and saving the migrated report with the SDK adds no block."""

from __future__ import annotations

import json
import warnings

from wbmigrate import find_mapping, kinds
from wbmigrate.engine.model import Mode, NoteKind, Options
from wbmigrate.rewrite import rewrite

with warnings.catch_warnings():  # the SDK's models use pydantic 1 validators
    warnings.simplefilter("ignore", DeprecationWarning)
    import wandb_workspaces.reports.v2 as wr
    from wandb_workspaces.reports.v2 import internal

MIGRATION = find_mapping("prime-rl").migration()


def sdk_report(*blocks: object) -> internal.ReportViewspec:
    report = wr.Report(project="async-rl", entity="team", title="Staleness", blocks=list(blocks))
    return report._to_model()


def saved_by_sdk(model: internal.ReportViewspec, spec: dict) -> dict:
    """`spec` loaded into the SDK's Report and saved again, as `Report.save()` sends it."""
    view = json.loads(model.model_dump_json(by_alias=True, exclude_none=True))
    loaded = wr.Report._from_model(internal.ReportViewspec.model_validate({**view, "spec": spec}))
    return json.loads(loaded._to_model().spec.model_dump_json(by_alias=True, exclude_none=True))


def test_a_report_the_sdk_wrote_gets_its_note_after_the_first_paragraph_and_keeps_its_blocks():
    model = sdk_report(wr.PanelGrid(panels=[wr.LinePlot(y=["off_policy/mean"])]))
    spec = json.loads(model.spec.model_dump_json(by_alias=True, exclude_none=True))
    migrated = rewrite(spec, MIGRATION, options=Options(annotate=True)).spec
    kinds = ["paragraph", "markdown-block", "panel-grid", "paragraph"]
    assert [b["type"] for b in migrated["blocks"]] == kinds
    assert saved_by_sdk(model, migrated)["blocks"] == migrated["blocks"]


def test_a_report_without_the_empty_first_paragraph_gets_its_note_first():
    spec = {
        "version": 5,
        "blocks": [{"type": "paragraph", "children": [{"text": "about off_policy/mean"}]}],
        "panelSettings": {"xAxis": "off_policy/mean"},
    }
    migrated = rewrite(spec, MIGRATION, options=Options(annotate=True)).spec
    assert [b["type"] for b in migrated["blocks"]] == ["markdown-block", "paragraph"]


LEGACY = {
    "global": {"name": "", "settings": {"xAxis": "off_policy/mean"}, "customRunColors": {}},
    "panelGroups": [
        {
            "name": "Staleness",
            "panels": {"views": {"0": {"name": "Panels", "defaults": [], "config": "odd"}}},
            "runSets": [],
        },
        "not a section",
    ],
}


def test_a_2019_report_is_a_report_and_a_part_it_cannot_read_is_for_review():
    assert kinds.detect(LEGACY) == "report"
    result = rewrite(LEGACY, MIGRATION, options=Options(annotate=True))
    assert [(c.pointer, c.new) for c in result.changes] == [
        ("/global/settings/xAxis", "staleness/rollout/mean")
    ]
    said = [(n.pointer, n.kind, n.field) for n in result.notes]
    assert said[-1] == ("", NoteKind.WARNING, "migration note")  # no block for it: said, not added
    assert not [n for n in result.notes if n.kind is NoteKind.REVIEW]


def test_the_parts_of_a_2019_report_it_cannot_read_are_scanned():
    text = json.dumps(LEGACY).replace('"odd"', '"off_policy/max"')
    odd = json.loads(text.replace('"not a section"', '"off_policy/mean"'))
    result = rewrite(odd, MIGRATION, options=Options(annotate=False))
    review = [n.pointer for n in result.notes if n.kind is NoteKind.REVIEW]
    assert review == ["/panelGroups/0/panels/views/0/config", "/panelGroups/1"]


def test_a_bar_plot_s_overrides_read_back_by_the_sdk_follow_the_new_key():
    """The SDK's BarPlot keys `line_titles`/`line_colors` by what it is given: a bare metric."""
    bars = wr.BarPlot(
        metrics=["off_policy/mean"],
        line_titles={"off_policy/mean": "Rollout staleness"},
        line_colors={"off_policy/mean": "#ff0000"},
    )
    model = sdk_report(wr.PanelGrid(panels=[bars]))
    spec = json.loads(model.spec.model_dump_json(by_alias=True, exclude_none=True))
    for mode, keys in (
        (Mode.DUAL, ["off_policy/mean", "staleness/rollout/mean"]),
        (Mode.REPLACE, ["staleness/rollout/mean"]),
    ):
        migrated = rewrite(spec, MIGRATION, options=Options(mode=mode)).spec
        view = json.loads(model.model_dump_json(by_alias=True, exclude_none=True))
        report = wr.Report._from_model(
            internal.ReportViewspec.model_validate({**view, "spec": migrated})
        )
        (plot,) = report.blocks[-1].panels  # after the migration note
        assert [m.name for m in plot.metrics] == keys
        assert plot.line_titles == dict.fromkeys(keys, "Rollout staleness")
        assert list(plot.line_colors) == keys
