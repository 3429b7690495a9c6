"""The script a user writes today to migrate a project by hand, for the same job as
`wbmigrate apply`: each report loaded with `wandb_workspaces` `Report.from_url`, its panels'
metrics renamed and the report saved, one after the other; then the project's automations
through the `wandb` SDK (`api.automations`, edit, `api.update_automation`).

`python user_loop.py JOB.json`: report URLs, entity, project and the renames (old -> new).
"""

import json
import sys
from typing import Any

import wandb
from wandb_workspaces.reports.v2.interface import PanelGrid, Report


def main(path: str) -> None:
    with open(path, encoding="utf-8") as file:
        job = json.load(file)
    renames = job["renames"]
    for url in job["reports"]:
        report = Report.from_url(url)
        edited = [edit(panel, renames) for block in report.blocks for panel in panels(block)]
        if any(edited):
            report.save()
    automations(job, renames)


def panels(block: Any) -> list[Any]:
    return list(block.panels) if isinstance(block, PanelGrid) else []


def edit(panel: Any, renames: dict[str, str]) -> bool:
    """Rename the metrics a panel plots (x, y, metrics, metric); whether any changed."""
    changed = False
    for field in ("x", "y", "metrics", "metric"):
        value = getattr(panel, field, None)
        new = renamed(value, renames)
        if new != value:
            setattr(panel, field, new)
            changed = True
    return changed


def renamed(value: Any, renames: dict[str, str]) -> Any:
    if isinstance(value, list):
        return [renamed(item, renames) for item in value]
    if isinstance(value, str):
        return renames.get(value, value)
    name = getattr(value, "name", None)
    if isinstance(name, str) and name in renames:
        return type(value)(name=renames[name])
    return value


def automations(job: dict[str, Any], renames: dict[str, str]) -> None:
    api = wandb.Api()
    for automation in api.automations(entity=job["entity"]):
        if getattr(automation.scope, "name", None) != job["project"]:
            continue
        metric = getattr(automation.event.filter, "metric", None)
        threshold = getattr(metric, "threshold_filter", None)
        if threshold is not None and threshold.name in renames:
            threshold.name = renames[threshold.name]
            api.update_automation(automation)


if __name__ == "__main__":
    main(sys.argv[1])
