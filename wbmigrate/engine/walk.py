"""One rewrite in progress: the rules for each shape of metric-bearing field.

Kind and panel modules call these primitives with a path into the original spec and the value
found there; each records edits (for the new spec), changes (for the plan) and notes. The input
is only read.

Longer than most modules on purpose: every rule (one key, key lists, key maps, expressions,
regexes, free text, unknown structures, embedded JSON) records into the same edit list under
the same dual/replace semantics, and keeping them side by side is what keeps them consistent.
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import orjson

from wbmigrate import names
from wbmigrate.edit.edits import (
    AddKey,
    Delete,
    Edit,
    Insert,
    Path,
    RenameKey,
    Set,
    materialize,
    pointer,
)
from wbmigrate.edit.json import splice
from wbmigrate.engine.model import Change, ChangeAction, Mode, Note, NoteKind, Options
from wbmigrate.engine.regexes import rewrite_regex
from wbmigrate.mapping import Fate, Migration

Decode = Callable[[Any], names.Accessor | None]

FEW_ANCHORS = 8  # up to this many, free text is searched for each anchor before the pattern


class _At:
    """`Walk.at`: a plain class, as a generator-based context manager costs more than the
    panel it labels."""

    __slots__ = ("label", "outer", "walk")

    def __init__(self, walk: Walk, label: str) -> None:
        self.walk, self.label = walk, label

    def __enter__(self) -> None:
        self.outer = self.walk.where
        self.walk.where = (*self.outer, self.label)

    def __exit__(self, *exc: object) -> None:
        self.walk.where = self.outer


class Walk:
    def __init__(self, migration: Migration, options: Options) -> None:
        self.migration = migration
        self.options = options
        self.dual = options.mode is Mode.DUAL  # asked for every key met: an attribute
        self.edits: list[Edit] = []
        self.changes: list[Change] = []
        self.change_edits: list[Edit] = []  # the edit that makes each change
        self.notes: list[Note] = []
        self.versions: set[str] = set()  # steps whose renames this spec needed
        self.where: tuple[str, ...] = ()
        self._mention = migration.mention  # compiled once per migration, not per object
        self.fate: Callable[[str], Fate | None] = migration.fate  # asked for every key met
        self._anchors = migration.anchor_bytes
        anchors = migration.anchors
        self._anchor_text = anchors if len(anchors) <= FEW_ANCHORS else None
        self._serialise = _serialiser(self._anchors)

    def may_mention(self, text: str) -> bool:
        """Whether free text may name an old name: each holds an anchor, and a test for a few
        anchors is cheaper than the mention pattern (with many, the pattern is tried at once)."""
        anchors = self._anchor_text
        return anchors is None or any(map(text.__contains__, anchors))

    def may_hold(self, value: Any) -> bool:
        """Whether `value` may hold an old name. Most of a spec cannot, and a C-speed test on
        its serialised bytes (`_serialiser`) lets the walk skip it. An empty field (a third of
        those asked about: the overrides a panel does not set) holds nothing."""
        if not value:
            return False
        try:
            data = self._serialise(value)
        except (TypeError, ValueError):  # not data orjson (or marshal) writes: walk it
            return True
        anchors = self._anchors
        return anchors[0] in data if len(anchors) == 1 else any(map(data.__contains__, anchors))

    def at(self, label: str) -> _At:
        """Label what is walked inside: a panel, a run set, a section."""
        return _At(self, label)

    # --- recording ----------------------------------------------------------------------------

    def change(
        self,
        edit: Edit,
        action: ChangeAction,
        old: Any,
        new: Any,
        field: str,
        at: Path | None = None,
        version: str = "",
        is_regex: bool = False,
    ) -> None:
        self.edits.append(edit)
        where = at if at is not None else edit.path
        self.changes.append(
            Change(pointer(where), action, old, new, self.where, field, where, is_regex)
        )
        self.change_edits.append(edit)
        if version:
            self.versions.add(version)

    def note(self, path: Path, kind: NoteKind, message: str, field: str) -> None:
        self.notes.append(Note(pointer(path), kind, message, self.where, field, path))

    def _gone(self, path: Path, fate: Fate, field: str) -> None:
        self.note(
            path,
            NoteKind.REVIEW,
            f"{fate.old} is no longer logged and nothing replaces it ({fate.reason})",
            field,
        )

    def _equivalent(self, path: Path, fate: Fate, field: str) -> None:
        if fate.removed and fate.new:
            self.note(
                path,
                NoteKind.INFO,
                f"{fate.old} is no longer logged; {fate.new} carries "
                f"the same values ({fate.reason})",
                field,
            )

    def _hides_history(self, path: Path, fate: Fate, field: str) -> None:
        if self.dual:
            self.note(
                path,
                NoteKind.WARNING,
                f"this field holds one key: it now shows {fate.new}, so runs from before "
                f"the boundary (which only have {fate.old}) drop out of it",
                field,
            )

    # --- what the project's runs logged (live, from the key census) ---------------------------

    def unlogged(self, key: str, unless_waiting: bool = False) -> str | None:
        """Which runs were read, when none of them logged `key`; None when one did, or when
        there is no census (offline) or no run to tell from. Before a project upgrades no run
        logs a new key: `unless_waiting` says nothing then in dual mode, which still shows the
        old key (the plan says once that the project has not upgraded)."""
        history = self.options.history
        if history is None or not history.runs or history.logged(key):
            return None
        return None if unless_waiting and self.dual and not history.upgraded else history.scope

    def warn_unlogged(
        self,
        path: Path,
        key: str,
        field: str,
        message: Callable[[str], str],
        unless_waiting: bool = False,
    ) -> None:
        """Warn, with `message(scope)`, when no run logged `key`."""
        scope = self.unlogged(key, unless_waiting)
        if scope is not None:
            self.note(path, NoteKind.WARNING, message(scope), field)

    def _logged(self, path: Path, fate: Fate, field: str, companion: bool = False) -> None:
        """Warn where a rewrite shows a key no run logged (the series stays blank), and, for a
        dual-mode companion, where no run logged the old key either (keeping it adds nothing)."""
        new, old = fate.new, fate.old
        assert new is not None
        self.warn_unlogged(
            path,
            new,
            field,
            lambda scope: f"no run has logged {new} ({scope}): nothing shows for it until one does",
            unless_waiting=True,
        )
        if companion and self.dual:
            self.warn_unlogged(
                path,
                old,
                field,
                lambda scope: (
                    f"no run has logged {old} either ({scope}): keeping it beside "
                    f"{new} adds nothing here; --mode replace would keep only the new key"
                ),
            )

    # --- one key --------------------------------------------------------------------------------

    def single(self, path: Path, value: Any, field: str, decode: Decode = names.accessor) -> None:
        """A field that holds one key (an axis, a sort key, a filter): it gets the new key."""
        found = decode(value)
        fate = self.fate(found.name) if found else None
        if found is None or fate is None:
            return
        if fate.new is None:
            self._gone(path, fate, field)
            return
        new = found.with_name(fate.new)
        self.change(Set(path, new), ChangeAction.RENAMED, value, new, field, version=fate.version)
        self._equivalent(path, fate, field)
        self._hides_history(path, fate, field)
        self._logged(path, fate, field)

    # --- lists of keys ----------------------------------------------------------------------------

    def key_list(
        self,
        path: Path,
        items: list[Any],
        field: str,
        decode: Decode = names.accessor,
        inner: Path = (),
    ) -> None:
        """A list of keys (series, columns). Dual mode adds each new key right after its old one;
        replace mode swaps it, or drops the old key when the new one is already listed. Keys that
        are gone stay in dual mode (old runs have them) and are dropped in replace mode.

        `inner` is where the key sits inside each item (`("accessor",)` for column objects).
        """
        if not self.may_hold(items):
            return
        present = {key for item in items if isinstance(key := _dig(item, inner), str)}
        for i, item in enumerate(items):
            old = _dig(item, inner)
            found = decode(old)
            fate = self.fate(found.name) if found else None
            if found is None or fate is None:
                continue
            label = f"{field}[{i}]"
            if fate.new is None:
                if self.dual:
                    self.note(
                        (*path, i),
                        NoteKind.INFO,
                        f"{fate.old} is no longer logged; kept for runs from before the boundary",
                        label,
                    )
                else:
                    self.change(
                        Delete((*path, i)),
                        ChangeAction.REMOVED,
                        old,
                        None,
                        label,
                        version=fate.version,
                    )
                continue
            new = found.with_name(fate.new)
            self._equivalent((*path, i), fate, label)
            if self.dual and new not in present:
                self.change(
                    Insert((*path, i + 1), _put(item, inner, new)),
                    ChangeAction.ADDED,
                    old,
                    new,
                    label,
                    at=(*path, i),
                    version=fate.version,
                )
                self._logged((*path, i), fate, label, companion=True)
            elif not self.dual and new in present:
                self.change(
                    Delete((*path, i)), ChangeAction.REMOVED, old, None, label, version=fate.version
                )
            elif not self.dual:
                self.change(
                    Set((*path, i, *inner), new),
                    ChangeAction.RENAMED,
                    old,
                    new,
                    label,
                    version=fate.version,
                )
                self._logged((*path, i), fate, label)
            present.add(new)

    def single_list(self, path: Path, items: list[Any], field: str) -> None:
        """A list that the panel reads one key from (a scalar chart's `metrics`)."""
        for i, item in enumerate(items):
            self.single((*path, i), item, f"{field}[{i}]")

    # --- maps keyed by keys -------------------------------------------------------------------

    def key_map(
        self,
        path: Path,
        mapping: dict[str, Any],
        field: str,
        decode: Decode = names.accessor,
        dual_adds: bool = True,
    ) -> None:
        """A map keyed by metric (run-table columns, panel overrides). Dual mode adds an entry
        for the new key with the same value, unless `dual_adds` is off (per-run series keys,
        which only old runs have); replace mode renames the entry. A key that is already there
        (or that another old key becomes) is not added twice."""
        if (self.dual and not dual_adds) or not self.may_hold(list(mapping)):
            return  # dual mode adds nothing to a map of per-run keys, and drops nothing
        taken = set(mapping)
        for key in mapping:
            found = decode(key)
            fate = self.fate(found.name) if found else None
            if found is None or fate is None:
                continue
            label = f"{field}[{json.dumps(key)}]"
            member = (*path, key)
            new = found.with_name(fate.new) if fate.new else None
            if self.dual:
                if new is not None and dual_adds and new not in taken:
                    taken.add(new)
                    value = self.current(member, mapping[key])
                    self.change(
                        AddKey((*path, new), value, after=key),
                        ChangeAction.ADDED,
                        key,
                        new,
                        label,
                        at=member,
                        version=fate.version,
                    )
                    self._logged(member, fate, label, companion=True)
            elif new is None or new in taken:
                self.forget(member)  # edits inside an entry that goes are moot
                self.change(
                    Delete(member), ChangeAction.REMOVED, key, None, label, version=fate.version
                )
            else:
                taken.add(new)
                self.change(
                    RenameKey(member, new),
                    ChangeAction.RENAMED,
                    key,
                    new,
                    label,
                    version=fate.version,
                )
                if dual_adds:  # a per-run series key: whether it shows is up to the run
                    self._logged(member, fate, label)

    def forget(self, path: Path) -> None:
        """Drop the edits and changes recorded inside `path` (which is about to be deleted)."""
        depth, inside = len(path), pointer(path) + "/"
        self.edits = [e for e in self.edits if e.path[:depth] != path or len(e.path) == depth]
        kept = [
            (c, e)
            for c, e in zip(self.changes, self.change_edits, strict=True)
            if not c.pointer.startswith(inside)
        ]
        self.changes = [c for c, _ in kept]
        self.change_edits = [e for _, e in kept]

    def current(self, path: Path, value: Any) -> Any:
        """`value` (found at `path`) with the edits recorded so far inside it applied."""
        depth = len(path)
        inside = [e for e in self.edits if e.path[:depth] == path and len(e.path) > depth]
        if not inside:
            return value
        return materialize(value, [_rebase(e, depth) for e in inside])

    # --- expressions ------------------------------------------------------------------------------

    def expressions(self, path: Path, items: list[Any], field: str) -> None:
        """Custom expressions (`${off_policy/mean}*2`): each is a series of its own, so dual mode
        adds the rewritten expression after the original."""
        present = set(items)
        for i, expression in enumerate(items):
            new = self._rewritten_expression((*path, i), expression, f"{field}[{i}]")
            if new is None:
                continue
            label = f"{field}[{i}]"
            if self.dual and new not in present:
                self.change(
                    Insert((*path, i + 1), new),
                    ChangeAction.ADDED,
                    expression,
                    new,
                    label,
                    at=(*path, i),
                )
            elif not self.dual:
                self.change(Set((*path, i), new), ChangeAction.RENAMED, expression, new, label)
            present.add(new)

    def expression(self, path: Path, value: Any, field: str) -> None:
        """One expression or template (`xExpression`, `legendTemplate`)."""
        new = self._rewritten_expression(path, value, field)
        if new is not None:
            self.change(Set(path, new), ChangeAction.RENAMED, value, new, field)

    def _rewritten_expression(self, path: Path, expression: Any, field: str) -> str | None:
        if not isinstance(expression, str):
            return None
        fates = [f for a in names.expression_names(expression) if (f := self.fate(a.name))]
        for fate in fates:
            if fate.new is None:
                self._gone(path, fate, field)
        renamed = {f.old: f.new for f in fates if f.new}
        if not renamed:
            return None
        for fate in {f.old: f for f in fates if f.new}.values():
            self._logged(path, fate, field)
        self.versions.update(f.version for f in fates if f.new)
        return names.replace_in_expression(expression, renamed.get)

    # --- regexes and free text ----------------------------------------------------------------

    def regex(self, path: Path, pattern: Any, field: str, ignore_case: bool = False) -> None:
        if not isinstance(pattern, str) or not pattern:
            return
        known = self.migration.known_names | self.options.project_keys
        if self.options.history is not None:  # live: the keys the project's runs logged
            known |= self.options.history.keys
        outcome = rewrite_regex(pattern, known, self._regex_target, ignore_case=ignore_case)
        old_matched = sorted(outcome.matched & self.migration.old_names)
        if outcome.new is not None:
            self.change(
                Set(path, outcome.new),
                ChangeAction.RENAMED,
                pattern,
                outcome.new,
                field,
                is_regex=True,
            )
            self.versions.update(f.version for k in old_matched if (f := self.fate(k)))
        elif outcome.review and old_matched:
            self.note(
                path,
                NoteKind.REVIEW,
                f"regex {pattern!r} matches {', '.join(old_matched)} "
                f"but was left as it is: {outcome.review}",
                field,
            )
        elif outcome.review:
            self.note(
                path,
                NoteKind.REVIEW,
                f"regex {pattern!r} could not be checked against the renamed keys: "
                f"{outcome.review}",
                field,
            )

    def _regex_target(self, key: str) -> set[str]:
        fate = self.fate(key)
        if fate is None:
            return {key}
        kept = {key} if self.dual else set()
        return kept | {fate.new} if fate.new else kept

    def text(self, path: Path, value: Any, field: str) -> None:
        """Free text (markdown, titles, descriptions): reported for review, or rewritten when
        the `rewrite_text` option is on (names that are gone are always only reported)."""
        if not isinstance(value, str) or not self.may_mention(value):
            return
        found = names.mentions(value, self._mention)
        if not found:
            return
        fates = {name: fate for name in found if (fate := self.fate(name))}
        renamed = {name: f.new for name, f in fates.items() if f.new}
        if self.options.rewrite_text and renamed:
            new = names.replace_mentions(value, self._mention, renamed.get)
            self.change(Set(path, new), ChangeAction.RENAMED, value, new, field)
            self.versions.update(fates[name].version for name in renamed)
            found = [name for name in found if name not in renamed]
        if found:
            self.note(
                path,
                NoteKind.REVIEW,
                f"free text mentions {', '.join(found)}; text is "
                "not rewritten (see --rewrite-text)",
                field,
            )

    def scan(self, path: Path, value: Any, what: str, skip: frozenset[Path] = frozenset()) -> None:
        """A structure wbmigrate does not know: report every old name in it, change nothing."""
        for at, text in _strings(value, path, self.may_hold):
            if at in skip or not self.may_mention(text):
                continue
            found = names.accessor(text)
            if found is not None and self.fate(found.name):
                self.note(
                    at,
                    NoteKind.REVIEW,
                    f"{what} holds {text!r}, which the mapping "
                    "renames or removes; unknown structures are not rewritten",
                    _field(at[len(path) :]),
                )
            elif names.mentions(text, self._mention):
                self.note(
                    at,
                    NoteKind.REVIEW,
                    f"{what} mentions "
                    f"{', '.join(names.mentions(text, self._mention))}; unknown structures "
                    "are not rewritten",
                    _field(at[len(path) :]),
                )

    def embedded(
        self, path: Path, text: str, walk: Callable[[Walk, Any], None], field: str
    ) -> None:
        """A JSON document stored as a string (an alert's `event.filter`): walked on its own,
        then spliced so its untouched bytes stay. Its changes point into it from `path`."""
        try:
            document = json.loads(text)
        except ValueError:
            self.note(path, NoteKind.REVIEW, f"{field} is not valid JSON; left as it is", field)
            return
        inner = Walk(self.migration, self.options)
        inner.where = self.where
        walk(inner, document)
        prefix = pointer(path)
        self.notes += [replace(n, pointer=prefix + n.pointer, path=path) for n in inner.notes]
        self.versions |= inner.versions
        if inner.edits:
            outer = Set(path, splice(text, inner.edits))
            self.edits.append(outer)
            self.changes += [
                replace(c, pointer=prefix + c.pointer, path=path) for c in inner.changes
            ]
            self.change_edits += [outer] * len(inner.changes)

    def remove(self, path: Path, value: Any, field: str, why: str) -> None:
        """Delete a whole object (a panel); the change keeps all of it so it can be restored."""
        self.change(Delete(path), ChangeAction.REMOVED, value, None, field)
        self.note(path, NoteKind.WARNING, why, field)


def _dig(item: Any, inner: Path) -> Any:
    for part in inner:
        item = item.get(part) if isinstance(item, dict) else None
    return item


def _put(item: Any, inner: Path, value: Any) -> Any:
    if not inner:
        return value
    head, *rest = inner
    return {**item, head: _put(item[head], tuple(rest), value)}


def _rebase(edit: Edit, depth: int) -> Edit:
    return replace(edit, path=edit.path[depth:])


def _serialiser(anchors: tuple[bytes, ...]) -> Callable[[Any], bytes]:
    """What `may_hold` looks for the anchors in: orjson's JSON of a value, twice as fast to
    write as `marshal`'s bytes (which were five times faster than `json.dumps`). orjson writes
    a string's UTF-8 bytes as they are but for JSON's escapes (a quote, a backslash, a control
    character), so an anchor with none of those is in a value exactly when it is in orjson's
    text of it; for any other, `marshal`, which escapes nothing."""
    escaped = any(byte in b'"\\' or byte < 0x20 for anchor in anchors for byte in anchor)
    return marshal.dumps if escaped else orjson.dumps


def _strings(value: Any, path: Path, may_hold: Callable[[Any], bool]) -> Iterator[tuple[Path, str]]:
    """Every string in `value`, in document order, but for containers `may_hold` rules out:
    the cold parts of a big structure cost one C-speed test each."""
    stack = [(path, value)]  # a stack, not recursion: any depth is fine
    while stack:
        at, node = stack.pop()
        if isinstance(node, str):
            yield at, node
        elif isinstance(node, (dict, list)) and may_hold(node):
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack += reversed([((*at, k), v) for k, v in items])


def _field(path: Path) -> str:
    """`("config", "metrics", 1)` -> `config.metrics[1]`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
