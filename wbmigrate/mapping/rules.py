"""The rename rules a mapping must keep, within each step and across steps.

Within a step renames happen at once, so a chain (A->B and B->C in one step) is ambiguous and a
cycle is impossible. Across steps a name, once renamed away or removed, may come back only where
a step says so (`live_again:`): otherwise old dashboards holding it could mean either metric.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping as MappingABC
from dataclasses import dataclass

from wbmigrate.edit.located_yaml import Located
from wbmigrate.edit.located_yaml import Path as YamlPath
from wbmigrate.errors import Level
from wbmigrate.mapping import Fate, Problem, Step
from wbmigrate.mapping.compose import Composer, many_to_one
from wbmigrate.mapping.distinct import check as check_distinct
from wbmigrate.mapping.file import Mapping


@dataclass(frozen=True)
class _Entry:
    """One row of a step's rename table: `new` is None for a removal."""

    old: str
    new: str | None
    path: YamlPath


def check(mapping: Mapping, located: Located, file: str) -> list[Problem]:
    """Every rule broken by `mapping`, located by `located` in `file`."""
    found: list[Problem] = []
    for i, step in enumerate(mapping.steps):
        found += _check_step(list(_metric_entries(step, i)), "metric")
        found += _check_equivalents(step, i)
        for what, entries in _config_tables(step, i):
            found += _check_step(entries, what)
    for rule in (_check_versions, _check_across, _check_aliases, _check_many_to_one):
        found += rule(mapping)
    found += check_distinct(mapping.distinct, mapping.steps)
    return [problem.at(file, located.line(problem.path)) for problem in found]


def _metric_entries(step: Step, i: int) -> Iterator[_Entry]:
    for old, new in step.renamed.items():
        yield _Entry(old, new, ("steps", i, "metrics", "renamed", old))
    for old in step.removed:
        yield _Entry(old, None, ("steps", i, "metrics", "removed", old))


def _config_path_entries(step: Step, i: int) -> Iterator[_Entry]:
    for j, rename in enumerate(step.config):
        yield _Entry(rename.old, rename.new, ("steps", i, "config", "renamed", j, "old"))
    for j, gone in enumerate(step.config_removed):
        yield _Entry(gone.path, None, ("steps", i, "config", "removed", j, "path"))


def _config_tables(step: Step, i: int) -> Iterator[tuple[str, list[_Entry]]]:
    for j, rename in enumerate(step.config):
        at = ("steps", i, "config", "renamed", j)
        yield "TOML key", [_Entry(o, n, (*at, "toml", o)) for o, n in rename.toml.items()]
        yield "command-line flag", [_Entry(o, n, (*at, "cli", o)) for o, n in rename.cli.items()]
    yield "config path", list(_config_path_entries(step, i))


def _check_step(entries: list[_Entry], what: str) -> Iterator[Problem]:
    olds: dict[str, _Entry] = {}
    for entry in entries:
        if entry.old in olds:
            message = f"{what} {entry.old!r} appears twice in this step"
            yield Problem(entry.path, "duplicate-old-key", message)
        olds.setdefault(entry.old, entry)
    for entry in entries:
        if entry.new is None:
            continue
        if entry.new == entry.old:
            message = f"cycle: {what} {entry.old!r} is renamed to itself"
            yield Problem(entry.path, "cycle", message)
        elif entry.new in olds and olds[entry.new].new is None:
            message = (
                f"{what} {entry.old!r} is renamed to {entry.new!r}, which this same step removes"
            )
            yield Problem(entry.path, "rename-into-removed", message)
        elif entry.new in olds:
            yield from _chain_in_step(entry, olds, what)


def _chain_in_step(entry: _Entry, olds: dict[str, _Entry], what: str) -> Iterator[Problem]:
    chain = [entry.old]
    name: str | None = entry.new
    while name is not None and name in olds and name not in chain:
        chain.append(name)
        name = olds[name].new
    if name != entry.old:
        message = (
            f"{what} {entry.old!r} is renamed to {entry.new!r}, which this same step renames "
            "again; put the second rename in a later step"
        )
        yield Problem(entry.path, "chain-in-step", message)
    elif entry.old == min(chain):  # report each cycle once
        loop = " -> ".join([*chain, entry.old])
        yield Problem(entry.path, "cycle", f"cycle: {what}s {loop} in one step")


def _check_equivalents(step: Step, i: int) -> Iterator[Problem]:
    for old, removal in step.removed.items():
        path = ("steps", i, "metrics", "removed", old, "equivalent")
        equivalent = removal.equivalent
        if equivalent == old:
            message = f"removed metric {old!r} is its own equivalent"
        elif equivalent is not None and equivalent in step.renamed:
            message = (
                f"equivalent {equivalent!r} is renamed by this same step; name the key it "
                f"becomes ({step.renamed[equivalent]!r})"
            )
        elif equivalent in step.removed:
            message = f"equivalent {equivalent!r} is removed by this same step"
        else:
            continue
        yield Problem(path, "bad-equivalent", message)


