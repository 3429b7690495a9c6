"""`mappings diff`: two mappings compared step by step (a step is matched by its source link,
else by its version), each entry only in one of them or different in the two."""

from __future__ import annotations

from wbmigrate.mapping import Step
from wbmigrate.mapping.file import Mapping


def entries(step: Step) -> dict[str, str]:
    """A step's entries, each old name or config key with what it becomes."""
    found = {old: f"-> {new}" for old, new in step.renamed.items()}
    found |= dict.fromkeys(step.removed, "removed")
    found |= dict.fromkeys(step.live_again, "live again")
    for c in step.config:
        found[f"config {c.old}"] = f"-> {c.new}" + (" (deprecated)" if c.deprecated else "")
    found |= {f"config {name}": "live again" for name in step.config_live_again}
    found |= {f"config {r.path}": "removed" for r in step.config_removed}
    found |= {f"config {name}": "alias removed" for name in step.aliases_removed}
    return found


def diff(a: Mapping, b: Mapping) -> list[str]:
    """The lines that say how `b` differs from `a`; none when they agree entry for entry."""
    by_key = {_key(step): step for step in b.steps}
    lines: list[str] = []
    for step in a.steps:
        other = by_key.pop(_key(step), None)
        if other is None:
            lines.append(f"- step {step.label}: only in A ({_count(step)})")
            continue
        lines += _step(step, other)
    lines += [f"+ step {s.label}: only in B ({_count(s)})" for s in by_key.values()]
    return lines


def _count(step: Step) -> str:
    count = len(entries(step))
    return f"{count} {'entry' if count == 1 else 'entries'}"


def _key(step: Step) -> str:
    return step.source.rstrip("/") if step.pull else step.version


def _step(step: Step, other: Step) -> list[str]:
    mine, theirs = entries(step), entries(other)
    lines = [f"- {old} {mine[old]}" for old in mine if old not in theirs]
    lines += [f"+ {old} {theirs[old]}" for old in theirs if old not in mine]
    lines += [
        f"! {old}: {mine[old]} | {theirs[old]}"
        for old in mine
        if old in theirs and mine[old] != theirs[old]
    ]
    if not lines:
        return []
    return [f"step {step.label} | {other.label}", *(f"  {line}" for line in lines)]
