"""`verify`: the closing checks of a migration, as pure functions over specs.

What must hold once a project (or its dashboards as code) is migrated, however it was done:

- **No old name left** where the mode does not keep it: the engine would change nothing (dual
  mode: every old key has its new companion; replace mode: no old key at all; no panel or
  alert on a metric that is gone).
- **The split survives**: keys the mapping declares `distinct` (in-flight and in-queue
  staleness) are still separate series. A panel showing one key twice had two series merged
  into it; against a baseline (the originals), a panel that showed several members of a group
  must still show each of them.
- **No key nobody logs** (live, from the key census): a panel series or an alert on a key no
  run of the project has logged shows nothing.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from wbmigrate.edit.edits import pointer
from wbmigrate.engine.model import SEPARATOR, Change, ChangeAction, Options, Rewrite
from wbmigrate.engine.panels import find_panels, panel_label, series_of
from wbmigrate.errors import Level
from wbmigrate.kinds.automation import alert_metrics
from wbmigrate.mapping import Migration
from wbmigrate.names import accessor
from wbmigrate.plan import Source, plan_one


class Check(enum.Enum):
    OLD_NAME_LEFT = "old-name-left"
    SPLIT_LOST = "split-lost"
    UNLOGGED_KEY = "unlogged-key"
    CONFIG_INVALID = "config-invalid"  # files: a config prime-rl's own schema rejects

    @property
    def level(self) -> Level:
        return Level.WARNING if self is Check.UNLOGGED_KEY else Level.ERROR


@dataclass(frozen=True)
class Finding:
    """One thing that does not hold, about one object, located by a pointer into its spec."""

    check: Check
    title: str  # `report "Async health"`
    origin: str  # a file path or a W&B id
    where: tuple[str, ...]  # places inside the object, as a plan labels them
    pointer: str
    message: str

    @property
    def level(self) -> Level:
        return self.check.level

    @property
    def label(self) -> str:
        return SEPARATOR.join((self.title, *self.where))


@dataclass(frozen=True)
class Verified:
    """One object verified: its findings, or why it could not be read."""

    source: Source
    title: str
    findings: tuple[Finding, ...] = ()
    error: str | None = None
    alerts: tuple[str, ...] = field(default=(), compare=False)  # the metrics its alert watches


@dataclass(frozen=True)
class Verification:
    """One `verify` run: every object verified, what does not hold, and against what."""

    target: str
    verified: list[Verified]
    found: list[Finding]
    baseline: str  # where the originals came from, or "" without --baseline
    files: bool  # a folder or file of specs (else live projects)

    @property
    def holds(self) -> bool:
        return not self.found and not any(v.error for v in self.verified)


# Panels of an original, for --baseline: per panel (its `__id__`, else its pointer), the
# metric names it showed, in the newest names.
Panels = dict[str, frozenset[str]]


def verify_one(
    source: Source, migration: Migration, options: Options, baseline: Panels | None = None
) -> Verified:
    """Every check on one object (`baseline`: its panels before the migration)."""
    planned = plan_one(source, migration, replace(options, annotate=False))
    if planned.result is None:
        return Verified(source, planned.title, error=planned.error)
    result = planned.result
    found = list(_old_names_left(result, source))
    spec = result.original
    if result.kind == "automation":
        watched = tuple(alert_metrics(spec))
        found += _unlogged(result, source, migration, options, [Place((), "metric", "", watched)])
        return Verified(source, result.title, tuple(found), alerts=watched)
    panels = list(_panels(spec))
    found += _split(result, source, migration, panels, baseline)
    found += _unlogged(result, source, migration, options, panels)
    return Verified(source, result.title, tuple(found))


def findings(verified: Iterable[Verified], extra: Iterable[Finding]) -> list[Finding]:
    """Every object's findings, then `extra` (about several objects, or about files)."""
    return [f for v in verified for f in v.findings] + list(extra)


def baseline_panels(spec: Any, migration: Migration) -> Panels:
    """The panels of an original spec, for comparing with its migrated form."""
    return {p.identity: frozenset(newest(migration, k) for k in p.keys) for p in _panels(spec)}


def newest(migration: Migration, name: str) -> str:
    """A metric's name in the newest version (itself when the mapping leaves it alone)."""
    fate = migration.fate(name)
    return fate.new if fate is not None and fate.new else name


# --- old names left -----------------------------------------------------------------------


def _old_names_left(result: Rewrite, source: Source) -> Iterator[Finding]:
    """What a plan of the object would still change: each such change is an old name left."""
    seen: set[str] = set()  # one finding per place (a disabled alert: one for the alert)
    for change in result.changes:
        if change.action is ChangeAction.ANNOTATED:
            continue
        message = _left(change)
        place = message if change.action is ChangeAction.DISABLED else change.pointer
        if place in seen:
            continue
        seen.add(place)
        where, at = (*change.where, change.field), change.pointer
        yield Finding(Check.OLD_NAME_LEFT, result.title, source.origin, where, at, message)


