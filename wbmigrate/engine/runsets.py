"""Run sets: the run filters, sort, grouping and run-table columns of reports and workspaces,
on metrics and on config keys alike, and the grouped-run colours that name their grouping."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from wbmigrate import names
from wbmigrate.edit.edits import Delete, Path, RenameKey
from wbmigrate.engine.model import ChangeAction, NoteKind
from wbmigrate.engine.shapes import as_list
from wbmigrate.engine.walk import Decode, Walk
from wbmigrate.names import Accessor

# Sections of a {section, name} key that name a metric. W&B filters on summary values and on
# key presence (`keys_info`); `run` holds run fields, and a metric only by an SDK quirk.
METRIC_SECTIONS = ("summary", "keys_info", "run")
COLUMN_MAPS = ("columnVisible", "columnPinned", "columnWidths")


def _plain(value: Any) -> Accessor | None:
    return Accessor("", value) if isinstance(value, str) and value else None


@dataclass(frozen=True)
class Keys:
    """How a run set spells one kind of key: the sections of its {section, name} keys, how
    their names and its run-table columns are read."""

    sections: tuple[str, ...]
    name: Decode
    column: Decode


METRICS = Keys(METRIC_SECTIONS, _plain, names.accessor)
# The SDK writes a config filter or sort key without W&B's `.value` and a grouping or column
# with it (`wandb_workspaces/expr.py`, `groupby_str_to_key`): both are read.
CONFIG = Keys(("config",), names.config_key, names.config_column)


def walk_runset(w: Walk, path: Path, runset: Any) -> None:
    """Metric keys, then config keys (looked up among the mapping's config renames), by the same
    rules: a dual-mode companion beside a column or sort key, a filter or grouping renamed."""
    if not isinstance(runset, dict):
        return
    with w.at(f'run set "{runset.get("name", "")}"'):
        if w.may_hold(runset):
            _keys(w, path, runset, METRICS)
        if not w.config_fates:  # most mappings rename no config key
            return
        with w.config_keys():
            if w.may_hold(runset):
                _keys(w, path, runset, CONFIG)


def _keys(w: Walk, path: Path, runset: dict[str, Any], keys: Keys) -> None:
    _filters(w, (*path, "filters"), runset.get("filters"), "filters", keys)
    for i, group in enumerate(as_list(runset.get("grouping"))):
        _key_object(w, (*path, "grouping", i), group, f"grouping[{i}]", keys)
    sort = runset.get("sort")
    if isinstance(sort, dict):
        _sort_keys(w, (*path, "sort", "keys"), as_list(sort.get("keys")), keys)
        _key_object(w, (*path, "sort", "key"), sort.get("key"), "sort.key", keys)  # legacy form
    feed = runset.get("runFeed")
    if isinstance(feed, dict):
        _columns(w, (*path, "runFeed"), feed, keys.column)


def _filters(w: Walk, path: Path, node: Any, field: str, keys: Keys) -> None:
    """Both filter forms: v2 (`{filterFormat, filters:[...]}`, one level of groups) and the legacy
    tree (`{op:'OR', filters:[{op:'AND', filters:[...]}]}`). A leaf holds a {section, name} key:
    one key, renamed in both modes (a companion filter would AND a condition no old run meets)."""
    if not isinstance(node, dict):
        return
    _key_object(w, (*path, "key"), node.get("key"), field, keys)
    for i, child in enumerate(as_list(node.get("filters"))):
        _filters(w, (*path, "filters", i), child, f"{field}[{i}]", keys)


def _sort_keys(w: Walk, path: Path, entries: list[Any], keys: Keys) -> None:
    """`sort.keys`, W&B's list of `{key: {section, name}, ascending}` entries, is a key list:
    dual mode keeps the old entry (runs from before the boundary sort by it) and adds one for
    the new key right after it, same section and direction. Entries outside the sections are
    hidden from the rule in place, so indices stay true."""
    shown = [e if _in(_dig_key(e), keys) else None for e in entries]
    w.key_list(path, shown, "sort.keys", decode=keys.name, inner=("key", "name"))


def _dig_key(entry: Any) -> Any:
    return entry.get("key") if isinstance(entry, dict) else None


def _in(key: Any, keys: Keys) -> bool:
    return isinstance(key, dict) and key.get("section") in keys.sections


def _key_object(w: Walk, path: Path, key: Any, field: str, keys: Keys) -> None:
    """A grouping entry or filter key: one key. A companion grouping entry would nest a second
    level of groups, so it is renamed in both modes (with a warning in dual mode)."""
    if _in(key, keys):
        w.single((*path, "name"), key.get("name"), field, decode=keys.name)
    elif keys is METRICS and isinstance(key, dict) and _names_metric(w, key.get("name")):
        section, name = key.get("section"), key["name"]
        what = f"a {section!r} key named like the metric {name}, which is no metric: left as it is"
        w.note((*path, "name"), NoteKind.REVIEW, what, field)


def _names_metric(w: Walk, name: Any) -> bool:
    return isinstance(name, str) and w.fate(name) is not None


# --- run-table columns --------------------------------------------------------------------


def _columns(w: Walk, path: Path, feed: dict[str, Any], decode: Decode) -> None:
    claims = _merged(w, path, feed, decode)
    for name in COLUMN_MAPS:
        if isinstance(feed.get(name), dict):
            field = f"runFeed.{name}"
            w.key_map((*path, name), feed[name], field, decode=decode, claims=claims)
    order = as_list(feed.get("columnOrder"))
    field = "runFeed.columnOrder"
    w.key_list((*path, "columnOrder"), order, field, decode=decode, claims=claims)


def _merged(w: Walk, path: Path, feed: dict[str, Any], decode: Decode) -> dict[str, str]:
    """Where several old columns become one new column (`off_policy/max` and the removed
    `off_policy/token/max` both become `staleness/rollout/max`), the one whose visibility,
    pinning, width and place the new column takes: the first the user showed, else the first.
    One rule for every map keeps the SDK's invariant that a column listed in `columnOrder` is
    visible. A new column already in the table keeps its own settings (and so a second run
    changes nothing)."""
    order = [c for c in as_list(feed.get("columnOrder")) if isinstance(c, str)]
    maps = [m for name in COLUMN_MAPS if isinstance(m := feed.get(name), dict)]
    sources: dict[str, list[str]] = {}
    for column in dict.fromkeys([*order, *(c for m in maps for c in m)]):
        found = decode(column)
        fate = w.fate(found.name) if found else None
        if found is not None and fate is not None and fate.new:
            sources.setdefault(found.with_name(fate.new), []).append(column)
    claims = {}
    present = set(order).union(*maps)
    for new, olds in sources.items():
        if len(olds) > 1 and new in present:  # merged before, or set by hand
            claims[new] = new
        elif len(olds) > 1:
            shown = [c for c in olds if _shown(feed, order, c)]
            claims[new] = (shown or olds)[0]
            w.note(path, NoteKind.WARNING, _merge_message(new, olds, shown), "runFeed")
    return claims


def _shown(feed: dict[str, Any], order: list[str], column: str) -> bool:
    """A column the run table shows: not hidden (`columnVisible` false), and listed in
    `columnOrder`, visible or pinned."""
    visible, pinned = feed.get("columnVisible"), feed.get("columnPinned")
    flag = visible.get(column) if isinstance(visible, dict) else None
    pin = pinned.get(column) if isinstance(pinned, dict) else None
    return flag is not False and (flag is True or pin is True or column in order)


def _merge_message(new: str, olds: list[str], shown: list[str]) -> str:
    each = ", ".join(f"{c} ({'shown' if c in shown else 'hidden'})" for c in olds)
    winner = (shown or olds)[0]
    why = "the first one shown" if shown else "none was shown"
    return (
        f"columns {each} all become {new}: it takes the visibility, pinning, width and place "
        f"of {winner} ({why})"
    )


# --- grouped-run colours --------------------------------------------------------------------

# How a colour key names its groups: the group keys in it, and the key with other group keys.
Parsed = tuple[list[str], Callable[[list[str]], str]]

RUN_COLOR_GROUP = "run-color-group:"
URI_SAFE = "-_.!~*'()"  # what JavaScript's encodeURIComponent leaves as it is


def workspace_colours(w: Walk, path: Path, colours: Any) -> None:
    """A workspace's `customRunColors`: a grouped run's colour is keyed
    `run-color-group:<uri(json(runsetId))>:<uri(json([{kind, key, value}, ...]))>`, each `key`
    a grouping key as `section:name` (`wandb_workspaces/workspaces/_run_color_groups.py`)."""
    _colour_map(w, path, colours, _workspace_key)


def report_colours(w: Walk, path: Path, colours: Any, runsets: list[Any]) -> None:
    """A report panel grid's `customRunColors`: a grouped run's colour is keyed
    `<runsetId>-<key>:<value>-<key>:<value>`, each key as the SDK writes it for a panel grid
    (`config:a.value.b`, `summary_metrics.m`, a run field), read as the SDK reads it
    (`wandb_workspaces/reports/v2/interface.py`, `_to_color_dict`, `_from_color_dict`)."""
    ids = [r["id"] for r in runsets if isinstance(r, dict) and isinstance(r.get("id"), str)]
    _colour_map(w, path, colours, lambda key: _report_key(key, ids))


def _colour_map(w: Walk, path: Path, colours: Any, parse: Callable[[str], Parsed | None]) -> None:
    """The colour of a group follows its grouping key, which is renamed in both modes (one
    key): the entry is renamed (or dropped when the new key has a colour already), as an entry
    left on the old key colours no group the SDK or the app can find."""
    if not isinstance(colours, dict):
        return
    taken = set(colours)
    for key in colours:
        parsed = parse(key) if isinstance(key, str) else None
        if parsed is None:
            continue
        group_keys, rebuild = parsed
        fates = [_group_fate(w, k) for k in group_keys]
        if not any(new for new, _ in fates):
            continue
        new = rebuild([renamed or k for (renamed, _), k in zip(fates, group_keys, strict=True)])
        w.versions.update(version for renamed, version in fates if renamed)
        member, label = (*path, key), f"customRunColors[{json.dumps(key)}]"
        if new in taken:
            w.change(Delete(member), ChangeAction.REMOVED, key, None, label)
        else:
            w.change(RenameKey(member, new), ChangeAction.RENAMED, key, new, label)
        taken.add(new)


def _group_fate(w: Walk, key: str) -> tuple[str | None, str]:
    """A grouping key in a colour key (`summary:m`, `summary_metrics.m`, `config:a.value.b`, a
    bare metric): its new spelling (None when the mapping leaves it) and the step that made it."""
    section, _, rest = key.partition(":")
    if section == "config":
        found: Accessor | None = names.config_column(key)
        fate = w.config_fates.get(found.name) if found else None
    else:
        found = Accessor(f"{section}:", rest) if section in METRIC_SECTIONS else names.accessor(key)
        fate = w.fate(found.name) if found else None
    if found is None or fate is None or fate.new is None:
        return None, ""
    return found.with_name(fate.new), fate.version


def _workspace_key(key: str) -> Parsed | None:
    if not key.startswith(RUN_COLOR_GROUP):
        return None
    runset, sep, encoded = key[len(RUN_COLOR_GROUP) :].partition(":")
    try:
        entries = json.loads(unquote(encoded)) if sep else None
    except ValueError:
        return None
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and isinstance(e.get("key"), str) for e in entries
    ):
        return None

    def rebuild(group_keys: list[str]) -> str:
        path = [{**e, "key": k} for e, k in zip(entries, group_keys, strict=True)]
        text = json.dumps(path, separators=(",", ":"), ensure_ascii=False)
        return f"{RUN_COLOR_GROUP}{runset}:{quote(text, safe=URI_SAFE)}"

    return [e["key"] for e in entries], rebuild


def _report_key(key: str, ids: list[str]) -> Parsed | None:
    runset = next((i for i in ids if key.startswith(f"{i}-")), None)
    if runset is None:
        return None
    parts = key[len(runset) + 1 :].split("-")
    if not all(":" in part for part in parts):  # the SDK's test: a run id, not a group
        return None
    pairs = [part.rsplit(":", 1) for part in parts]

    def rebuild(group_keys: list[str]) -> str:
        groups = (f"{k}:{value}" for k, (_, value) in zip(group_keys, pairs, strict=True))
        return f"{runset}-{'-'.join(groups)}"

    return [k for k, _ in pairs], rebuild
