"""What the live commands say: what a project held, the per-object outcome table that ends
`apply` and `rollback` (or its JSON document), and the lines after it (an interrupted run,
conflicts, an export)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wbmigrate.live.outcomes import Batch, Outcome, WriteStatus
from wbmigrate.live.project import Counts
from wbmigrate.plan_json import indented
from wbmigrate.redact import printable
from wbmigrate.report.words import coloured, plural

if TYPE_CHECKING:
    from wbmigrate.live.export import Exported


def to_text(outcomes: list[Outcome], heading: str) -> str:
    shown = [o for o in outcomes if o.status is not WriteStatus.UNCHANGED or o.message]
    names = {id(o): printable(str(o.obj)) for o in shown}
    width = max((len(name) for name in names.values()), default=0)
    lines = [f"{heading}:"]
    for outcome in shown:
        status = coloured(outcome.status.value, 9)
        line = f"  {status}  {names[id(outcome)]:<{width}}  {_detail(outcome)}"
        lines.append(line.rstrip())
    counts = Counter(o.status for o in outcomes)
    totals = ", ".join(f"{counts[s]} {s.value}" for s in WriteStatus if counts[s])
    lines.append(f"Summary: {totals or 'nothing to do'}.")
    return "\n".join(lines)


RESULT_FORMAT = "wbmigrate-result/1"  # the JSON layout (schemas/live-result.schema.json)


def result_entry(
    command: str,
    target: str,
    outcomes: list[Outcome],
    backup: Path | None = None,
    batch: Batch | None = None,
) -> dict[str, Any]:
    batch = batch or Batch()
    return {
        "format": RESULT_FORMAT,
        "command": command,
        "target": target,
        "backup": None if backup is None else str(backup),
        "objects": [_object_entry(o) for o in outcomes],
        "interrupted": batch.interrupted,
        "not_started": batch.not_started,
        "summary": _summary(outcomes),
    }


def _summary(outcomes: list[Outcome]) -> dict[str, int]:
    counts = Counter(o.status for o in outcomes)
    return {"objects": len(outcomes), **{s.value: counts[s] for s in WriteStatus}}


SET_FORMAT = "wbmigrate-results/1"  # several projects (schemas/live-results.schema.json)


def to_json(
    command: str,
    backup: Path | None,
    projects: dict[str, list[Outcome]],
    unreadable: dict[str, str],
    batch: Batch,
    one: bool,
) -> str:
    """The outcome of `apply` or `rollback` as schemas/live-result.schema.json describes it:
    every object (the unchanged too), the backup folder written (apply) or restored from
    (rollback), whether a Ctrl-C stopped the batch, and the count of each status. Over
    several projects (not `one`): a `wbmigrate-result/1` entry per project (all sharing the
    run's backup set), the projects that could not be read with why, and the counts over all."""
    if one:
        [(target, outcomes)] = projects.items()
        return indented(result_entry(command, target, outcomes, backup, batch)) + "\n"
    everything = [o for outcomes in projects.values() for o in outcomes]
    document = {
        "format": SET_FORMAT,
        "command": command,
        "backup": None if backup is None else str(backup),
        "projects": [
            result_entry(command, target, outcomes, backup) for target, outcomes in projects.items()
        ],
        "unreadable": [{"target": t, "error": e} for t, e in unreadable.items()],
        "interrupted": batch.interrupted,
        "not_started": batch.not_started,
        "summary": {"projects": len(projects) + len(unreadable), **_summary(everything)},
    }
    return indented(document) + "\n"


def _object_entry(outcome: Outcome) -> dict[str, Any]:
    obj = outcome.obj
    return {
        "kind": obj.kind,
        "id": obj.id,
        "name": obj.title,
        "draft": obj.is_draft,
        "status": outcome.status.value,
        "detail": outcome.message,
        "changes": outcome.changes,
    }


def _detail(outcome: Outcome) -> str:
    if outcome.message or not outcome.changes:
        return printable(outcome.message)
    return plural(outcome.changes, "change")


def interrupted(not_started: int) -> str:
    """The line after the table of a batch stopped by Ctrl-C."""
    return f"Interrupted: {plural(not_started, 'object')} not started."


def conflicts(outcomes: list[Outcome], undo: str) -> str | None:
    """What to do about objects someone else saved while they were written, if any."""
    count = sum(o.status is WriteStatus.CONFLICT for o in outcomes)
    if not count:
        return None
    return (
        f"Conflicts: {plural(count, 'object')} saved by someone else while being written; W&B "
        "holds their version, and the backup holds it and the original. Apply again to migrate "
        f"their version, or put the originals back: {undo} --force"
    )


def export_line(result: Exported) -> str:
    """A written file's path, or one line saying why an object has none."""
    if result.path is not None:
        return printable(str(result.path))
    return printable(f"Error: {result.obj} ({result.obj.id}): {result.error}")


def found_line(found: Counts) -> str:
    """`Found 4 reports (1 draft), 1 saved workspace, 6 automations.`"""
    return (
        f"Found {plural(found.reports, 'report')} ({plural(found.drafts, 'draft')}), "
        f"{plural(found.workspaces, 'saved workspace')}, "
        f"{plural(found.automations, 'automation')}."
    )
