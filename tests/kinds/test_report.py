"""Reports through W&B's own SDK: the migration note sits where wandb_workspaces keeps it, so
loading and saving the migrated report with the SDK adds no block."""

from __future__ import annotations

import json
import warnings

from wbmigrate import find_mapping
from wbmigrate.engine.model import Options
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
