"""`distinct:` groups: metrics a mapping declares to be different series, which no step may merge
into one key. A member is named by any one of its names and stands for every name its series has
had across all the mapping's steps: its old names and the names it was renamed to.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from wbmigrate.edit.located_yaml import Path as YamlPath
from wbmigrate.errors import Level
from wbmigrate.mapping import Problem, Step
from wbmigrate.mapping.compose import compose

Groups = tuple[tuple[str, ...], ...]  # as the file lists them


def expand(groups: Groups, steps: tuple[Step, ...]) -> tuple[tuple[frozenset[str], ...], ...]:
    """Each group's members (once each), each as every name its series has in `steps`."""
    if not groups:
        return ()
    series = _Series(steps)
    return tuple(tuple(series.names(name) for name in dict.fromkeys(group)) for group in groups)


def check(groups: Groups, steps: tuple[Step, ...]) -> Iterator[Problem]:
    """Every distinct rule broken: a group too small, a member twice, a member the mapping does
    not know, two members the steps merge into one key."""
    if not groups:
        return
    series = _Series(steps)
    for i, group in enumerate(groups):
        path = ("distinct", i)
        if len(group) < 2:
            listed = ", ".join(map(repr, group)) or "nothing"
            message = f"distinct group lists {listed}; name two or more metrics to keep apart"
            yield Problem(path, "distinct-size", message)
            continue
        members: dict[str, int] = {}
        for j, name in enumerate(group):
            if name in members:
                message = f"distinct group names {name!r} twice"
                yield Problem((*path, j), "distinct-duplicate", message)
                continue
            members[name] = j
            if name not in series.known:
                message = (
                    f"distinct metric {name!r} is not a name this mapping renames, removes or "
                    "renames into; is it spelled right?"
                )
                yield Problem((*path, j), "distinct-unknown", message, Level.WARNING)
        yield from _merges(series, members, path)


def _merges(series: _Series, members: dict[str, int], path: YamlPath) -> Iterator[Problem]:
    """Each member that lands on a key of an earlier member, reported once, at the later one."""
    earlier: list[str] = []
    for name, j in members.items():
        for other in earlier:
            merged = series.merged_into(other, name)
            if merged is not None:
                yield Problem((*path, j), "distinct-merged", _merged(other, name, merged))
                break
        earlier.append(name)


def _merged(first: str, second: str, key: str) -> str:
    message = (
        f"distinct metrics {first!r} and {second!r} would both be shown as {key!r} after "
        "migration; their series must stay apart"
    )
    return message if key not in (first, second) else f"{message} (one becomes the other)"


class _Series:
    """The names of each metric's series, from the rename chains of every step composed."""

    def __init__(self, steps: tuple[Step, ...]) -> None:
        self.migration = compose("", steps)
        self.known = self.migration.known_names
        self.chains: dict[str, set[str]] = defaultdict(set)
        for fate in self.migration.metrics.values():
            for name in fate.chain:
                self.chains[name].update(fate.chain)
        self.equivalents: dict[str, set[str]] = defaultdict(set)
        for step in steps:
            for old, removal in step.removed.items():
                if removal.equivalent is not None:
                    self.equivalents[old].add(removal.equivalent)

    def names(self, name: str) -> frozenset[str]:
        """`name`, the names it was renamed to, and those renamed into it (at any depth):
        chains only run forward, so two names share a chain only if one becomes the other, or
        both become a third."""
        return frozenset(self.chains.get(name, {name}))

    def landing(self, name: str) -> frozenset[str]:
        """Every key old dashboards showing `name` may show after migration: its series, and
        the series of the equivalent of any of its names that a step removes."""
        names = self.names(name)
        equivalents = [e for n in names for e in self.equivalents.get(n, ())]
        return names.union(*map(self.names, equivalents))

    def merged_into(self, first: str, second: str) -> str | None:
        """A key both `first` and `second` would be shown as, or None if they stay apart."""
        shared = self.landing(first) & self.landing(second)
        if not shared:
            return None
        fate = self.migration.fate(first)
        final = first if fate is None else fate.new
        return final if final in shared else min(shared)
