"""A mapping file as validated: its id, title and ordered steps. `migration()` composes a range
of them into the one lookup the engine uses."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from wbmigrate.mapping import Fate, Migration, Problem, Step, UnknownVersionError
from wbmigrate.mapping.compose import compose
from wbmigrate.mapping.distinct import Groups, expand


@dataclass(frozen=True)
class Mapping:
    """A validated mapping file."""

    id: str
    title: str
    format: int
    sources: tuple[str, ...]
    steps: tuple[Step, ...]
    path: Path | None = None
    description: str = ""
    distinct: Groups = ()  # metrics never to be merged into one, as the file names them
    warnings: tuple[Problem, ...] = ()
    # each range composed once (a Migration is frozen, and builds its name sets once; see
    # `mapping.load`)
    _composed: dict[tuple[int, int], Migration] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def versions(self) -> tuple[str, ...]:
        return tuple(step.version for step in self.steps)

    def migration(self, start: str | None = None, to: str | None = None) -> Migration:
        """Compose the steps from `start` to `to`, both included (default: all of them)."""
        first = self._index(start) if start is not None else 0
        last = self._index(to) if to is not None else len(self.steps) - 1
        if first > last:
            raise UnknownVersionError(f"--from {start} comes after --to {to} in mapping {self.id}")
        if (first, last) not in self._composed:
            steps = self.steps[first : last + 1]
            self._composed[first, last] = compose(self.id, steps, self.distinct_members)
        return self._composed[first, last]

    @cached_property
    def distinct_members(self) -> tuple[tuple[frozenset[str], ...], ...]:
        """The `distinct:` groups, each member as every name it has in any step: a group is
        about series, whatever range of steps a migration composes."""
        return expand(self.distinct, self.steps)

    def resolve(self, name: str) -> Fate:
        """Resolve a whole metric name across every step of the mapping (docs/specs.md shows it)."""
        return self.migration().resolve(name)

    def _index(self, version: str) -> int:
        if version not in self.versions:
            known = ", ".join(step.label for step in self.steps)
            raise UnknownVersionError(
                f"mapping {self.id} has no version {version!r} (versions: {known})"
            )
        return self.versions.index(version)
