"""What a rewrite returns: the new spec, the edits that make it, and what a reviewer must see."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from wbmigrate.edit.edits import Edit, materialize, pointer
from wbmigrate.engine.history import History


class _Unparsed(enum.Enum):
    """A spec's text not parsed yet: one member, itself in any process it is sent to."""

    UNPARSED = "unparsed"


UNPARSED: Any = _Unparsed.UNPARSED

SEPARATOR = " › "


def label(title: str, where: tuple[str, ...], field: str) -> str:
    """`report "Async health" › panel "Staleness" (Run History Line Plot) › metrics[1]`."""
    return SEPARATOR.join((title, *where, field))


class Mode(enum.Enum):
    DUAL = "dual"  # keep old keys for runs before the boundary, add the new ones beside them
    REPLACE = "replace"  # swap old keys for new ones


@dataclass(frozen=True)
class Options:
    mode: Mode = Mode.DUAL
    project_keys: frozenset[str] = frozenset()  # known metric keys, sharpening regex analysis
    rewrite_text: bool = False  # also rewrite names in markdown, titles and descriptions
    annotate: bool = True  # add the migration-boundary note to every view that changes
    history: History | None = None  # what the project's runs logged (live, from the census)


class ChangeAction(enum.Enum):
    RENAMED = "renamed"  # an old key replaced by its new key
    ADDED = "added"  # dual mode: the new key added beside the old one
    REMOVED = "removed"  # a key, map entry or whole panel dropped
    DISABLED = "disabled"  # an alert on a metric that is gone, switched off
    ANNOTATED = "annotated"  # the migration-boundary note


class NoteKind(enum.Enum):
    WARNING = "warning"  # a change with a side effect worth knowing
    REVIEW = "review"  # something wbmigrate would not change safely: a person should look
    INFO = "info"


@dataclass(frozen=True)
class Change:
    """One change to a spec. `pointer` is the RFC 6901 pointer of the value in the original
    spec (for an added value: of the value it was added beside)."""

    pointer: str
    action: ChangeAction
    old: Any
    new: Any
    where: tuple[str, ...]  # e.g. ('panel grid (block 4)', 'panel "Staleness" (Line Plot)')
    field: str  # e.g. 'metrics[1]'
    path: tuple[str | int, ...] = ()  # the value in the spec (an embedded string: the string)
    is_regex: bool = False  # `old` and `new` are regexes over keys, not keys
    is_config: bool = (
        False  # `old` and `new` name config keys (or a colour key on one), not metrics
    )

    def label(self, title: str) -> str:
        return label(title, self.where, self.field)


@dataclass(frozen=True)
class Note:
    """A warning or needs-review item, located like a change."""

    pointer: str
    kind: NoteKind
    message: str
    where: tuple[str, ...]
    field: str
    path: tuple[str | int, ...] = ()

    def label(self, title: str) -> str:
        return label(title, self.where, self.field)


class Unlogged(enum.Enum):
    """What a rewrite warns where it shows a key none of the runs the census read logged."""

    BLANK = "no run has logged {key} ({scope}): nothing shows for it until one does"
    COMPANION = (
        "no run has logged {key} either ({scope}): keeping it beside {new} adds nothing here; "
        "--mode replace would keep only the new key"
    )
    ALERT = "no run has logged {key} ({scope}): the alert cannot fire until a run logs it"


@dataclass(frozen=True)
class Shown:
    """A key a rewrite shows where the key census may say no run logged it: plain data, so the
    walk needs no census (`rewrite.census_warnings` turns it into a warning later)."""

    index: int  # where in the rewrite's notes its warning goes
    key: str
    unlogged: Unlogged
    where: tuple[str, ...]
    field: str
    path: tuple[str | int, ...]
    new: str = ""  # COMPANION: the new key shown beside `key`
    waits: bool = False  # say nothing before the project upgrades (a new key, in dual mode)
    # its JSON pointer, made only for a warning (most keys shown get none): `prefix` (that of
    # the string holding an embedded document) and the pointer of `at`, the path inside it
    at: tuple[str | int, ...] = ()
    prefix: str = ""

    def warning(self, scope: str) -> Note:
        """The warning, `scope` naming the runs the census read."""
        message = self.unlogged.value.format(key=self.key, scope=scope, new=self.new)
        at = self.prefix + pointer(self.at)
        return Note(at, NoteKind.WARNING, message, self.where, self.field, self.path)


@dataclass(frozen=True)
class Rewrite:
    """The result of rewriting one spec: nothing in it aliases mutable input."""

    kind: str
    title: str  # e.g. 'report "Async health"'
    original: Any = field(repr=False)  # the spec rewritten (read-only)
    edits: tuple[Edit, ...]
    changes: tuple[Change, ...]
    notes: tuple[Note, ...] = field(default=())
    change_edits: tuple[Edit, ...] = field(default=())  # the edit that makes each change
    shown: tuple[Shown, ...] = field(default=())  # keys the census may say no run logged
    kept: tuple[tuple[str | int, ...], ...] = field(default=())  # old keys dual mode leaves

    @cached_property
    def spec(self) -> Any:
        """The new spec, built on first use: a plan only needs the changes. It shares untouched
        subtrees with `original`; treat it as read-only."""
        return materialize(self.original, self.edits)

    @property
    def changed(self) -> bool:
        return bool(self.edits)
