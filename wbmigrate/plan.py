"""A plan: every object of a target rewritten in memory, nothing written (its data format is
`plan_json`).

One object that cannot be read or rewritten never stops the others: it is planned as an error.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from wbmigrate.engine.model import UNPARSED, ChangeAction, NoteKind, Options, Rewrite
from wbmigrate.errors import WbmigrateError, bug
from wbmigrate.rewrite import Walked, finish, spec_at, walk

if TYPE_CHECKING:
    from wbmigrate.mapping import Migration

T = TypeVar("T")


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
    url: str = ""  # where the W&B app shows a live object
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
    """The object rewritten, or planned as an error: one object never stops the others."""
    return finish_one(source, walk_one(source, migration, options), options)


def walk_one(source: Source, migration: Migration, options: Options) -> Walked | Planned:
    """The object walked (`rewrite.walk`: no key census needed), or planned as an error."""
    if source.error is not None:
        return Planned(source, error=source.error)

    def walked() -> Walked:
        spec = spec_at(source.text, source.root, source.document)
        return walk(spec, migration, options, source.kind, source.name)

    return _safely(source, walked)


def finish_one(source: Source, walked: Walked | Planned, options: Options) -> Planned:
    """The object's plan, its walk finished with `options`' key census (`rewrite.finish`);
    a walk kept without its spec (`light`) has it read again from the source's text."""
    if isinstance(walked, Planned):
        return walked
    if walked.spec is UNPARSED:
        walked = replace(walked, spec=spec_at(source.text, source.root, source.document))
    return _safely(source, lambda: Planned(source, finish(walked, options)))


def light(walked: Walked | Planned) -> Walked | Planned:
    """`walked` without its parsed spec, for `finish_one` to read again: a live plan keeps
    what it walks while the census is on its way, and the benchmark's 300 or so parsed specs
    held so made the collector's full passes cost 0.27-0.29 s of CPU, 0.10-0.15 s without
    (0.05-0.07 s planning each object only once the census is there)."""
    return replace(walked, spec=UNPARSED) if isinstance(walked, Walked) else walked


def _safely(source: Source, work: Callable[[], T]) -> T | Planned:
    try:
        return work()
    except WbmigrateError as exc:
        return Planned(source, error=str(exc))
    except Exception as exc:  # a bug: said for this object alone, and the others go on
        return Planned(source, error=bug(exc))
