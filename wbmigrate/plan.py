"""A plan: every object of a target rewritten in memory, nothing written; and the plan's one
data format, which the JSON report, saved plans and backup manifests all write through.

One object that cannot be read or rewritten never stops the others: it is planned as an error.
"""

from __future__ import annotations

import enum
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from wbmigrate.engine.history import History, RunRef, Span
from wbmigrate.engine.model import (
    UNPARSED,
    Change,
    ChangeAction,
    Mode,
    NoteKind,
    Options,
    Rewrite,
)
from wbmigrate.errors import WbmigrateError
from wbmigrate.rewrite import rewrite, spec_at

if TYPE_CHECKING:
    from wbmigrate.mapping import Migration


class Status(enum.Enum):
    CHANGES = "changes"
    UNCHANGED = "unchanged"
    ERROR = "error"


@dataclass(frozen=True)
class Source:
    """One object to plan: its spec text and where it came from."""

    name: str
    origin: str  # a file path, or a W&B id
    text: str = ""
    kind: str | None = None  # None: tell from the spec's shape
    error: str | None = None  # why it could not be read
    root: tuple[str, ...] = ()  # where the spec sits in the text: ("spec",) in an export file
    # The text already parsed (a file is parsed to tell whether it is a spec): not parsed twice
    document: Any = field(default=UNPARSED, repr=False, compare=False)


@dataclass(frozen=True)
class Planned:
    source: Source
    result: Rewrite | None = None
    error: str | None = None

    @property
    def status(self) -> Status:
        if self.result is None:
            return Status.ERROR
        return Status.CHANGES if self.result.changed else Status.UNCHANGED

    @property
    def title(self) -> str:
        return self.result.title if self.result else f'"{self.source.name}"'


@dataclass
class Tally:
    """The counts a plan's summary gives, kept as planned objects stream past."""

    statuses: Counter[Status] = field(default_factory=Counter)
    actions: Counter[ChangeAction] = field(default_factory=Counter)
    notes: Counter[NoteKind] = field(default_factory=Counter)

    def add(self, planned: Planned) -> Planned:
        self.statuses[planned.status] += 1
        if planned.result is not None:
            self.actions.update(c.action for c in planned.result.changes)
            self.notes.update(n.kind for n in planned.result.notes)
        return planned

    def merge(self, other: Tally) -> Tally:
        """Add `other`'s counts (another project's) to these."""
        self.statuses.update(other.statuses)
        self.actions.update(other.actions)
        self.notes.update(other.notes)
        return self

    @property
    def total(self) -> int:
        return sum(self.statuses.values())

    @property
    def failed(self) -> bool:
        """Whether some object could not be read or rewritten."""
        return bool(self.statuses[Status.ERROR])


@dataclass(frozen=True)
class Plan:
    """A whole plan in memory (what `apply` works from; `plan` streams instead)."""

    migration: Migration
    options: Options
    objects: tuple[Planned, ...] = field(default=())

    @property
    def tally(self) -> Tally:
        tally = Tally()
        for planned in self.objects:
            tally.add(planned)
        return tally


def plan_one(source: Source, migration: Migration, options: Options) -> Planned:
    def planned() -> Planned:
        spec = spec_at(source.text, source.root, source.document)
        return Planned(
            source, rewrite(spec, migration, kind=source.kind, name=source.name, options=options)
        )

    return _guarded(source, planned)


def _guarded(source: Source, plan: Callable[[], Planned]) -> Planned:
    """`plan()`, or the object planned as an error: one object never stops the others."""
    if source.error is not None:
        return Planned(source, error=source.error)
    try:
        return plan()
    except WbmigrateError as exc:
        return Planned(source, error=str(exc))
    except Exception as exc:  # a bug: said for this object alone, and the others go on
        return Planned(source, error=bug(exc))


def bug(exc: Exception) -> str:
    """What is said of one object wbmigrate failed on (the others go on)."""
    return f"wbmigrate failed on it ({type(exc).__name__}); please report it"


def plan_each(
    sources: Iterable[Source], migration: Migration, options: Options
) -> Iterator[Planned]:
    """Plan objects one at a time, as they come: nothing is kept, so memory stays flat."""
    return (plan_one(source, migration, options) for source in sources)


def make_plan(sources: Iterable[Source], migration: Migration, options: Options) -> Plan:
    return Plan(migration, options, tuple(plan_each(sources, migration, options)))


# --- the plan as data -------------------------------------------------------------------------
# What `plan --format json` prints, `plan --out` saves and a backup manifest records: changing
# a field here changes all three, and what `apply --plan` reads back.

SIGNATURE = ("pointer", "action", "old", "new")  # what must match between a plan and a rerun


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
    )


def _run_entry(run: RunRef | None) -> dict[str, str] | None:
    if run is None:
        return None
    return {"name": run.name, "id": run.id, "created": run.created, "url": run.url}


def _run_of(entry: Any) -> RunRef | None:
    return None if entry is None else _run(entry)


def _run(entry: Any) -> RunRef:
    fields = [entry["name"], entry["id"], entry["created"], entry["url"]]
    if not all(isinstance(f, str) for f in fields):
        raise TypeError("a run is not named by strings")
    return RunRef(*fields)


def summary_entry(tally: Tally) -> dict[str, Any]:
    return {
        "objects": tally.total,
        **{status.value: tally.statuses[status] for status in Status},
        "actions": {a.value: tally.actions[a] for a in ChangeAction},
        "notes": {k.value: tally.notes[k] for k in NoteKind},
    }


def signature(changes: Iterable[Change]) -> list[list[Any]]:
    """The changes as plain data, to compare a fresh rewrite with a saved plan."""
    return [[c.pointer, c.action.value, c.old, c.new] for c in changes]


def entry_signature(entry: dict[str, Any]) -> list[list[Any]]:
    """The signature of an object entry read back from JSON (see `object_entry`)."""
    return [[c[field] for field in SIGNATURE] for c in entry.get("changes", [])]


def object_entry(planned: Planned) -> dict[str, Any]:
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
    """`json.dumps(value, indent=2, ensure_ascii=False)`, byte for byte, fast. The standard
    library indents in pure Python (a fifth of a large plan); orjson indents the same way in C
    but writes some values differently (`1e-05`, NaN, integers over 64 bits, lone
    surrogates). Both write the value compactly first, in C: where they agree on every byte,
    orjson's indented text is the standard library's."""
    try:
        fast = orjson.dumps(value)
        if fast == json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode():
            return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError; a surrogate
        pass
    return json.dumps(value, indent=2, ensure_ascii=False)
