"""JSON and YAML files: W&B specs (raw, or `wbmigrate export` files) through the rewrite
engine, so coverage matches the live path; and config files (resolved prime-rl configs) by
their dotted keys."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import yaml

from wbmigrate.check.model import Checked, Finding, Lines, Replacement, Rule
from wbmigrate.check.targets import Targets
from wbmigrate.edit.edits import Edit, Path, RenameKey
from wbmigrate.edit.json import JsonText, container_of
from wbmigrate.edit.located_yaml import load_located
from wbmigrate.edit.yaml import apply, replacements
from wbmigrate.engine.model import SEPARATOR, Change, ChangeAction, NoteKind, Rewrite
from wbmigrate.errors import WbmigrateError
from wbmigrate.files import spec_in
from wbmigrate.mapping import Action
from wbmigrate.names import accessor
from wbmigrate.rewrite import rewrite


def parse_error(label: str, text: str, offset: int, message: str) -> Checked:
    lines = Lines(text)
    return Checked([lines.finding(label, offset, offset, Rule.PARSE_ERROR, message)])


# --- what a document holds ---------------------------------------------------------------------


def config_keys(document: Any, targets: Targets, skip: Path | None) -> Iterator[tuple[Path, str]]:
    """Dotted config keys the mapping renames: (path of the member, new last segment)."""
    stack: list[tuple[Path, Any]] = [((), document)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict) or path == skip:
            continue
        for key, value in node.items():
            child = (*path, key)
            dotted = ".".join(map(str, child))
            new = targets.config_keys.get(dotted)
            if new is not None and new.rpartition(".")[0] == dotted.rpartition(".")[0]:
                yield child, new.rpartition(".")[2]
            stack.append((child, value))


# --- turning engine changes into findings -----------------------------------------------------


def config_message(path: Path, new_leaf: str) -> str:
    old = ".".join(map(str, path))
    return f"{old} -> {'.'.join(map(str, (*path[:-1], new_leaf)))} (config key)"


def change_rule(change: Change, targets: Targets) -> Rule:
    if change.action in (ChangeAction.REMOVED, ChangeAction.DISABLED):
        return Rule.REMOVED_METRIC
    found = None if change.is_regex else accessor(change.old)
    resolution = targets.migration.resolve(found.name) if found else None
    if resolution is not None and resolution.action is Action.REMOVED:
        return Rule.REMOVED_METRIC
    return Rule.RENAMED_METRIC


def change_message(change: Change, result: Rewrite) -> str:
    """A short line in the style of a linter, with where in the spec it is."""
    where = SEPARATOR.join((*change.where[-1:], change.field))
    old, new = change.old, change.new
    if change.action is ChangeAction.ADDED:
        text = f"{old} -> {new} (dual: add beside it)"
    elif change.action is ChangeAction.DISABLED:
        notes = [
            n.message
            for n in result.notes
            if n.kind is NoteKind.WARNING and n.pointer == change.pointer
        ]
        text = (notes or ["alert on a metric that is no longer logged: disable it"])[0]
    elif change.action is ChangeAction.REMOVED and isinstance(old, dict):
        text = "every metric of this panel is no longer logged: delete the panel"
    elif change.action is ChangeAction.REMOVED:
        text = f"{old} is no longer logged: drop it"
    elif change.is_regex:
        text = f"regex must also match the renamed keys: {new!r}"
    else:
        text = f"{old} -> {new}"
    return f"{text} [{where}]"


def minimal(text: str, new: str, hint: tuple[int, int] = (0, 0)) -> tuple[Replacement, ...]:
    """The one replacement that turns `text` into `new` (common head and tail kept).

    `hint` is the span of `text` the change lies in, when known; it narrows the search."""
    start, end = hint
    limit = min(len(text), len(new))
    same = start if start <= limit and text[:start] == new[:start] else 0
    head = _longest(lambda n: text[same:n] == new[same:n], same, limit)
    after = min(len(text) - end, limit - head)
    known = after if after > 0 and text[len(text) - after :] == new[len(new) - after :] else 0
    tail = _longest(lambda n: text[len(text) - n :] == new[len(new) - n :], known, limit - head)
    return (Replacement(head, len(text) - tail, new[head : len(new) - tail]),)


def _longest(agrees: Callable[[int], bool], low: int, high: int) -> int:
    """The largest n in [low, high] for which `agrees(n)`, given that it holds up to some n and
    no further: a binary search of C-speed slice comparisons, not a loop over characters."""
    while low < high:
        middle = (low + high + 1) // 2
        if agrees(middle):
            low = middle
        else:
            high = middle - 1
    return low


@dataclass
class _Grouped:
    change: Change
    edits: list[Edit]


def _grouped(result: Rewrite) -> tuple[list[_Grouped], list[Edit]]:
    """Findings-to-be (a disabled alert is one, with its description), and note edits."""
    groups: list[_Grouped] = []
    notes: list[Edit] = []
    for change, edit in zip(result.changes, result.change_edits, strict=True):
        if change.action is ChangeAction.ANNOTATED:
            notes.append(edit)
        elif change.action is ChangeAction.DISABLED and change.field == "description" and groups:
            groups[-1].edits.append(edit)
        elif groups and groups[-1].edits[-1] is edit:  # one embedded string, several changes
            continue
        else:
            groups.append(_Grouped(change, [edit]))
    return groups, notes


def _rooted(edit: Edit, root: Path) -> Edit:
    return replace(edit, path=(*root, *edit.path))


# --- JSON and YAML -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Document:
    """What the checks need of a parsed file, whatever its syntax."""

    data: Any
    span: Callable[[Path], tuple[int, int]]  # where the value at a path is
    key_span: Callable[[Path], tuple[int, int]]  # where the key of the member at a path is
    edit: Callable[[list[Edit]], str | None]  # the text with edits made (None: not safely)
    fix: Callable[[list[Edit]], tuple[Replacement, ...]]  # one finding's fix (empty: none)


def check_json(label: str, text: str, targets: Targets) -> Checked:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return parse_error(label, text, exc.pos, f"not valid JSON: {exc.msg}")
    except RecursionError:
        return parse_error(label, text, 0, "JSON nested too deeply to read")

    indexed = JsonText(text)

    def span(path: Path, key: bool = False) -> tuple[int, int]:
        try:
            return indexed.locate(path, key=key)
        except (KeyError, ValueError, IndexError):
            return 0, 0

    def fix(edits: list[Edit]) -> tuple[Replacement, ...]:
        start, end, new = indexed.splice_within(edits)
        (found,) = minimal(text[start:end], new)
        return (Replacement(start + found.start, start + found.end, found.text),)

    document = _Document(data, span, lambda path: span(path, key=True), indexed.splice, fix)
    return _check_document(label, text, targets, document)


def check_yaml(label: str, text: str, targets: Targets) -> Checked:
    try:
        located = load_located(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return parse_error(label, text, mark.index if mark else 0, f"not valid YAML: {problem}")
    except RecursionError:
        return parse_error(label, text, 0, "YAML nested too deeply to read")

    def span(path: Path, key: bool = False) -> tuple[int, int]:
        for end in range(len(path), -1, -1):
            node = (
                located.key_nodes.get(path[:end]) if key or end < len(path) else None
            ) or located.nodes.get(path[:end])
            if node is not None:
                return node.start_mark.index, node.end_mark.index
        return 0, 0

    def edit(edits: list[Edit]) -> str | None:
        found = replacements(text, located, edits)
        return apply(text, found) if found is not None else None

    def fix(edits: list[Edit]) -> tuple[Replacement, ...]:
        new = edit(edits)
        return minimal(text, new, span(container_of(edits))) if new is not None else ()

    document = _Document(located.data, span, lambda path: span(path, key=True), edit, fix)
    return _check_document(label, text, targets, document)


def _check_document(label: str, text: str, targets: Targets, document: _Document) -> Checked:
    """Spec findings through the engine, then config keys; fixes made together at the end."""
    lines = Lines(text)
    checked = Checked()
    edits_of: dict[Finding, list[Edit]] = {}
    note_edits: list[Edit] = []

    def add(finding: Finding, edits: Sequence[Edit]) -> None:
        checked.findings.append(finding)
        edits_of[finding] = list(edits)

    spec = spec_in(document.data)
    if spec is not None:
        root, kind = spec
        try:
            result = _rewrite(document.data, root, kind, label, targets)
        except WbmigrateError as exc:
            return parse_error(label, text, 0, str(exc))
        groups, notes = _grouped(result)
        note_edits = [_rooted(e, root) for e in notes]
        for group in groups:
            edits = [_rooted(e, root) for e in group.edits]
            start, end = document.span((*root, *group.change.path))
            add(
                lines.finding(
                    label,
                    start,
                    end,
                    change_rule(group.change, targets),
                    change_message(group.change, result),
                    document.fix(edits),
                ),
                edits,
            )
        for note in result.notes:
            if note.kind is NoteKind.REVIEW:
                start, end = document.span((*root, *note.path))
                where = SEPARATOR.join((*note.where, note.field))
                checked.findings.append(
                    lines.finding(label, start, end, Rule.NEEDS_REVIEW, f"{note.message} ({where})")
                )
    for path, new_leaf in config_keys(document.data, targets, spec[0] if spec else None):
        rename: list[Edit] = [RenameKey(path, new_leaf)]
        start, end = document.key_span(path)
        add(
            lines.finding(
                label,
                start,
                end,
                Rule.RENAMED_CONFIG_KEY,
                config_message(path, new_leaf),
                document.fix(rename),
            ),
            rename,
        )

    def fix_text(kept: list[Finding]) -> str | None:
        chosen = [e for f in kept for e in edits_of.get(f, [])]
        if not chosen:
            return None
        spec_kept = any(f.rule is not Rule.RENAMED_CONFIG_KEY for f in kept)
        return document.edit(chosen + (note_edits if spec_kept else []))

    checked.fix_text = fix_text
    return checked


def _rewrite(document: Any, root: Path, kind: str, label: str, targets: Targets) -> Rewrite:
    spec = document
    for part in root:
        spec = spec[part]
    return rewrite(spec, targets.migration, kind=kind, name=label, options=targets.options)