def _left(change: Change) -> str:
    old, new = change.old, change.new
    if change.action is ChangeAction.ADDED:
        return f"{old} has no companion {new}: runs after the boundary are missing here"
    if change.action is ChangeAction.DISABLED:
        return "the alert watches a metric that is no longer logged, and is still enabled"
    if change.action is ChangeAction.REMOVED and isinstance(old, dict):
        return (
            f"the panel shows only metrics that are no longer logged ({', '.join(series_of(old))})"
        )
    if change.action is ChangeAction.REMOVED:
        return f"{old} is left, and is no longer logged (or is already shown by its new key)"
    if change.is_regex:
        return f"the regex does not match the new keys; it would become {new!r}"
    return f"{old} is left; it is {new} now"


# --- the split ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """A place in a spec that shows metric keys: a panel, or an alert's metric."""

    path: tuple[str | int, ...]
    label: str
    identity: str  # a panel's `__id__`, else its pointer: how a baseline finds it
    keys: tuple[str, ...]  # the metric names it shows
    listed: tuple[str, ...] = ()  # its `metrics` list: a repeat is two series merged (an
    # expression may repeat a series)


def _panels(spec: Any) -> Iterator[Place]:
    for path, panel in find_panels(spec):
        index = path[-1] if path and isinstance(path[-1], int) else 0
        ident = panel.get("__id__")
        identity = ident if isinstance(ident, str) and ident else pointer(path)
        metrics = panel["config"].get("metrics")
        listed = (
            [a.name for m in metrics if (a := accessor(m))] if isinstance(metrics, list) else []
        )
        yield Place(
            path, panel_label(panel, index), identity, tuple(series_of(panel)), tuple(listed)
        )


def _groups(migration: Migration) -> list[frozenset[str]]:
    """The distinct groups, in the newest names."""
    return [frozenset(newest(migration, k) for k in group) for group in migration.distinct]


def _split(
    result: Rewrite,
    source: Source,
    migration: Migration,
    panels: list[Place],
    baseline: Panels | None,
) -> Iterator[Finding]:
    groups = _groups(migration)
    targets = migration.new_names - migration.old_names
    for p in panels:
        before = (baseline or {}).get(p.identity) or (baseline or {}).get(pointer(p.path))
        message = _merged(targets, p.listed) or _lost(migration, groups, p.keys, before)
        if message:
            where, at = (p.label,), pointer(p.path)
            yield Finding(Check.SPLIT_LOST, result.title, source.origin, where, at, message)


def _merged(targets: frozenset[str], keys: tuple[str, ...]) -> str | None:
    """Keys a rename leads to, listed twice. Another key listed twice was so before any
    migration (a dashboard's own choice), and is none of verify's business."""
    twice = sorted(k for k, n in Counter(keys).items() if n > 1 and k in targets)
    if not twice:
        return None
    return (
        f"{', '.join(twice)} {'is' if len(twice) == 1 else 'are'} shown twice: two series "
        "were merged into one key (a hand-made rename of distinct keys to one?)"
    )


def _lost(
    migration: Migration,
    groups: list[frozenset[str]],
    keys: tuple[str, ...],
    before: frozenset[str] | None,
) -> str | None:
    if before is None:
        return None
    now = {newest(migration, k) for k in keys}
    for group in groups:
        had = before & group
        if len(had) < 2 or had <= now:
            continue
        gone = sorted(had - now)
        instead = sorted(now - before)
        text = f"showed {', '.join(sorted(had))} as separate series; {', '.join(gone)} no longer"
        return text + (f" (it shows {', '.join(instead)} instead)" if instead else "")
    return None


def split_of_alerts(
    alerts: Iterable[Verified], baseline: dict[str, tuple[str, ...]], migration: Migration
) -> Iterator[Finding]:
    """Alerts that watched distinct keys (in-flight and in-queue) before and one key now:
    `baseline` holds each alert's metrics before the migration, by its origin (id)."""
    watched: dict[str, dict[str, Verified]] = {}  # a metric now -> the keys watched before
    for verified in alerts:
        was = baseline.get(verified.source.origin, ())
        for old, now in zip(was, verified.alerts, strict=False):
            watched.setdefault(newest(migration, now), {})[newest(migration, old)] = verified
    for now, by_old in watched.items():
        for group in _groups(migration):
            merged = sorted(set(by_old) & group)
            if len(merged) >= 2:
                last = by_old[merged[-1]]
                message = f"alerts that watched {', '.join(merged)} all watch {now} now"
                yield Finding(
                    Check.SPLIT_LOST, last.title, last.source.origin, ("metric",), "", message
                )


# --- keys nobody logs ---------------------------------------------------------------------


def _unlogged(
    result: Rewrite, source: Source, migration: Migration, options: Options, places: Iterable[Place]
) -> Iterator[Finding]:
    """Keys the migration points to (new names) that no run logged; old names left are the
    first check's, and other keys are not the migration's business."""
    history = options.history
    if history is None or not history.runs:
        return
    new = migration.new_names - migration.old_names
    effect = "the alert cannot fire" if result.kind == "automation" else "it shows nothing"
    for place in places:
        names = {a.name for k in place.keys if (a := accessor(k)) is not None}
        for name in sorted(names & new):
            if not history.logged(name):
                message = f"no run has logged {name} ({history.scope}): {effect}"
                where, at = (place.label,), pointer(place.path)
                yield Finding(Check.UNLOGGED_KEY, result.title, source.origin, where, at, message)
