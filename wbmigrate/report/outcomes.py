"""The per-object outcome table that ends `apply` and `rollback`."""

from __future__ import annotations

from collections import Counter

from wbmigrate.live.apply import Outcome, Status


def to_text(outcomes: list[Outcome], heading: str) -> str:
    shown = [o for o in outcomes if o.status is not Status.UNCHANGED or o.message]
    width = max((len(_title(o)) for o in shown), default=0)
    lines = [f"{heading}:"]
    for outcome in shown:
        line = f"  {outcome.status.value:<9}  {_title(outcome):<{width}}  {_detail(outcome)}"
        lines.append(line.rstrip())
    counts = Counter(o.status for o in outcomes)
    totals = ", ".join(f"{counts[s]} {s.value}" for s in Status if counts[s]) or "nothing to do"
    lines.append(f"Summary: {totals}.")
    return "\n".join(lines)


def _detail(outcome: Outcome) -> str:
    if outcome.message or not outcome.changes:
        return outcome.message
    return f"{outcome.changes} change{'s' if outcome.changes != 1 else ''}"


def _title(outcome: Outcome) -> str:
    obj = outcome.obj
    draft = " (draft)" if obj.is_draft else ""
    return f'{obj.kind} "{obj.title}"{draft}'
