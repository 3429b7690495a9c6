"""The plan's one data format: what `plan --format json` prints, `plan --out` saves and a
backup manifest records; changing a field here changes all three, and what `apply --plan`
reads back. `JsonDocument` writes such a document an item at a time."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from wbmigrate.engine.history import History, RunRef, Span
from wbmigrate.engine.model import Change, ChangeAction, Mode, Note, NoteKind, Options
from wbmigrate.plan import Planned, Status, Tally

if TYPE_CHECKING:
    from wbmigrate.mapping import Migration


def mapping_entry(migration: Migration, options: Options) -> dict[str, Any]:
    return {
        "mapping": {
            "id": migration.mapping_id,
            "from": migration.start.version,
            "to": migration.end.version,
        },
        "mode": options.mode.value,
    }


def options_entry(options: Options) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "mode": options.mode.value,
        "rewrite_text": options.rewrite_text,
        "annotate": options.annotate,
        "project_keys": sorted(options.project_keys),
    }
    if options.history is not None:  # a saved plan is applied with the census it was made with
        entry["history"] = history_entry(options.history)
    return entry


def options_of(entry: dict[str, Any]) -> Options:
    """The inverse of `options_entry` (KeyError, TypeError or ValueError if damaged)."""
    history = entry.get("history")
    return Options(
        mode=Mode(entry["mode"]),
        rewrite_text=entry["rewrite_text"],
        annotate=entry["annotate"],
        project_keys=frozenset(entry["project_keys"]),
        history=history_of_entry(history) if history is not None else None,
    )


def history_entry(history: History, keys: bool = True) -> dict[str, Any]:
    """The census as data: how many runs were read, the boundary, the first and last run of
    each key the mapping knows, and (with `keys`) every key logged."""
    entry = {
        "runs": history.runs,
        "total": history.total,
        "last_old": _run_entry(history.last_old),
        "first_new": _run_entry(history.first_new),
        "upgraded": history.upgraded,
        "steps": list(history.steps) if history.steps else None,
        "spans": {
            key: {"first": _run_entry(span.first), "last": _run_entry(span.last)}
            for key, span in sorted(history.spans.items())
        },
    }
    return {**entry, "keys": sorted(history.keys)} if keys else entry


def history_of_entry(entry: dict[str, Any]) -> History:
    """The inverse of `history_entry` (KeyError, TypeError or ValueError if damaged)."""
    spans = {
        str(key): Span(_run(span["first"]), _run(span["last"]))
        for key, span in dict(entry["spans"]).items()
    }
    total = entry["total"]
    if not isinstance(entry["runs"], int) or not isinstance(total, (int, type(None))):
        raise TypeError("run counts are not numbers")
    return History(
        frozenset(map(str, entry["keys"])),
        entry["runs"],
        total,
        _run_of(entry["last_old"]),
        _run_of(entry["first_new"]),
        spans,
        _steps_of(entry.get("steps")),  # a plan saved before the census had steps has none
    )


def _steps_of(entry: Any) -> tuple[str, str] | None:
    if entry is None:
        return None
    first, last = entry  # ValueError unless two
    if not isinstance(first, str) or not isinstance(last, str):
        raise TypeError("steps are not labels")
    return first, last


def _run_entry(run: RunRef | None) -> dict[str, str] | None:
    return None if run is None else asdict(run)


def _run_of(entry: Any) -> RunRef | None:
    return None if entry is None else _run(entry)


def _run(entry: Any) -> RunRef:
    fields = [entry["name"], entry["id"], entry["created"], entry["url"]]
    if not all(isinstance(f, str) for f in fields):
        raise TypeError("a run is not named by strings")
    return RunRef(*fields)


def summary_entry(tally: Tally) -> dict[str, Any]:
    """The counts of the text's summary line, in its words: objects by status, then changes."""
    statuses = tally.statuses
    return {
        "objects": tally.total,
        "to_change": statuses[Status.CHANGES],
        "unchanged": statuses[Status.UNCHANGED],
        "unreadable": statuses[Status.ERROR],
        "changes": sum(tally.actions.values()),
        "actions": {a.value: tally.actions[a] for a in ChangeAction},
        "notes": {k.value: tally.notes[k] for k in NoteKind},
    }


def signature(changes: Iterable[Change]) -> list[list[Any]]:
    """The changes as plain data, to compare a fresh rewrite with a saved plan."""
    return [[c.pointer, c.action.value, c.old, c.new] for c in changes]


def object_entry(planned: Planned) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": planned.source.name,
        "origin": planned.source.origin,
        "kind": planned.result.kind if planned.result else planned.source.kind,
        "status": planned.status.value,
    }
    if planned.source.url:
        entry["url"] = planned.source.url
    if planned.error is not None:
        entry["error"] = planned.error
    if planned.result is not None:
        title = planned.result.title
        entry["changes"] = [
            _located(c, title, action=c.action.value, old=c.old, new=c.new)
            for c in planned.result.changes
        ]
        entry["notes"] = [
            _located(n, title, kind=n.kind.value, message=n.message) for n in planned.result.notes
        ]
    return entry


def _located(item: Change | Note, title: str, **what: Any) -> dict[str, Any]:
    """A change or note as data: its pointer, what it is, then where it is."""
    return {
        "pointer": item.pointer,
        **what,
        "where": list(item.where),
        "field": item.field,
        "label": item.label(title),
    }


class JsonDocument:
    """`{**head, key: [*items], **tail}` written exactly as `json.dumps(..., indent=2)` would
    write it, one item at a time, so a long list is never held in memory."""

    def __init__(self, write: Callable[[str], object], head: dict[str, Any], key: str) -> None:
        self._write = write
        self._count = 0
        members = [f"\n  {_dumps(k, 0)}: {_dumps(v, 1)}" for k, v in head.items()]
        write("{" + "".join(m + "," for m in members) + f"\n  {_dumps(key, 0)}: [")

    def add(self, item: Any) -> None:
        self._write(("," if self._count else "") + "\n    " + _dumps(item, 2))
        self._count += 1

    def close(self, tail: dict[str, Any]) -> None:
        members = "".join(f",\n  {_dumps(k, 0)}: {_dumps(v, 1)}" for k, v in tail.items())
        self._write(("\n  ]" if self._count else "]") + members + "\n}\n")


def _dumps(value: Any, depth: int) -> str:
    text = indented(value)
    return text.replace("\n", "\n" + "  " * depth)  # a newline inside a string is escaped


def indented(value: Any) -> str:
    """The one layout of wbmigrate's JSON documents."""
    return json.dumps(value, indent=2, ensure_ascii=False)
