"""The mapping's data: versioned steps of metric renames, removals and config-key renames.

Everything here is frozen. A `Migration` is a mapping composed over a range of its steps (see
`compose`), which is what the rewrite engine and `check` consume; `Fate` is what it does to
one name. The file itself is a `Mapping` (`mapping.file`).
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Mapping as MappingABC
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TypeVar

from wbmigrate.errors import WbmigrateError
from wbmigrate.names import cover


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Problem:
    """One finding of mapping validation, located at a line of the mapping file."""

    file: str
    line: int
    code: str  # a stable rule name, e.g. "cycle" or "unknown-field"
    message: str
    severity: Severity = Severity.ERROR

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message} [{self.code}]"


@dataclass(frozen=True)
class Removal:
    """A metric that is no longer logged."""

    reason: str
    equivalent: str | None = None  # a key that now carries the same values, if any


@dataclass(frozen=True)
class ConfigRename:
    """A renamed config key, in every form a user writes it."""

    old: str  # dotted config path, e.g. orchestrator.max_off_policy_steps
    new: str
    toml: MappingABC[str, str] = field(default_factory=dict)  # dotted TOML key: old -> new
    cli: MappingABC[str, str] = field(default_factory=dict)  # command-line flag: old -> new


@dataclass(frozen=True)
class Step:
    """One versioned change of the upstream project, e.g. one merged pull request."""

    version: str
    date: dt.date
    source: str  # link to the pull request or release that made the change
    summary: str
    renamed: MappingABC[str, str]  # metric: old -> new, in file order
    removed: MappingABC[str, Removal]
    config: tuple[ConfigRename, ...]
    annotation: str  # text of the migration-boundary note added to migrated views

    @property
    def pull(self) -> str | None:
        """`#4253` when the source is a pull-request link."""
        head, sep, tail = self.source.rstrip("/").rpartition("/pull/")
        return f"#{tail}" if sep and head and tail.isdigit() else None

    @property
    def label(self) -> str:
        return f"{self.version} ({self.pull})" if self.pull else self.version


class Action(enum.Enum):
    RENAMED = "renamed"
    REMOVED = "removed"
    UNTOUCHED = "untouched"


@dataclass(frozen=True)
class Resolution:
    """What a migration does to one whole metric name."""

    name: str
    action: Action
    new: str | None = None  # RENAMED: the name it has after the last step
    removal: Removal | None = None  # REMOVED: why, and the equivalent key if any
    chain: tuple[str, ...] = ()  # every name it had, oldest first (ends with `new` if renamed)
    versions: tuple[str, ...] = ()  # the steps that changed it

    @property
    def equivalent(self) -> str | None:
        return self.removal.equivalent if self.removal else None


@dataclass(frozen=True)
class Fate:
    """What becomes of one whole metric name, as the engine and `check` act on it: shown as
    `new` from now on, or gone (`new` is None)."""

    old: str
    new: str | None
    removed: bool  # no longer logged (when `new` is set, it is the removed key's equivalent)
    reason: str = ""  # why it was removed
    version: str = ""  # the step that decided it


@dataclass(frozen=True)
class Migration:
    """A mapping composed from one step to another: every old name resolved in one lookup."""

    mapping_id: str
    steps: tuple[Step, ...]
    metrics: MappingABC[str, Resolution]  # only names the steps rename or remove
    config: tuple[ConfigRename, ...]
    irreversible: MappingABC[str, tuple[str, ...]]  # new name -> the old names merged into it

    @property
    def start(self) -> Step:
        return self.steps[0]

    @property
    def end(self) -> Step:
        return self.steps[-1]

    def resolve(self, name: str) -> Resolution:
        """Resolve a whole metric name; anything not named by the mapping is untouched."""
        found = self.metrics.get(name)
        return found if found is not None else Resolution(name, Action.UNTOUCHED)

    def fate(self, name: str) -> Fate | None:
        """What becomes of `name`; None when the migration leaves it alone."""
        resolution = self.metrics.get(name)
        if resolution is None:
            return None
        version = resolution.versions[-1]
        if resolution.action is Action.RENAMED:
            return Fate(name, resolution.new, False, version=version)
        assert resolution.removal is not None
        return Fate(name, resolution.equivalent, True, resolution.removal.reason, version)

    @property
    def old_names(self) -> frozenset[str]:
        return frozenset(self.metrics)

    @cached_property
    def anchors(self) -> tuple[str, ...]:
        """Substrings of which every old name holds one: text without any cannot need a change."""
        return cover(sorted(self.metrics))

    @cached_property
    def anchor_bytes(self) -> tuple[bytes, ...]:
        return tuple(anchor.encode() for anchor in self.anchors)

    @property
    def new_names(self) -> frozenset[str]:
        """Names the migration writes: rename targets and the equivalents of removed keys."""
        names = {r.new for r in self.metrics.values() if r.new}
        names |= {r.equivalent for r in self.metrics.values() if r.equivalent}
        return frozenset(names)


K = TypeVar("K")
V = TypeVar("V")


def frozen_dict(items: dict[K, V]) -> MappingABC[K, V]:
    """A read-only view, so frozen dataclasses stay frozen all the way down."""
    return MappingProxyType(items)


class MappingError(WbmigrateError):
    """A mapping file that cannot be used; `problems` holds every error found, each located."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class UnknownVersionError(WbmigrateError):
    """A --from/--to version the mapping does not have."""
