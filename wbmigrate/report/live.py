"""What the live commands say: what a project held, and the per-object outcome table that ends
`apply` and `rollback`."""

from __future__ import annotations

from collections import Counter

from wbmigrate.live.project import Census

from wbmigrate.live.apply import Outcome, WriteStatus
from wbmigrate.report.words import plural


def to_text(outcomes: list[Outcome], heading: str) -> str:
    shown = [o for o in outcomes if o.status is not WriteStatus.UNCHANGED or o.message]
    width = max((len(str(o.obj)) for o in shown), default=0)
    lines = [f"{heading}:"]
    for outcome in shown:
        line = f"  {outcome.status.value:<9}  {outcome.obj!s:<{width}}  {_detail(outcome)}"
        lines.append(line.rstrip())
    counts = Counter(o.status for o in outcomes)
    totals = ", ".join(f"{counts[s]} {s.value}" for s in WriteStatus if counts[s])
    lines.append(f"Summary: {totals or 'nothing to do'}.")
    return "\n".join(lines)


def _detail(outcome: Outcome) -> str:
    if outcome.message or not outcome.changes:
        return outcome.message
    return plural(outcome.changes, "change")


def census(found: Census) -> str:
    """`Found 4 reports (1 draft), 1 saved workspace, 6 automations.`"""
    return (
        f"Found {plural(found.reports, 'report')} ({plural(found.drafts, 'draft')}), "
        f"{plural(found.workspaces, 'saved workspace')}, "
        f"{plural(found.automations, 'automation')}."
    )
