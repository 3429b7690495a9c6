"""What the rewrite engine says of each W&B spec in a JSON or YAML document.

Specs are found where `plan DIR` finds them (`files.find`: at the root, under an export file's
`spec`, in a saved view's wrapper, in a list of triggers, as a JSON string). Each is run
through the same engine as `plan` and `apply` on its own, and its changes become findings
(`Pending`, not yet located) with paths rooted at the document. Config keys are looked for
outside specs.

W&B sweep configs (`method`, `metric: {name, goal}`, `parameters`) optimise one metric, so an
old `metric.name` moves to the new key in dual mode too (runs the sweep made keep the old key,
as the message says); their parameters are config keys of the program they run, renamed like
any config (dotted, or nested `parameters`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from wbmigrate import kinds
from wbmigrate.check.model import Pending, Rule
from wbmigrate.check.targets import Targets, distinctive
from wbmigrate.check.unread import Same, by_path, unread
from wbmigrate.edit.edits import Edit, Path, RenameKey, Set
from wbmigrate.engine.model import SEPARATOR, Change, ChangeAction, NoteKind, Rewrite
from wbmigrate.engine.shapes import nodes
from wbmigrate.files import at, spec_text
from wbmigrate.mapping import Fate
from wbmigrate.names import accessor, mentions
from wbmigrate.rewrite import rewrite


def may_embed(targets: Targets) -> Callable[[str], bool]:
    """Whether a string may be a spec kept as JSON text that needs a look (a cheap test: no
    string is parsed unless it looks like one and may hold an old name)."""
    return lambda text: (
        len(text) > 16 and spec_text(text) and targets.may_contain(text, spec_like=True)
    )


def check_spec(
    spec: Any, root: Path, kind: str, label: str, targets: Targets, unit: int, same: Same = by_path
) -> tuple[list[Pending], list[Edit] | None]:
    """The findings of one spec (paths rooted at `root`) and the edits of its migration note
    (None: the spec could not be read). A spec the engine cannot read is one needs-review
    finding at its start, never a crash. `same` tells what value a path of the document
    reaches (a YAML alias reaches its anchor's)."""
    try:
        result = rewrite(spec, targets.migration, kind=kind, name=label, options=targets.options)
    except Exception as exc:  # malformed data: said for this spec, and the scan goes on
        message = f"this {kind} spec could not be checked ({_described(exc)}); review it by hand"
        on_key = bool(root) and isinstance(root[-1], str)
        return [Pending(root, on_key, Rule.NEEDS_REVIEW, message, whole=False)], None
    groups, notes = _grouped(result)
    pending = []
    for change, edits in groups:
        path, key, name = located(change, spec, targets)
        rule, message = change_rule(change, targets), change_message(change, result, targets)
        rooted = [_rooted(e, root) for e in edits]
        pending.append(Pending((*root, *path), key, rule, message, rooted, unit, name=name))
    for note in result.notes:
        if note.kind is NoteKind.REVIEW:
            where = SEPARATOR.join((*note.where, note.field))
            message = f"{note.message} ({where})"
            path, name = gone_name(spec, note.path, targets) or (note.path, None)
            pending.append(Pending((*root, *path), False, Rule.NEEDS_REVIEW, message, name=name))
    left = unread(spec, kind, result, targets, lambda path: same((*root, *path)))
    pending += [replace(u, path=(*root, *u.path)) for u in left]
    return pending, [_rooted(e, root) for e in notes]


def _described(exc: BaseException) -> str:
    if isinstance(exc, kinds.UnknownKindError):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    return f"{type(exc).__name__}: {exc}"


def on_map_key(change: Change, spec: Any) -> bool:
    """Whether a change is about a key of a map keyed by metric (run-table columns, panel
    overrides): its path ends in that key, which the finding must point at, not its value."""
    path = change.path
    if not path or not isinstance(path[-1], str) or change.old != path[-1]:
        return False
    parent = _get(spec, path[:-1])
    return isinstance(parent, dict) and path[-1] in parent


def located(change: Change, spec: Any, targets: Targets) -> tuple[Path, bool, str | None]:
    """Where the finding of a change points, at the old name: the path of the value that
    holds it, whether it is that value's key, and the name when the value holds more."""
    if on_map_key(change, spec):
        return change.path, True, None
    whole = () if change.action is ChangeAction.DISABLED else change.path  # the alert, a panel
    gone = None if isinstance(change.old, str) else gone_name(spec, whole, targets)
    if gone is not None:
        return gone[0], False, gone[1]
    return name_path(change, spec), False, inner_name(change, spec)


def gone_name(spec: Any, path: Path, targets: Targets) -> tuple[Path, str | None] | None:
    """For an object dropped or switched off because its metrics are gone (a panel, an
    alert), or reviewed for it: the first string in it that names a metric no longer logged,
    and that name when the string holds more (an alert's filter). None: the value at `path`
    is no such object."""
    value = _get(spec, path)
    if not isinstance(value, dict | list):
        return None
    for where, node in nodes(value, path):
        for name in mentions(node, targets.migration.mention) if isinstance(node, str) else ():
            fate = targets.migration.fate(name)
            if fate is not None and fate.new is None:
                return where, (name if node != name else None)
    return None


def name_path(change: Change, spec: Any) -> Path:
    """Where the old name of a change is: the change's own path, or, for a change made
    beside or to a whole entry (a sort entry, a column object: `{"key": {"name": ...}}`), the
    entry's member that holds the name, so the finding points at the name."""
    value = _get(spec, change.path)
    if not isinstance(change.old, str) or not isinstance(value, dict | list):
        return change.path
    inside = (at for at, node in nodes(value) if node == change.old and isinstance(node, str))
    return (*change.path, *next(inside, ()))


def inner_name(change: Change, spec: Any) -> str | None:
    """The old name a change makes inside a longer string (a JSON document kept as a string,
    such as an alert's `event.filter`), for the finding to point at it rather than at the
    whole string."""
    if change.is_regex or not isinstance(change.old, str):
        return None
    value = _get(spec, change.path)
    return change.old if isinstance(value, str) and value != change.old else None


def _get(spec: Any, path: Path) -> Any:
    """The value at `path`, or None when the spec has none there."""
    try:
        return at(spec, path)
    except (KeyError, IndexError, TypeError):
        return None


def change_rule(change: Change, targets: Targets) -> Rule:
    if change.action is ChangeAction.REMOVED and _listed_already(change, targets):
        return Rule.RENAMED_METRIC
    if change.action in (ChangeAction.REMOVED, ChangeAction.DISABLED):
        return Rule.REMOVED_METRIC
    if change.is_config:
        return Rule.RENAMED_CONFIG_KEY
    found = None if change.is_regex else accessor(change.old)
    fate = targets.migration.fate(found.name) if found else None
    if fate is not None and fate.removed:
        return Rule.REMOVED_METRIC
    return Rule.RENAMED_METRIC


def _listed_already(change: Change, targets: Targets) -> str | None:
    """The new key of a renamed key that replace mode drops because the new key is already
    listed beside it (not because it is gone)."""
    found = accessor(change.old) if isinstance(change.old, str) and not change.is_regex else None
    fate = targets.migration.fate(found.name) if found else None
    return found.with_name(fate.new) if found and fate and fate.new else None


def change_message(change: Change, result: Rewrite, targets: Targets) -> str:
    """A short line in the style of a linter, with where in the spec it is."""
    where = SEPARATOR.join((*change.where[-1:], change.field))
    old, new = change.old, change.new
    listed = change.action is ChangeAction.REMOVED and _listed_already(change, targets)
    if listed:
        text = f"{old} -> {listed}, which is already listed: drop it"
    elif change.action is ChangeAction.ADDED:
        text = f"{old} -> {new} (dual: add beside it)"
    elif change.action is ChangeAction.DISABLED:
        warnings = (n for n in result.notes if n.kind is NoteKind.WARNING)
        said = [n.message for n in warnings if n.pointer == change.pointer]
        text = (said or ["alert on a metric that is no longer logged: disable it"])[0]
    elif change.action is ChangeAction.REMOVED and isinstance(old, dict):
        text = "every metric of this panel is no longer logged: delete the panel"
    elif change.action is ChangeAction.REMOVED:
        text = f"{old} is no longer logged: drop it"
    elif change.is_regex:
        text = f"regex must also match the renamed keys: {new!r}"
    else:
        text = f"{old} -> {new}"
    return f"{text} [{where}]"


def _grouped(result: Rewrite) -> tuple[list[tuple[Change, list[Edit]]], list[Edit]]:
    """Findings-to-be (a disabled alert is one, with its description), and note edits."""
    groups: list[tuple[Change, list[Edit]]] = []
    notes: list[Edit] = []
    for change, edit in zip(result.changes, result.change_edits, strict=True):
        if change.action is ChangeAction.ANNOTATED:
            notes.append(edit)
        elif change.action is ChangeAction.DISABLED and change.field == "description" and groups:
            groups[-1][1].append(edit)
        elif groups and groups[-1][1][-1] is edit:  # one embedded string, several changes
            continue
        else:
            groups.append((change, [edit]))
    return groups, notes


def _rooted(edit: Edit, root: Path) -> Edit:
    return replace(edit, path=(*root, *edit.path))


# --- config keys --------------------------------------------------------------------------


def config_keys(
    document: Any, targets: Targets, skip: set[Path]
) -> tuple[list[Pending], list[Path]]:
    """Dotted config keys the mapping renames, outside the subtrees in `skip` (specs, sweeps);
    and the paths of the new keys renames give (`{"vllm": {"enable_lora": true}}` of
    `enable_lora -> vllm.enable_lora`): seen, not reviewed."""
    found: list[Pending] = []
    news: list[Path] = []
    for child, dotted in _dotted_keys(document, skip):
        key = str(child[-1])
        # a top-level `seed` or `env` is no config's in a JSON or YAML file (a CI workflow)
        config = len(child) > 1 or distinctive(dotted)
        new = targets.config_keys.get(dotted) if config else None
        message = f"{dotted} -> {new} (config key)"
        if config and dotted in targets.removed_keys:  # no right value to write: left as is
            message = f"{dotted} (config key) was {targets.removed_keys[dotted]}"
            found.append(Pending(child, True, Rule.REMOVED_CONFIG_KEY, message))
        elif new is not None and new.rpartition(".")[0] == dotted.rpartition(".")[0]:
            # the key may hold the path's parents (`"orchestrator.max_off_policy_steps"`,
            # a flattened config): only its last part changes
            renamed = key[: len(key) - len(dotted.rpartition(".")[2])] + new.rpartition(".")[2]
            rule = targets.config_rule(dotted)
            found.append(Pending(child, True, rule, message, [RenameKey(child, renamed)]))
        elif new is not None:  # to another table: a one-word key gets no other result
            message += "; move it by hand"
            found.append(Pending(child, True, targets.config_rule(dotted), message))
        elif dotted in targets.new_keys:
            news.append(child)
    return found, news


def _dotted_keys(document: Any, skip: set[Path]) -> Iterator[tuple[Path, str]]:
    stack: list[tuple[Path, Any]] = [((), document)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict) or path in skip:
            continue
        for key, value in node.items():
            child = (*path, key)
            yield child, ".".join(map(str, child))
            stack.append((child, value))


# --- W&B sweep configs -----------------------------------------------------------------------

ONE_METRIC = (
    "a sweep optimises one metric, so it moves in dual mode too; "
    "runs it already made keep the old key"
)


def check_sweep(sweep: dict[str, Any], path: Path, targets: Targets) -> list[Pending]:
    """The findings of one sweep config found at `path`."""
    metric = sweep.get("metric")
    name = metric.get("name") if isinstance(metric, dict) else None
    fate = targets.migration.fate(name) if isinstance(name, str) else None
    found = [_metric(fate, (*path, "metric", "name"))] if fate is not None else []
    return found + _parameters(sweep["parameters"], (*path, "parameters"), targets)


def _metric(fate: Fate, path: Path) -> Pending:
    if fate.new is None:
        message = (
            f"{fate.old} is no longer logged and nothing replaces it ({fate.reason}); choose "
            "another metric for this sweep to optimise [metric.name]"
        )
        return Pending(path, False, Rule.NEEDS_REVIEW, message)
    removed = "removed; the new key carries the same values; " if fate.removed else ""
    message = f"{fate.old} -> {fate.new} ({removed}{ONE_METRIC}) [metric.name]"
    rule = Rule.REMOVED_METRIC if fate.removed else Rule.RENAMED_METRIC
    return Pending(path, False, rule, message, [Set(path, fate.new)])


def _parameters(parameters: dict[Any, Any], path: Path, targets: Targets) -> list[Pending]:
    """Parameters by their dotted config key; nested `parameters` add to the key's prefix."""
    found = []
    stack: list[tuple[dict[Any, Any], Path, tuple[str, ...]]] = [(parameters, path, ())]
    while stack:
        members, at, outer = stack.pop()
        for key, spec in members.items():
            dotted = (*outer, *str(key).split("."))
            why = targets.removed_keys.get(".".join(dotted))
            if why is not None:  # a sweep over a removed key: no right key to write
                message = f"{'.'.join(dotted)} (sweep parameter: a config key) was {why}"
                found.append(Pending((*at, key), True, Rule.REMOVED_CONFIG_KEY, message))
            new = targets.config_keys.get(".".join(dotted))
            if new is None and len(dotted) == 1:  # a standalone key: the leaf's rename
                new = targets.config_leaves.get(dotted[0])
            if new is not None:
                rule = targets.config_rule(".".join(dotted))
                found.append(_parameter(members, (*at, key), str(key), outer, new, rule))
            if isinstance(spec, dict) and isinstance(spec.get("parameters"), dict):
                stack.append((spec["parameters"], (*at, key, "parameters"), dotted))
    return found


def _parameter(
    members: dict[Any, Any], path: Path, key: str, outer: tuple[str, ...], new: str, rule: Rule
) -> Pending:
    head = ".".join(outer)
    new_key = new[len(head) + 1 :] if head and new.startswith(head + ".") else new
    message = f"{'.'.join((*outer, key))} -> {new} (sweep parameter: a config key)"
    if head and not new.startswith(head + "."):
        return Pending(path, True, rule, message + "; move it by hand")
    if new_key in members:
        message += f"; {new_key} is set too, so remove this one by hand"
        return Pending(path, True, rule, message)
    return Pending(path, True, rule, message, [RenameKey(path, new_key)])
