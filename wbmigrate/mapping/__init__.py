"""Versioned mapping files, as data: steps of metric renames, removals and config-key renames.

Everything here is frozen. A `Migration` is a mapping composed over a range of its steps (see
`compose`), which is what the rewrite engine and `check` consume; `Fate` is what it does to
one name. The file itself is a `Mapping` (`mapping.file`), read and validated by
`mapping.parse`, found by id or path by `mapping.load`. Importing this loads no YAML reader.
"""

from __future__ import annotations

import datetime as dt
import enum
import heapq
import re
from collections.abc import Iterable
from collections.abc import Mapping as MappingABC
from dataclasses import dataclass, field, replace
from functools import cached_property

from wbmigrate.errors import Level, WbmigrateError
from wbmigrate.names import mention_pattern


@dataclass(frozen=True)
class Problem:
    """One finding of mapping validation: a rule broken at `path` of the YAML document, located
    at a line of the mapping file (a rule over the parsed steps knows the path alone: `at`)."""

    path: tuple[str | int, ...]
    code: str  # a stable rule name, e.g. "cycle" or "unknown-field"
    message: str
    level: Level = Level.ERROR
    file: str = ""
    line: int = 0

    def at(self, file: str, line: int) -> Problem:
        return replace(self, file=file, line=line)

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
    # the old spellings still load (an alias keeps them): `check` warns rather than fails
    deprecated: bool = False


@dataclass(frozen=True)
class ConfigRemoval:
    """A config field the framework no longer declares: a config that sets it fails to load."""

    path: str  # dotted config path, e.g. orchestrator.max_async_level
    reason: str
    toml: tuple[str, ...] = ()  # the dotted TOML key forms `check` looks for
    cli: tuple[str, ...] = ()  # the command-line flag forms
    version: str = ""  # the step that removed it


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
    # names an earlier step renamed away or removed that are logged (accepted) again from here on
    live_again: tuple[str, ...] = ()
    config_live_again: tuple[str, ...] = ()
    config_removed: tuple[ConfigRemoval, ...] = ()
    # old paths of earlier `deprecated: true` renames whose alias this step drops: they fail now
    aliases_removed: tuple[str, ...] = ()

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
class Fate:
    """What a migration does to one whole name, metric or config key: from now on it is shown as
    `new`, or it is gone (`new` is None). A removed name's `new` is its equivalent, the key that
    now carries the same values."""

    old: str
    action: Action
    new: str | None = None
    reason: str = ""  # REMOVED: why
    versions: tuple[str, ...] = ()  # the steps that changed it, the one that decided it last
    chain: tuple[str, ...] = ()  # a metric's every name, oldest first (ends with `new` if renamed)

    @property
    def removed(self) -> bool:
        return self.action is Action.REMOVED

    @property
    def version(self) -> str:
        return self.versions[-1] if self.versions else ""

    @property
    def equivalent(self) -> str | None:
        return self.new if self.removed else None


