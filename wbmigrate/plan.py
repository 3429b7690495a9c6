"""A plan: every object of a target rewritten in memory, nothing written.

One object that cannot be read or rewritten never stops the others: it is planned as an error.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from wbmigrate.engine.model import ChangeAction, NoteKind, Options, Rewrite
from wbmigrate.errors import WbmigrateError
from wbmigrate.mapping import Migration
from wbmigrate.rewrite import rewrite, spec_at


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


@dataclass(frozen=True)
class Plan:
    migration: Migration
    options: Options
    objects: tuple[Planned, ...] = field(default=())

    def count(self, status: Status) -> int:
        return sum(1 for o in self.objects if o.status is status)

    @property
    def actions(self) -> Counter[ChangeAction]:
        return Counter(c.action for o in self.objects if o.result for c in o.result.changes)

    @property
    def notes(self) -> Counter[NoteKind]:
        return Counter(n.kind for o in self.objects if o.result for n in o.result.notes)


def plan_one(source: Source, migration: Migration, options: Options) -> Planned:
    if source.error is not None:
        return Planned(source, error=source.error)
    try:
        spec = spec_at(source.text, source.root)
        result = rewrite(spec, migration, kind=source.kind, name=source.name, options=options)
    except WbmigrateError as exc:
        return Planned(source, error=str(exc))
    return Planned(source, result)


def make_plan(sources: Iterable[Source], migration: Migration, options: Options) -> Plan:
    return Plan(migration, options, tuple(plan_one(s, migration, options) for s in sources))