def _check_versions(mapping: Mapping) -> Iterator[Problem]:
    seen: set[str] = set()
    for i, (before, step) in enumerate(zip((None, *mapping.steps), mapping.steps, strict=False)):
        if step.version in seen:
            message = f"version {step.version!r} appears twice"
            yield Problem(("steps", i, "version"), "duplicate-version", message)
        seen.add(step.version)
        if before is not None and step.date < before.date:
            message = (
                f"step {step.version} ({step.date}) is dated before the step above it "
                f"({before.date}); list steps oldest first"
            )
            yield Problem(("steps", i, "date"), "step-order", message)


def _check_across(mapping: Mapping) -> Iterator[Problem]:
    """A name renamed away or removed by one step may not appear again in a later one, unless
    that step lists it as live again: from then on it is live, and may be renamed anew."""
    retired: dict[str, str] = {}  # name -> version of the step that retired it
    earlier = Composer()  # the steps above step i, composed one more at the end of each turn
    for i, step in enumerate(mapping.steps):
        live = {*step.live_again, *step.config_live_again}
        yield from _not_retired(step, i, retired)
        for entry in [*_metric_entries(step, i), *_config_path_entries(step, i)]:
            what = "config path" if entry.path[2] == "config" else "metric"
            if entry.old in live:
                message = f"{what} {entry.old!r} is listed live again by this same step"
                yield Problem(entry.path, "name-reused", message)
            elif entry.old in retired:
                message = (
                    f"{what} {entry.old!r} was already renamed or removed in step "
                    f"{retired[entry.old]}; a mapping cannot reuse a name"
                )
                yield Problem(entry.path, "name-reused", message)
            elif entry.new in retired and entry.new not in live:
                yield _reintroduced(entry, retired, earlier.metrics, what)
        for name, removal in step.removed.items():
            if removal.equivalent in retired and removal.equivalent not in live:
                message = (
                    f"equivalent {removal.equivalent!r} no longer exists: step "
                    f"{retired[removal.equivalent]} renamed or removed it"
                )
                path = ("steps", i, "metrics", "removed", name, "equivalent")
                yield Problem(path, "bad-equivalent", message)
        for name in live:
            retired.pop(name, None)
        config_olds = [r.old for r in step.config] + [r.path for r in step.config_removed]
        retired.update(dict.fromkeys([*step.renamed, *step.removed, *config_olds], step.version))
        earlier.add(step)


def _check_aliases(mapping: Mapping) -> Iterator[Problem]:
    """A dropped alias must be the old path of an earlier `deprecated: true` rename whose
    alias still loads: else there is no alias to drop."""
    aliased: set[str] = set()
    for i, step in enumerate(mapping.steps):
        for j, name in enumerate(step.aliases_removed):
            if name not in aliased:
                message = (
                    f"dropped alias {name!r} is not the old path of an earlier deprecated "
                    "config rename that still loads"
                )
                path = ("steps", i, "config", "aliases_removed", j)
                yield Problem(path, "not-deprecated", message)
        aliased -= {*step.aliases_removed, *step.config_live_again}
        aliased |= {rename.old for rename in step.config if rename.deprecated}


def _not_retired(step: Step, i: int, retired: dict[str, str]) -> Iterator[Problem]:
    """Only a name an earlier step retired can be live again."""
    for kind, what, names in (
        ("metrics", "metric", step.live_again),
        ("config", "config path", step.config_live_again),
    ):
        for j, name in enumerate(names):
            if name not in retired:
                message = (
                    f"{what} {name!r} is listed live again, but no earlier step renamed or "
                    "removed it"
                )
                yield Problem(("steps", i, kind, "live_again", j), "not-retired", message)


def _reintroduced(
    entry: _Entry, retired: dict[str, str], earlier: MappingABC[str, Fate], what: str
) -> Problem:
    assert entry.new is not None
    fate = earlier.get(entry.new) if what == "metric" else None
    if fate is not None and not fate.removed and fate.new == entry.old:
        loop = " -> ".join([*fate.chain, entry.new])
        return Problem(entry.path, "cycle", f"cycle across steps: {loop}")
    message = (
        f"{what} {entry.old!r} is renamed to {entry.new!r}, a name step "
        f"{retired[entry.new]} renamed or removed; a mapping cannot reuse a name"
    )
    return Problem(entry.path, "name-reused", message)


def _check_many_to_one(mapping: Mapping) -> Iterator[Problem]:
    # Each rename target's last rename, in one pass: searching every step for each target was
    # quadratic when many renames merge.
    last = {
        target: ("steps", i, "metrics", "renamed", old)
        for i, step in enumerate(mapping.steps)
        for old, target in step.renamed.items()
    }
    for new, olds in many_to_one(mapping.steps).items():
        message = (
            f"irreversible: {', '.join(map(repr, olds))} are all renamed to {new!r}; after "
            "migration their series cannot be told apart"
        )
        yield Problem(last[new], "many-to-one", message, Level.WARNING)
