"""Run sets: the run filters, sort, grouping and run-table columns of reports and workspaces,
on metrics and on config keys alike, and the grouped-run colours that name their grouping."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

import orjson

from wbmigrate import names
from wbmigrate.edit.edits import Delete, Edit, Insert, Path, RenameKey, Set
from wbmigrate.engine.model import ChangeAction, NoteKind
from wbmigrate.engine.record import ONE_KEY
from wbmigrate.engine.shapes import as_list
from wbmigrate.engine.walk import Decode, Walk
from wbmigrate.mapping import Fate
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
        metrics, config_keys = w.may_name_either(runset)
        if metrics:
            _keys(w, path, runset, METRICS)
        if not config_keys or not names_config(runset):
            return
        with w.config_keys():
            if w.may_name(runset):
                _keys(w, path, runset, CONFIG)


def names_config(runset: dict[str, Any]) -> bool:
    """Whether `runset` may name a config key where `CONFIG` reads one: a `{section: config}`
    key or a `config:` column. prime-rl renames a config key `filters`, which every run set
    holds as a field: told by this, the benchmark's 2,542 run sets are not walked for config
    keys, its 600 objects' walk took 0.46-0.49 s instead of 0.52-0.56 s, its plan at 0 ms
    1.56 s of CPU instead of 1.68 s (mean of 6 alternating, min 1.39 s against 1.52 s)."""
    try:
        data = orjson.dumps(runset)
    except (TypeError, ValueError):  # not data orjson writes: walk it
        return True
    return b'"config"' in data or b'"config:' in data


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


# --- filters --------------------------------------------------------------------------------

GROUPED = (
    "this filter is in a group not joined by OR, where (old OR new) would be a group inside "
    "a group, which W&B's filters do not allow"
)
TOO_DEEP = (
    "this filter would need (old OR new) as a group inside a group, which W&B's SDK cannot "
    "read (`filters_tree_to_v2`)"
)


@dataclass(frozen=True)
class Siblings:
    """The list a filter leaf is in, and how its companion goes there: right after it when
    the list is joined by OR, else the leaf becomes the group (old OR new) where W&B allows
    one, else it is renamed with the warning `why`."""

    path: Path
    items: list[Any]  # as read, then the companions added (so none is added twice)
    ors: bool
    wrap: bool
    v2: bool
    why: str = ONE_KEY


def _filters(w: Walk, path: Path, node: Any, field: str, keys: Keys) -> None:
    """Both filter forms: v2 (`{filterFormat, filters:[...]}`, a flat list of leaves and groups
    of leaves, each after the first joined to the one before by its `connector`) and the
    legacy tree (`{op:'OR', filters:[{op:'AND', filters:[...]}]}`). In dual mode a leaf on an
    old key becomes (old OR new), same operator and value: runs from before the boundary pass
    it by the old key, later runs by the new one (`wandb_workspaces/expr.py` reads both)."""
    if not isinstance(node, dict):
        return
    if node.get("filterFormat") == "filterV2":
        _v2(w, (*path, "filters"), as_list(node.get("filters")), field, keys, top=True)
    elif _is_leaf(node):  # a tree of one leaf
        _leaf(w, path, node, field, keys, Siblings(path, [node], False, True, False))
    else:
        _tree(w, path, node, field, keys, grouped=False)


def _v2(w: Walk, path: Path, items: list[Any], field: str, keys: Keys, top: bool) -> None:
    """A top-level leaf becomes a group carrying the leaf's connector; a leaf in a group gets
    a sibling if the group is joined by OR, else (a group cannot nest) it is renamed."""
    ors = not top and all(_connector(item) == "OR" for item in items[1:])
    siblings = Siblings(path, list(items), ors, top, True, GROUPED)
    for i, item in enumerate(items):
        at, label = (*path, i), f"{field}[{i}]"
        if _is_leaf(item):
            _leaf(w, at, item, label, keys, siblings)
        elif isinstance(item, dict):
            _v2(w, (*at, "filters"), as_list(item.get("filters")), label, keys, top=False)


def _tree(w: Walk, path: Path, node: dict[str, Any], field: str, keys: Keys, grouped: bool) -> None:
    """A legacy node and what is under it, nested as deep as it goes. W&B's SDK reads the tree
    as v2 filters, where an OR node under an AND node is a group and a group inside one is
    refused: a leaf under AND becomes (old OR new) only outside such a group."""
    op, items = node.get("op"), as_list(node.get("filters"))
    deep = grouped and op == "AND"
    siblings = Siblings((*path, "filters"), list(items), op == "OR", not deep, False, TOO_DEEP)
    for i, child in enumerate(items):
        at, label = (*path, "filters", i), f"{field}[{i}]"
        if _is_leaf(child):
            _leaf(w, at, child, label, keys, siblings)
        elif isinstance(child, dict):
            inner = grouped or (op == "AND" and child.get("op") == "OR")
            _tree(w, at, child, label, keys, inner)


def _leaf(w: Walk, at: Path, leaf: dict[str, Any], field: str, keys: Keys, by: Siblings) -> None:
    """A filter leaf: dual mode makes it (old OR new), or finds that it is already; replace
    mode renames it, or drops it from (old OR new); a removed key is left for review."""
    key = leaf["key"]
    found = keys.name(key.get("name")) if _in(key, keys) else None
    fate = w.fate(found.name) if found else None
    if found is None or fate is None or fate.new is None or not (by.ors or by.wrap):
        _key_object(w, (*at, "key"), key, field, keys, by.why)  # renamed, or a note
        return
    companion = {**_bare(leaf), "key": {**key, "name": found.with_name(fate.new)}}
    paired = by.ors and any(_bare(item) == companion for item in by.items if isinstance(item, dict))
    name_at, old = (*at, "key", "name"), key["name"]
    if paired and w.dual:
        w.kept.append(name_at)
    elif paired:
        w.change(Delete(at), ChangeAction.REMOVED, old, None, field, version=fate.version)
    elif not w.dual:
        w.single(name_at, old, field, decode=keys.name)
    else:
        _pair(w, at, leaf, companion, field, by, fate)


def _pair(
    w: Walk,
    at: Path,
    leaf: dict[str, Any],
    companion: dict[str, Any],
    field: str,
    by: Siblings,
    fate: Fate,
) -> None:
    """(old OR new): the companion right after the leaf in a list joined by OR, else a group
    in the leaf's place. One change, at the old key's name (where `check` points)."""
    by.items.append(companion)
    joined = {**companion, "connector": "OR"} if by.v2 else companion
    edit: Edit = Set(at, _either(leaf, joined, by.v2))
    if by.ors:
        edit = Insert((*by.path, int(at[-1]) + 1), joined)
    old, new, name_at = leaf["key"]["name"], companion["key"]["name"], (*at, "key", "name")
    w.change(edit, ChangeAction.ADDED, old, new, field, at=name_at, version=fate.version)
    w._equivalent(name_at, fate, field)
    w._logged(name_at, fate, field, companion=True)


def _either(leaf: dict[str, Any], joined: dict[str, Any], v2: bool) -> dict[str, Any]:
    """The group (old OR new) in the leaf's place: v2's carries the leaf's connector."""
    if not v2:
        return {"op": "OR", "filters": [leaf, joined]}
    connector = {"connector": leaf["connector"]} if "connector" in leaf else {}
    return {"filters": [_bare(leaf), joined], **connector}


def _is_leaf(node: Any) -> bool:
    return isinstance(node, dict) and isinstance(node.get("key"), dict)


def _bare(leaf: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in leaf.items() if k != "connector"}


def _connector(item: Any) -> str:
    connector = item.get("connector") if isinstance(item, dict) else None
    return connector.upper() if isinstance(connector, str) else ""


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


def _key_object(
    w: Walk, path: Path, key: Any, field: str, keys: Keys, holds: str = ONE_KEY
) -> None:
    """A grouping entry (or a filter key that gets no companion): one key. A companion
    grouping entry would nest a second level of groups, so it is renamed in both modes (with
    a warning in dual mode that says why: `holds`)."""
    if _in(key, keys):
        w.single((*path, "name"), key.get("name"), field, decode=keys.name, holds=holds)
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
