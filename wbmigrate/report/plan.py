"""A plan as a reviewer reads it: per object, per panel, what changes and what needs a look.

Text for the terminal, Markdown for a pull-request comment, JSON for scripts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from wbmigrate.engine.annotate import markdown_url
from wbmigrate.engine.history import History, RunRef
from wbmigrate.engine.model import SEPARATOR, Change, ChangeAction, Note, NoteKind, Options
from wbmigrate.mapping import Migration
from wbmigrate.plan import Plan, Planned, Status, Tally
from wbmigrate.plan_json import (
    JsonDocument,
    history_entry,
    mapping_entry,
    object_entry,
    summary_entry,
)
from wbmigrate.redact import printable, redact
from wbmigrate.report.words import code, coloured, markdown, plural

SYMBOLS = {
    ChangeAction.RENAMED: "~",
    ChangeAction.ADDED: "+",
    ChangeAction.REMOVED: "-",
    ChangeAction.DISABLED: "x",
    ChangeAction.ANNOTATED: "*",
}
NOTE_SYMBOLS = {NoteKind.WARNING: "!", NoteKind.REVIEW: "?", NoteKind.INFO: "i"}
MEANINGS = (
    "renamed",
    "added beside the old key",
    "removed",
    "disabled",
    "note",
    "warning",
    "review",
)
MARKS = (*SYMBOLS.values(), NOTE_SYMBOLS[NoteKind.WARNING], NOTE_SYMBOLS[NoteKind.REVIEW])
LEGEND = "  ".join(f"{mark} {meaning}" for mark, meaning in zip(MARKS, MEANINGS, strict=True))
BRIEF = 72  # the widest old or new value a change line shows, "…" ending a longer one


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


def _brief(value: Any) -> str:
    if isinstance(value, dict):
        return "the whole panel" if "viewType" in value else "an object"
    text = value if isinstance(value, str) else json.dumps(value)
    text = redact(text.replace("\n", " "))  # before the cut, which could leave part of a key
    return text if len(text) <= BRIEF else text[: BRIEF - 1] + "…"


# --- text -------------------------------------------------------------------------------------
# Each renderer streams: an object is written as soon as it is planned, then forgotten.


def text_chunks(
    migration: Migration, options: Options, objects: Iterable[Planned], verbose: bool = False
) -> Iterator[str]:
    tally = Tally()
    yield printed([header(migration, options), *history_lines(options)]) + legend()
    for planned in map(tally.add, objects):
        if planned.status is Status.UNCHANGED and not (verbose or _shown_notes(planned, False)):
            continue
        yield lines(text_object(planned, verbose))
    yield printed([summary(tally)])


def to_text(plan: Plan, verbose: bool = False) -> str:
    return "".join(text_chunks(plan.migration, plan.options, plan.objects, verbose))


def text_object(planned: Planned, verbose: bool) -> list[str]:
    """An object's lines, what came from elsewhere escaped, then the marks coloured: print
    them as they are (`lines`; `printed` would escape the colours)."""
    link = f"  {planned.source.url}" if planned.source.url else ""
    out = [printable(f"{planned.title}  ({planned.source.origin}){link}")]
    if planned.error is not None:
        return [*out, f"  {coloured('error')}: {printable(planned.error)}", ""]
    kind = planned.result.kind if planned.result else ""
    for where, changes, notes in _groups(planned, verbose):
        out.append(printable("  " + (SEPARATOR.join(where) or f"(the {kind} itself)")))
        width = max((len(c.field) for c in changes), default=0)
        for change in changes:
            text = printable(f"{change.field:<{width}}  {describe(change)}")
            out.append(f"    {coloured(SYMBOLS[change.action])} {text}")
        out += [
            f"    {coloured(NOTE_SYMBOLS[n.kind])} {printable(f'{n.field}: {n.message}')}"
            for n in notes
        ]
    return [*out, ""]


def legend() -> str:
    """`LEGEND` with its marks coloured, and the blank line after it."""
    return "  ".join(f"{coloured(m)} {meaning}" for m, meaning in zip(MARKS, MEANINGS)) + "\n\n"  # noqa: B905


def lines(escaped: list[str]) -> str:
    """Lines already escaped (`text_object`'s), as printed."""
    return "".join(line + "\n" for line in escaped)


def printed(lines: list[str]) -> str:
    """Lines of a report; a control character in a name is escaped, so no object can forge a
    line (`Summary: ...`) of its own."""
    return "".join(printable(line) + "\n" for line in lines)


def history_lines(options: Options) -> list[str]:
    """What the key census found, when there were runs to read: how many runs, and the
    project's own boundary (a project without runs has none to tell, which `plan` says on
    stderr)."""
    history = options.history
    if history is None or not history.runs:
        return []
    last_old = f"the last run with old keys is {_run(history.last_old)}" if history.last_old else ""
    if not history.upgraded:
        end = f"; {last_old}." if last_old else "."
        return [f"Runs: {_read(history)}. Not upgraded: no run logged the new keys{end}"]
    before = last_old or "no run logged the old keys"
    first_new = f"the first with new keys is {_run(history.first_new)}"
    return [f"Runs: {_read(history)}. Boundary: {before}; {first_new}."]


def _read(history: History) -> str:
    """`7 read`, `the 500 newest of 1,234 read`, then the steps whose keys they logged."""
    read = f"{history.runs:,} read"
    if history.partial:
        read = f"the {history.runs:,} newest of {history.total:,} read"
    if history.steps is None:
        return read
    first, last = history.steps
    return f"{read}, logging the keys of " + (
        f"step {first}" if first == last else f"steps {first} .. {last}"
    )


def _run(run: RunRef | None) -> str:
    assert run is not None
    return f'"{run.name}" ({run.day})'


def header(migration: Migration, options: Options) -> str:
    return (
        f"Plan: {migration.mapping_id} {migration.start.version} .. "
        f"{migration.end.version}, {options.mode.value} mode"
    )


def summary(tally: Tally) -> str:
    statuses = tally.statuses
    parts = [
        f"{plural(tally.total, 'object')}: {statuses[Status.CHANGES]} to change, "
        f"{statuses[Status.UNCHANGED]} unchanged, {statuses[Status.ERROR]} unreadable."
    ]
    actions = tally.actions
    if actions:
        counted = ", ".join(f"{actions[a]} {a.value}" for a in ChangeAction if actions[a])
        parts.append(f"{plural(sum(actions.values()), 'change')} ({counted}).")
    notes = tally.notes
    parts.append(
        f"{plural(notes[NoteKind.WARNING], 'warning')}, {notes[NoteKind.REVIEW]} "
        f"need{'s' if notes[NoteKind.REVIEW] == 1 else ''} review."
    )
    return "Summary: " + " ".join(parts)


# --- markdown ---------------------------------------------------------------------------------


def markdown_chunks(
    migration: Migration, options: Options, objects: Iterable[Planned], verbose: bool = False
) -> Iterator[str]:
    """The summary comes first, so the objects' sections are kept (as text) until the end."""
    tally = Tally()
    sections = [
        printed(markdown_object(planned, verbose))
        for planned in map(tally.add, objects)
        if not (planned.status is Status.UNCHANGED and not _shown_notes(planned, verbose))
    ]
    title = f"## wbmigrate {header(migration, options).lower()}"
    yield printed(
        [title, "", *map(md, history_lines(options)), summary(tally).removeprefix("Summary: "), ""]
    )
    yield from sections


def to_markdown(plan: Plan, verbose: bool = False) -> str:
    return "".join(markdown_chunks(plan.migration, plan.options, plan.objects, verbose))


def markdown_object(planned: Planned, verbose: bool) -> list[str]:
    link = f" <{markdown_url(planned.source.url)}>" if planned.source.url else ""
    out = [f"### {md(planned.title)}", "", code(planned.source.origin) + link, ""]
    if planned.error is not None:
        return [*out, f"**Error:** {md(planned.error)}", ""]
    rows = [(SEPARATOR.join(c.where), c) for c in planned.result.changes] if planned.result else []
    if rows:
        out += ["| Where | Field | Change |", "|---|---|---|"]
        out += [
            f"| {md(where) or '—'} | {cell_code(c.field)} | {c.action.value}: {md(describe(c))} |"
            for where, c in rows
        ]
        out.append("")
    notes = _shown_notes(planned, verbose)
    if notes:
        out += [f"<details><summary>{plural(len(notes), 'note')}</summary>", ""]
        out += [f"- **{n.kind.value}** {md(n.label(''))}: {md(n.message)}" for n in notes]
        out += ["", "</details>", ""]
    return out


def md(text: str) -> str:
    return markdown(text).removeprefix(SEPARATOR)


def cell_code(text: str) -> str:
    """A code span in a table cell: GFM ends the cell at a `|` even inside one."""
    return code(text).replace("|", "\\|")


# --- json -------------------------------------------------------------------------------------


def json_chunks(
    migration: Migration, options: Options, objects: Iterable[Planned]
) -> Iterator[str]:
    tally = Tally()
    chunks: list[str] = []
    head = mapping_entry(migration, options)
    if options.history is not None:
        head["history"] = history_entry(options.history, keys=False)
    document = JsonDocument(chunks.append, head, "objects")
    for planned in map(tally.add, objects):
        document.add(object_entry(planned))
        yield from chunks
        chunks.clear()
    document.close({"summary": summary_entry(tally)})
    yield from chunks


def to_json(plan: Plan) -> str:
    return "".join(json_chunks(plan.migration, plan.options, plan.objects))
