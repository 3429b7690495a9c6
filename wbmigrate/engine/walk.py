"""One rewrite in progress: the rules for each shape of metric-bearing field.

Kind and panel modules call these primitives with a path into the original spec and the value
found there; each records edits (for the new spec), changes (for the plan) and notes through
`Record` (engine/record.py). The input is only read.

Every rule (one key, key lists, key maps, expressions, regexes, free text, unknown structures,
embedded JSON) records into the same edit list under the same dual/replace semantics: keeping
them side by side is what keeps them consistent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from functools import cached_property
from typing import Any

import orjson

from wbmigrate import names
from wbmigrate.edit.edits import AddKey, Delete, Insert, Path, RenameKey, Set, pointer
from wbmigrate.edit.json import splice
from wbmigrate.engine.model import ChangeAction, NoteKind
from wbmigrate.engine.record import ONE_KEY, Record, serialiser, spelling_words, words_of
from wbmigrate.engine.regexes import rewrite_regex
from wbmigrate.engine.shapes import nodes
from wbmigrate.names import NAME_BYTES

Decode = Callable[[Any], names.Accessor | None]


class Walk(Record):
    """The rules, each recording through `Record`."""

    met_regex = False  # a regex is rewritten against the census's keys (`rewrite.finish`)

    # --- config keys ----------------------------------------------------------------------------

    @cached_property
    def _config_serialise(self) -> Callable[[Any], bytes]:
        return serialiser(self.migration.config_anchor_bytes)

    def may_name_either(self, value: Any) -> tuple[bool, bool]:
        """`may_name` of `value`, and whether it may name a config key (asked again inside
        `config_keys` when it may), from one look at its words: asked of each panel and run
        set. None of the benchmark's 19,273 panels holds a config key's first part. With this
        and the sharper `may_name` (escapes told by words, config keys by their first parts),
        the walk of the benchmark's 600 objects took 0.52-0.56 s instead of 0.71-0.73 s (one
        process, best of 3, twice alternating), its plan at 0 ms 1.69 s of CPU instead of
        1.84 s (mean of 6 alternating, min 1.58 s against 1.75 s; a machine shared by several
        engineers)."""
        if not self.config_fates:  # most mappings rename no config key
            return self.may_name(value), False
        config, _ = spelling_words(self.migration.config_spellings)
        try:
            data = orjson.dumps(value)
        except (TypeError, ValueError):  # not data orjson writes: walk it
            return True, True
        if not self._exact or config is None or not data or data[0] in NAME_BYTES:
            return self.may_name(value), True
        assert self._words is not None  # `_exact`
        found = words_of(data)
        return not self._words.isdisjoint(found), not config.isdisjoint(found)

    @contextmanager
    def config_keys(self) -> Iterator[None]:
        """Inside, the rules look keys up among the mapping's config renames instead of its
        metrics: a run set's config columns, filters, sort keys and grouping get the rules its
        metric keys get. The key census counts metrics only, so what it would be asked about
        config keys is dropped."""
        saved = self.fate, self._anchors, self._serialise, self._spellings, self._words
        outer = self.shown, self.in_config, self._exact
        self.fate, self._anchors = self.config_fates.get, self.migration.config_anchor_bytes
        self._serialise, self._spellings = self._config_serialise, self.migration.config_spellings
        self._words, self._exact = spelling_words(self._spellings)
        self.shown, self.in_config = [], True
        try:
            yield
        finally:
            self.fate, self._anchors, self._serialise, self._spellings, self._words = saved
            self.shown, self.in_config, self._exact = outer

    # --- one key --------------------------------------------------------------------------------

    def single(
        self,
        path: Path,
        value: Any,
        field: str,
        decode: Decode = names.accessor,
        holds: str = ONE_KEY,
    ) -> None:
        """A field that holds one key (an axis, a sort key, a filter): it gets the new key. In
        dual mode a warning says that old runs drop out of it, and why (`holds`)."""
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
        self._hides_history(path, fate, field, holds)
        self._logged(path, fate, field)

    # --- lists of keys ----------------------------------------------------------------------------

    def key_list(
        self,
        path: Path,
        items: list[Any],
        field: str,
        decode: Decode = names.accessor,
        inner: Path = (),
        claims: Mapping[str, str] | None = None,
    ) -> None:
        """A list of keys (series, columns). Dual mode adds each new key right after its old one;
        replace mode swaps it, or drops the old key when the new one is already listed. Keys that
        are gone stay in dual mode (old runs have them) and are dropped in replace mode.

        `inner` is where the key sits inside each item (`("accessor",)` for column objects).
        `claims` maps a new key that several old keys become to the one old key whose place it
        takes; the others stay (dual) or go (replace) as if the new key were listed already.
        """
        # Not for the benchmark (without this test and `key_map`'s, its walk took 1.5% fewer
        # instructions) but for a large list or map naming no old key in a panel that does: a
        # 7.6 MB panel of 200,000 legend fields and series overrides took 0.35 s, 0.92 s without.
        if not self.may_name(items):
            return
        present = {key for item in items if isinstance(key := _dig(item, inner), str)}
        for i, item in enumerate(items):
            old, at, label = _dig(item, inner), (*path, i), f"{field}[{i}]"
            found = decode(old)
            fate = self.fate(found.name) if found else None
            if found is None or fate is None:
                continue
            step = fate.version
            if fate.new is None and self.in_config:  # a removed config key stays
                self._gone(at, fate, label)
                continue
            if fate.new is None:
                if self.dual:
                    kept = f"{fate.old} is no longer logged; kept for runs from before the boundary"
                    self.note(at, NoteKind.INFO, kept, label)
                else:
                    self.change(Delete(at), ChangeAction.REMOVED, old, None, label, version=step)
                continue
            new = found.with_name(fate.new)
            self._equivalent(at, fate, label)
            if _yields(claims, new, old):
                if not self.dual:
                    self.change(Delete(at), ChangeAction.REMOVED, old, None, label, version=step)
                else:
                    self.kept.append(at)
                continue
            if self.dual and new not in present:
                added = Insert((*path, i + 1), _put(item, inner, new))
                self.change(added, ChangeAction.ADDED, old, new, label, at=at, version=step)
                self._logged(at, fate, label, companion=True)
            elif not self.dual and new in present:
                self.change(Delete(at), ChangeAction.REMOVED, old, None, label, version=step)
            elif not self.dual:
                renamed = Set((*at, *inner), new)
                self.change(renamed, ChangeAction.RENAMED, old, new, label, version=step)
                self._logged(at, fate, label)
            else:  # dual, its new key listed already: it stays, as dual mode means
                self.kept.append(at)
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
        claims: Mapping[str, str] | None = None,
    ) -> None:
        """A map keyed by metric (run-table columns, panel overrides). Dual mode adds an entry
        for the new key with the same value, unless `dual_adds` is off (per-run series keys,
        which only old runs have); replace mode renames the entry. A key that is already there
        (or that another old key becomes) is not added twice; with `claims` (see `key_list`),
        only the entry of the old key named there goes to the new key."""
        if not self.may_name(list(mapping)):  # why: at `key_list`
            return
        if self.dual and not dual_adds:  # dual mode adds nothing to a map of per-run keys
            self.kept += [(*path, k) for k in mapping if (f := decode(k)) and self.fate(f.name)]
            return
        taken = set(mapping)
        for key in mapping:
            found = decode(key)
            fate = self.fate(found.name) if found else None
            if found is None or fate is None:
                continue
            label, member, step = f"{field}[{json.dumps(key)}]", (*path, key), fate.version
            if fate.new is None and self.in_config:
                self._gone(member, fate, label)
                continue
            new = found.with_name(fate.new) if fate.new else None
            # another old key's entry goes to the new key: as if the new key were there
            held = new is not None and (new in taken or _yields(claims, new, key))
            if self.dual:  # and so `dual_adds`
                if new is None or held:
                    self.kept.append(member)
                else:
                    taken.add(new)
                    added = AddKey((*path, new), self.current(member, mapping[key]), after=key)
                    self.change(added, ChangeAction.ADDED, key, new, label, at=member, version=step)
                    self._logged(member, fate, label, companion=True)
            elif new is None or held:
                self.forget(member, mapping[key])  # edits inside an entry that goes are moot
                self.change(Delete(member), ChangeAction.REMOVED, key, None, label, version=step)
            else:
                taken.add(new)
                renamed = RenameKey(member, new)
                self.change(renamed, ChangeAction.RENAMED, key, new, label, version=step)
                if dual_adds:  # a per-run series key: whether it shows is up to the run
                    self._logged(member, fate, label)

    # --- expressions ------------------------------------------------------------------------------

    def expressions(self, path: Path, items: list[Any], field: str) -> None:
        """Custom expressions (`${off_policy/mean}*2`): each is a series of its own, so dual mode
        adds the rewritten expression after the original."""
        present = {item for item in items if isinstance(item, str)}  # not an object W&B wrote
        for i, expression in enumerate(items):
            at, label = (*path, i), f"{field}[{i}]"
            new = self._rewritten_expression(at, expression, label)
            if new is None:
                continue
            if self.dual and new not in present:
                added = Insert((*path, i + 1), new)
                self.change(added, ChangeAction.ADDED, expression, new, label, at=at)
            elif self.dual:
                self.kept.append(at)
            else:
                self.change(Set(at, new), ChangeAction.RENAMED, expression, new, label)
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
        self.met_regex = True
        known = self.migration.known_names | self.options.project_keys
        if self.options.history is not None:  # live: the keys the project's runs logged
            known |= self.options.history.keys
        outcome = rewrite_regex(pattern, known, self._regex_target, ignore_case=ignore_case)
        old_matched = sorted(outcome.matched & self.migration.old_names)
        if outcome.new is not None:
            renamed = Set(path, outcome.new)
            self.change(renamed, ChangeAction.RENAMED, pattern, outcome.new, field, is_regex=True)
            self.versions.update(f.version for k in old_matched if (f := self.fate(k)))
        elif outcome.review:
            why = (
                f"matches {', '.join(old_matched)} but was left as it is"
                if old_matched
                else "could not be checked against the renamed keys"
            )
            self.note(path, NoteKind.REVIEW, f"regex {pattern!r} {why}: {outcome.review}", field)

    def _regex_target(self, key: str) -> set[str]:
        fate = self.fate(key)
        if fate is None:
            return {key}
        kept = {key} if self.dual else set()
        return kept | {fate.new} if fate.new else kept

    def text(self, path: Path, value: Any, field: str) -> None:
        """Free text (markdown, titles, descriptions): reported for review, or rewritten when
        the `rewrite_text` option is on (names that are gone are always only reported)."""
        if not isinstance(value, str):
            return
        found = self.mentions(value)
        if not found:
            return
        fates = {name: fate for name in found if (fate := self.fate(name))}
        renamed = {name: f.new for name, f in fates.items() if f.new}
        if self.options.rewrite_text and renamed:
            new = names.replace_mentions(value, self.migration.mention, renamed.get)
            self.change(Set(path, new), ChangeAction.RENAMED, value, new, field)
            self.versions.update(fates[name].version for name in renamed)
            found = [name for name in found if name not in renamed]
        if found:
            review = f"free text mentions {', '.join(found)}; text is not rewritten"
            self.note(path, NoteKind.REVIEW, f"{review} (see --rewrite-text)", field)

    def scan(self, path: Path, value: Any, what: str, skip: frozenset[Path] = frozenset()) -> None:
        """A structure wbmigrate does not know: report every old name in it, change nothing.
        Most hold none whole (`may_name`, one test, asked outside `config_keys` only, whose
        names are not the ones a scan reports). In one that may, a container without an anchor
        (`may_hold`) is skipped: the benchmark's 236 weave panels that name an old key took
        56 ms instead of 41 ms so, but a 4.3 MB weave tree naming one took 0.28 s, not 0.42 s."""
        if not self.in_config and not self.may_name(value):
            return
        for at, text in nodes(value, path, self.may_hold):
            if at in skip or not isinstance(text, str):
                continue
            found = names.accessor(text)
            if found is not None and self.fate(found.name):
                message = f"holds {text!r}, which the mapping renames or removes"
            elif mentioned := self.mentions(text):
                message = f"mentions {', '.join(mentioned)}"
            else:
                continue
            message = f"{what} {message}; unknown structures are not rewritten"
            self.note(at, NoteKind.REVIEW, message, _field(at[len(path) :]))

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
        prefix, before = pointer(path), len(self.notes)
        self.shown += [
            replace(s, index=before + s.index, prefix=prefix + s.prefix, path=path)
            for s in inner.shown
        ]
        self.notes += [replace(n, pointer=prefix + n.pointer, path=path) for n in inner.notes]
        self.versions |= inner.versions
        self.met_regex |= inner.met_regex
        self.kept += [path] if inner.kept else []
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


def _yields(claims: Mapping[str, str] | None, new: str, old: Any) -> bool:
    """Whether another old key than `old` gives `new` its place (`Walk.key_list`)."""
    return claims is not None and claims.get(new, old) != old


def _dig(item: Any, inner: Path) -> Any:
    for part in inner:
        item = item.get(part) if isinstance(item, dict) else None
    return item


def _put(item: Any, inner: Path, value: Any) -> Any:
    if not inner:
        return value
    head, *rest = inner
    return {**item, head: _put(item[head], tuple(rest), value)}


def _field(path: Path) -> str:
    """`("config", "metrics", 1)` -> `config.metrics[1]`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
