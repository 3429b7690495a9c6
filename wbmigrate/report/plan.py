"""A plan as a reviewer reads it: per object, per panel, what changes and what needs a look.

Text for the terminal, Markdown for a pull-request comment, JSON for scripts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from wbmigrate.engine.model import SEPARATOR, Change, ChangeAction, Note, NoteKind
from wbmigrate.plan import Plan, Planned, Status

SYMBOLS = {
    ChangeAction.RENAMED: "~",
    ChangeAction.ADDED: "+",
    ChangeAction.REMOVED: "-",
    ChangeAction.DISABLED: "x",
    ChangeAction.ANNOTATED: "*",
}
NOTE_SYMBOLS = {NoteKind.WARNING: "!", NoteKind.REVIEW: "?", NoteKind.INFO: "i"}
LEGEND = "~ renamed  + added beside the old key  - removed  x disabled  * note  ! warning  ? review"


def _shown_notes(planned: Planned, verbose: bool) -> list[Note]:
    assert planned.result is not None
    return [n for n in planned.result.notes if verbose or n.kind is not NoteKind.INFO]


def _groups(
    planned: Planned, verbose: bool
) -> Iterator[tuple[tuple[str, ...], list[Change], list[Note]]]:
    """Changes and notes of one object by place (panel, run set), in document order."""
    assert planned.result is not None
    places: dict[tuple[str, ...], tuple[list[Change], list[Note]]] = {}
    for change in planned.result.changes:
        places.setdefault(change.where, ([], []))[0].append(change)
    for note in _shown_notes(planned, verbose):
        places.setdefault(note.where, ([], []))[1].append(note)
    for where, (changes, notes) in places.items():
        yield where, changes, notes


def describe(change: Change) -> str:
    """What a change does, in a few words."""
    old, new = _brief(change.old), _brief(change.new)
    if change.action is ChangeAction.ADDED:
        return f"{new} (beside {old})"
    if change.action is ChangeAction.REMOVED:
        return f"{old} deleted" if isinstance(change.old, dict) else f"{old} dropped"
    if change.action is ChangeAction.ANNOTATED:
        return "note added at the top" if change.old is None else "note brought up to date"
    return f"{old} -> {new}"


def _brief(value: Any, width: int = 72) -> str:
    if isinstance(value, dict):
        return "the whole panel" if "viewType" in value else "an object"
    text = value if isinstance(value, str) else json.dumps(value)
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


# --- text -------------------------------------------------------------------------------------


def to_text(plan: Plan, verbose: bool = False) -> str:
    out: list[str] = [header(plan), LEGEND, ""]
    for planned in plan.objects:
        if planned.status is Status.UNCHANGED and not (verbose or _shown_notes(planned, False)):
            continue
        out.append(f"{planned.title}  ({planned.source.origin})")
        if planned.error is not None:
            out += [f"  error: {planned.error}", ""]
            continue
        kind = planned.result.kind if planned.result else ""
        for where, changes, notes in _groups(planned, verbose):
            out.append("  " + (SEPARATOR.join(where) or f"(the {kind} itself)"))
            width = max((len(c.field) for c in changes), default=0)
            for change in changes:
                out.append(
                    f"    {SYMBOLS[change.action]} {change.field:<{width}}  {describe(change)}"
                )
            out += [f"    {NOTE_SYMBOLS[n.kind]} {n.field}: {n.message}" for n in notes]
        out.append("")
    out.append(summary(plan))
    return "\n".join(out) + "\n"


def header(plan: Plan) -> str:
    migration = plan.migration
    return (
        f"Plan: {migration.mapping_id} {migration.start.version} .. "
        f"{migration.end.version}, {plan.options.mode.value} mode"
    )


def summary(plan: Plan) -> str:
    total = len(plan.objects)
    changing = plan.count(Status.CHANGES)
    parts = [
        f"{_plural(total, 'object')}: {changing} to change, "
        f"{plan.count(Status.UNCHANGED)} unchanged, {plan.count(Status.ERROR)} unreadable."
    ]
    actions = plan.actions
    if actions:
        counted = ", ".join(f"{actions[a]} {a.value}" for a in ChangeAction if actions[a])
        parts.append(f"{sum(actions.values())} changes ({counted}).")
    notes = plan.notes
    parts.append(
        f"{_plural(notes[NoteKind.WARNING], 'warning')}, {notes[NoteKind.REVIEW]} "
        f"need{'s' if notes[NoteKind.REVIEW] == 1 else ''} review."
    )
    return "Summary: " + " ".join(parts)


# --- markdown ---------------------------------------------------------------------------------


def to_markdown(plan: Plan, verbose: bool = False) -> str:
    out = [f"## wbmigrate {header(plan).lower()}", "", summary(plan).removeprefix("Summary: "), ""]
    for planned in plan.objects:
        if planned.status is Status.UNCHANGED and not _shown_notes(planned, verbose):
            continue
        out += [f"### {_md(planned.title)}", "", f"`{planned.source.origin}`", ""]
        if planned.error is not None:
            out += [f"**Error:** {_md(planned.error)}", ""]
            continue
        rows = (
            [(SEPARATOR.join(c.where), c) for c in planned.result.changes] if planned.result else []
        )
        if rows:
            out += ["| Where | Field | Change |", "|---|---|---|"]
            out += [
                f"| {_md(where) or '—'} | `{c.field}` | {c.action.value}: {_md(describe(c))} |"
                for where, c in rows
            ]
            out.append("")
        notes = _shown_notes(planned, verbose)
        if notes:
            out += [f"<details><summary>{_plural(len(notes), 'note')}</summary>", ""]
            out += [f"- **{n.kind.value}** {_md(n.label(''))}: {_md(n.message)}" for n in notes]
            out += ["", "</details>", ""]
    return "\n".join(out) + "\n"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").removeprefix(SEPARATOR)


# --- json -------------------------------------------------------------------------------------


def to_json(plan: Plan) -> str:
    return json.dumps(as_dict(plan), indent=2, ensure_ascii=False) + "\n"


def as_dict(plan: Plan) -> dict[str, Any]:
    migration = plan.migration
    return {
        "mapping": {
            "id": migration.mapping_id,
            "from": migration.start.version,
            "to": migration.end.version,
        },
        "mode": plan.options.mode.value,
        "objects": [_object(p) for p in plan.objects],
        "summary": {
            "objects": len(plan.objects),
            **{status.value: plan.count(status) for status in Status},
            "actions": {a.value: plan.actions[a] for a in ChangeAction},
            "notes": {k.value: plan.notes[k] for k in NoteKind},
        },
    }


def _object(planned: Planned) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": planned.source.name,
        "origin": planned.source.origin,
        "kind": planned.result.kind if planned.result else planned.source.kind,
        "status": planned.status.value,
    }
    if planned.error is not None:
        entry["error"] = planned.error
    if planned.result is not None:
        entry["changes"] = [
            {
                "pointer": c.pointer,
                "action": c.action.value,
                "old": c.old,
                "new": c.new,
                "where": list(c.where),
                "field": c.field,
                "label": c.label(planned.result.title),
            }
            for c in planned.result.changes
        ]
        entry["notes"] = [
            {
                "pointer": n.pointer,
                "kind": n.kind.value,
                "message": n.message,
                "where": list(n.where),
                "field": n.field,
                "label": n.label(planned.result.title),
            }
            for n in planned.result.notes
        ]
    return entry