@dataclass(frozen=True)
class Migration:
    """A mapping composed from one step to another: every old name resolved in one lookup."""

    mapping_id: str
    steps: tuple[Step, ...]
    metrics: MappingABC[str, Fate]  # only names the steps rename or remove
    config: tuple[ConfigRename, ...]
    irreversible: MappingABC[str, tuple[str, ...]]  # new name -> the old names merged into it
    config_removed: tuple[ConfigRemoval, ...] = ()  # config paths removed, final unless live again
    # The mapping's `distinct:` groups, each as its members, each member as every name it has had
    # in any step of the mapping (not only this range's): series never to be merged into one.
    distinct_members: tuple[tuple[frozenset[str], ...], ...] = ()

    @property
    def start(self) -> Step:
        return self.steps[0]

    @property
    def end(self) -> Step:
        return self.steps[-1]

    def resolve(self, name: str) -> Fate:
        """Resolve a whole metric name; anything not named by the mapping is untouched."""
        return self.metrics.get(name) or Fate(name, Action.UNTOUCHED)

    def fate(self, name: str) -> Fate | None:
        """What becomes of `name`; None when the migration leaves it alone."""
        return self.metrics.get(name)

    # Derived name sets, built once per Migration: the walk asks for them for every object and
    # field, and rebuilding them there made planning quadratic in the size of the mapping.

    @cached_property
    def old_names(self) -> frozenset[str]:
        return frozenset(self.metrics)

    @cached_property
    def new_names(self) -> frozenset[str]:
        """Names the migration writes: rename targets and the equivalents of removed keys."""
        return frozenset(fate.new for fate in self.metrics.values() if fate.new)

    @cached_property
    def known_names(self) -> frozenset[str]:
        """Every name the mapping speaks of, old or new (what a regex is judged against)."""
        return self.old_names | self.new_names

    @cached_property
    def mention(self) -> re.Pattern[str] | None:
        """Whole-name mentions of any old name in free text (`names.mention_pattern`)."""
        return mention_pattern(self.old_names)

    @cached_property
    def anchor_bytes(self) -> tuple[bytes, ...]:
        """Substrings (UTF-8) of which every old name holds one: text without any cannot need a
        change."""
        return tuple(anchor.encode() for anchor in part_cover(self.metrics))

    @cached_property
    def config_fates(self) -> dict[str, Fate]:
        """What becomes of each config key the mapping renames or removes, by its dotted path:
        the path itself and every dotted form it has in config files (`toml`: a standalone
        orchestrator's config has `max_off_policy_steps` at its top level, and W&B logs that
        config as it is). A removed key's fate has no new name."""
        found: dict[str, Fate] = {}
        for rename in self.config:
            made = (s for s in reversed(self.steps) if any(r.new == rename.new for r in s.config))
            step = next((s.version for s in made), "")
            for old, new in {rename.old: rename.new, **rename.toml}.items():
                found[old] = Fate(old, Action.RENAMED, new, versions=(step,))
        for gone in self.config_removed:
            for old in dict.fromkeys((gone.path, *gone.toml)):
                found[old] = Fate(old, Action.REMOVED, None, gone.reason, (gone.version,))
        return found

    @cached_property
    def config_spellings(self) -> frozenset[str]:
        """The config keys, also as W&B spells a nested one: `a.value.b` for `a.b`
        (`names.config_key`; `a.b.value` holds `a.b` whole), what the walk looks for."""
        keys = tuple(self.config_fates)
        nested = (
            f"{head}.value.{rest}" for head, _, rest in (k.partition(".") for k in keys) if rest
        )
        return frozenset([*keys, *nested])

    def step_label(self, version: str) -> str:
        """`2026.05.25 (#2631)`: a step of this migration by its version."""
        return next((s.label for s in self.steps if s.version == version), version)

    @cached_property
    def config_anchor_bytes(self) -> tuple[bytes, ...]:
        return tuple(anchor.encode() for anchor in part_cover(self.config_fates))

    @cached_property
    def distinct(self) -> tuple[frozenset[str], ...]:
        """Each `distinct:` group as one set: every name, old or new, of any of its members."""
        return tuple(frozenset[str]().union(*group) for group in self.distinct_members)


_PARTS = re.compile(r"[^/.]+")  # a name's parts: between `/` and `.`
WORDS = re.compile(r"[^_-]+")  # a part's words: between `_` and `-`
RUN_WORDS = 4  # the longest run of words tried as an anchor, short of the whole part
MIN_ANCHOR = 3  # a shorter run of words would be found in too much text to skip any


def name_parts(name: str) -> set[str]:
    """Substrings of `name` that may anchor it: each of its parts (split at `/` and `.`), and
    each run of up to `RUN_WORDS` words of a part (split at `_` and `-`), so `off_policy` can
    anchor `dispatcher/off_policy_level_max` too. At most `4 x words` per part."""
    found = set()
    for part in _PARTS.findall(name.strip("-")):
        found.add(part)
        words = [(m.start(), m.end()) for m in WORDS.finditer(part)]
        for i, (start, _) in enumerate(words):
            for _, end in words[i : i + RUN_WORDS]:
                if end - start >= MIN_ANCHOR:
                    found.add(part[start:end])
    return found


def part_cover(names: Iterable[str]) -> tuple[str, ...]:
    """A small set of substrings such that every name contains one: greedy set cover over the
    names' own parts and runs of words (`name_parts`), most names first, then the longer
    substring, then alphabetical order.

    Near-linear in the total number of parts (a heap with lazy counts), where testing every part
    against every name was cubic and took minutes for 10,000 names. A name without parts is
    its own anchor."""
    parts_of = {name: name_parts(name) for name in names}
    holders: dict[str, list[str]] = {}
    for name, parts in parts_of.items():
        for part in parts:
            holders.setdefault(part, []).append(name)
    count = {part: len(held) for part, held in holders.items()}
    heap = [(-n, -len(part), part) for part, n in count.items()]
    heapq.heapify(heap)
    covered: set[str] = set()
    chosen: list[str] = []
    while heap:
        negative, _, part = heapq.heappop(heap)
        if count[part] == 0:
            continue
        if -negative != count[part]:  # stale: its names were partly covered since
            heapq.heappush(heap, (-count[part], -len(part), part))
            continue
        chosen.append(part)
        for name in holders[part]:
            if name not in covered:
                covered.add(name)
                for other in parts_of[name]:
                    count[other] -= 1
    return tuple(chosen + sorted(name for name, parts in parts_of.items() if not parts))


class MappingError(WbmigrateError):
    """A mapping file that cannot be used; `problems` holds every error found, each located."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class UnknownVersionError(WbmigrateError):
    """A --from/--to version the mapping does not have."""
