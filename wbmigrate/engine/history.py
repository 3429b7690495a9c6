"""What a project's runs have logged, and where its own boundary lies: the facts a key census
reads from W&B, reduced (purely) to what a plan needs.

A project upgrades when its team does, not when the trainer merged the rename: its boundary is
the last run that logged an old key and the first that logged a new one. Runs in between may
log neither, and a run may log both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wbmigrate.mapping import Migration, Step

DEFAULT_RUNS = 500  # the newest runs a census reads unless told otherwise (`--runs`)


@dataclass(frozen=True)
class RunRef:
    """A run as a reader finds it: its display name, its id (in URLs), when it was created."""

    name: str
    id: str
    created: str  # ISO 8601, as W&B gives it
    url: str = ""

    @property
    def day(self) -> str:
        return self.created[:10]


@dataclass(frozen=True)
class RunKeys:
    """One run and every key it logged (history and summary)."""

    run: RunRef
    keys: frozenset[str]


@dataclass(frozen=True)
class Span:
    """The first and last run (by creation) that logged a key."""

    first: RunRef
    last: RunRef


@dataclass(frozen=True)
class History:
    """The census of a project: the keys its runs logged, how many runs were read, the
    project's boundary, and the steps its runs span. `spans` covers the names the mapping
    knows."""

    keys: frozenset[str]
    runs: int  # runs read
    total: int | None = None  # runs the project holds, when W&B said
    last_old: RunRef | None = None  # the newest run that logged an old key
    first_new: RunRef | None = None  # the oldest run that logged a new key
    spans: dict[str, Span] = field(default_factory=dict, compare=False, hash=False)
    # the labels of the oldest and newest step whose keys the runs logged (`step_span`)
    steps: tuple[str, str] | None = None

    @property
    def upgraded(self) -> bool:
        return self.first_new is not None

    @property
    def partial(self) -> bool:
        return self.total is not None and self.runs < self.total

    def logged(self, key: str) -> bool:
        return key in self.keys

    @property
    def scope(self) -> str:
        """Which runs the census read, in words: `its 12 runs`, `the 500 newest of its 1,234`."""
        if self.partial:
            return f"the {self.runs:,} newest of its {self.total:,} runs"
        return f"its {self.runs:,} run" + ("" if self.runs == 1 else "s")


def history_of(runs: Iterable[RunKeys], migration: Migration, total: int | None = None) -> History:
    """Reduce the runs read (any order) to the project's history."""
    # the names that mark a run as from before the migration, and from after it: a name that is
    # both (renamed away in one step, back in another) marks neither
    old, new = migration.old_names, migration.new_names - migration.old_names
    known = migration.known_names
    ordered = sorted(runs, key=lambda r: (r.run.created, r.run.id))
    keys: set[str] = set()
    spans: dict[str, Span] = {}
    last_old = first_new = None
    for entry in ordered:
        keys |= entry.keys
        if entry.keys & old:
            last_old = entry.run
        if first_new is None and entry.keys & new:
            first_new = entry.run
        for key in entry.keys & known:
            span = spans.get(key)
            spans[key] = Span(span.first if span else entry.run, entry.run)
    steps = step_span(keys, migration.steps)
    return History(frozenset(keys), len(ordered), total, last_old, first_new, spans, steps)


def step_span(keys: set[str], steps: tuple[Step, ...]) -> tuple[str, str] | None:
    """The steps the runs' keys span: from the oldest step whose old names (renamed or removed)
    some run logged, runs from before it, to the newest whose new names (renamed into, or live
    again) some run logged, runs from after it. Config keys are not logged, so not counted. An
    old name a later step brings back (renamed into, or live again) does not date a run before
    its step: the run may be from after its return."""
    back = {n: i for i, s in enumerate(steps) for n in (*s.renamed.values(), *s.live_again)}
    olds = [
        i
        for i, s in enumerate(steps)
        if any(n in keys and back.get(n, -1) < i for n in (*s.renamed, *s.removed))
    ]
    news = [
        i
        for i, s in enumerate(steps)
        if any(n in keys for n in (*s.renamed.values(), *s.live_again))
    ]
    found = olds[:1] + news[-1:]
    return (steps[min(found)].label, steps[max(found)].label) if found else None
