"""What a walk records, and the notes every rule shares: the edits (for the new spec), the
changes (for the plan), the notes, and what the project's runs logged (the key census).

`Walk` (engine/walk.py) adds the rules for each shape of field on top: recording is split from
the rules so each module reads as one thing, and both stay short.
"""

from __future__ import annotations

import functools
import marshal
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import orjson

from wbmigrate import names
from wbmigrate.edit.edits import Edit, Path, materialize, pointer
from wbmigrate.engine.model import (
    Change,
    ChangeAction,
    Mode,
    Note,
    NoteKind,
    Options,
    Shown,
    Unlogged,
)
from wbmigrate.mapping import Fate, Migration
from wbmigrate.names import AFTER_NAME, NAME_BYTES, NAME_START, trie

ONE_KEY = "this field holds one key"


class Record:
    def __init__(self, migration: Migration, options: Options) -> None:
        self.migration = migration
        self.options = options
        self.dual = options.mode is Mode.DUAL  # asked for every key met: an attribute
        self.edits: list[Edit] = []
        self.changes: list[Change] = []
        self.change_edits: list[Edit] = []  # the edit that makes each change
        self.notes: list[Note] = []
        self.shown: list[Shown] = []
        self.versions: set[str] = set()  # steps whose renames this spec needed
        self.kept: list[Path] = []  # old keys dual mode leaves where they are, on purpose
        self._paths_under: set[Path] = set()  # what the edits are inside (`_holds`)
        self._pointers_under: set[str] = set()  # what the changes are inside
        self._counted = (0, 0)  # how many edits and changes those have taken in
        self.in_config = False  # inside `Walk.config_keys`: keys are config keys
        self.where: tuple[str, ...] = ()
        self._text_words = name_words(migration.old_names)  # what `mentions` looks for
        self.fate: Callable[[str], Fate | None] = migration.metrics.get  # `Migration.fate`
        self.config_fates: dict[str, Fate] = migration.config_fates
        self._anchors = migration.anchor_bytes
        self._serialise = serialiser(self._anchors)
        self._spellings = migration.old_names  # what `may_name` looks for
        self._words, self._exact = spelling_words(self._spellings)

    def may_hold(self, value: Any) -> bool:
        """Whether `value` may hold an old name. Most of a spec cannot, and a C-speed test on
        its serialised bytes (`serialiser`) lets the walk skip it. An empty field (a third of
        those asked about: the overrides a panel does not set) holds nothing."""
        if not value:
            return False
        try:
            data = self._serialise(value)
        except (TypeError, ValueError):  # not data orjson (or marshal) writes: walk it
            return True
        anchors = self._anchors
        return anchors[0] in data if len(anchors) == 1 else any(map(data.__contains__, anchors))

    def may_name(self, value: Any) -> bool:
        """Whether `value` may name an old key whole, as the rules read it (`reward/mean`, not
        the `reward/mean` inside `train/reward/mean`): asked of each panel and run set before
        its walk. Sharper than `may_hold` when a mapping's parts are common words (prime-rl's
        `mean`, `max`, `loss`): with it, the benchmark's plan of 600 objects took 2.35 s
        instead of 3.11 s at 100 ms (1.80 s of CPU instead of 2.84 s at 0 ms), of 6,000
        objects 16.2 s instead of 25.8 s. Its words (`name_words`) answer without a regex."""
        if not value:
            return False
        try:
            data = orjson.dumps(value)
        except (TypeError, ValueError):  # not data orjson writes: walk it
            return True
        words = self._words
        if words is not None and data[0] not in NAME_BYTES:
            found = words_of(data)
            if words.isdisjoint(found) or self._exact:
                return not words.isdisjoint(found)
        names = whole_names(self._spellings)
        if names is None:  # a name orjson writes escaped: the anchors, then
            return self.may_hold(value)
        return names.search(data) is not None

    def mentions(self, text: str) -> list[str]:
        """The old names `text` mentions whole (`names.mentions`). Only a text holding one of
        them as a word (`name_words`) is searched: the benchmark's 10,596 texts, none of which
        mentions one, took 0.15 s with the pattern, 0.01 s told by their words."""
        words = self._text_words
        try:  # any byte but a name's splits words, so a whole mention is a word
            if words is not None and words.isdisjoint(text.encode().translate(_WORDS).split()):
                return []
        except UnicodeEncodeError:  # a lone surrogate: the pattern tells
            pass
        return names.mentions(text, self.migration.mention)

    @contextmanager
    def at(self, label: str) -> Iterator[None]:
        """Label what is walked inside: a panel, a run set, a section."""
        outer = self.where
        self.where = (*outer, label)
        try:
            yield
        finally:
            self.where = outer

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
            Change(
                pointer(where), action, old, new, self.where, field, where, is_regex, self.in_config
            )
        )
        self.change_edits.append(edit)
        if version:
            self.versions.add(version)

    def note(self, path: Path, kind: NoteKind, message: str, field: str) -> None:
        self.notes.append(Note(pointer(path), kind, message, self.where, field, path))

    def _gone(self, path: Path, fate: Fate, field: str) -> None:
        """A key no step renames into anything. A removed config key is left as it is, never
        deleted: runs from before the step still have a value for it."""
        if self.in_config:
            step = self.migration.step_label(fate.version)
            gone = f"{fate.old} was removed in step {step}: runs after it have no value. "
            self.note(path, NoteKind.WARNING, gone + fate.reason, field)
            return
        gone = f"{fate.old} is no longer logged and nothing replaces it ({fate.reason})"
        self.note(path, NoteKind.REVIEW, gone, field)

    def _equivalent(self, path: Path, fate: Fate, field: str) -> None:
        if fate.removed and fate.new:
            same = f"{fate.new} carries the same values ({fate.reason})"
            self.note(path, NoteKind.INFO, f"{fate.old} is no longer logged; {same}", field)

    def _hides_history(self, path: Path, fate: Fate, field: str, holds: str = ONE_KEY) -> None:
        if self.dual:
            before = f"runs from before the boundary (which only have {fate.old})"
            hides = f"{holds}: it now shows {fate.new}, so {before} drop out of it"
            self.note(path, NoteKind.WARNING, hides, field)

    # --- keys the census may say no run logged (`rewrite.census_warnings`) --------------------

    def shows(self, path: Path, key: str, field: str, unlogged: Unlogged, new: str = "") -> None:
        """Record that the rewrite shows `key` at `path`: a warning if no run logged it. Before
        a project upgrades no run logs a new key: dual mode, which still shows the old key,
        then says nothing of it (the plan says once that the project has not upgraded)."""
        waits = unlogged is Unlogged.BLANK and self.dual
        shown = Shown(len(self.notes), key, unlogged, self.where, field, path, new, waits, path)
        self.shown.append(shown)

    def _logged(self, path: Path, fate: Fate, field: str, companion: bool = False) -> None:
        """Where a rewrite shows a new key (the series stays blank if no run logged it), and,
        for a dual-mode companion, the old key beside it (keeping it adds nothing if no run
        logged it either)."""
        assert fate.new is not None
        self.shows(path, fate.new, field, Unlogged.BLANK)
        if companion and self.dual:
            self.shows(path, fate.old, field, Unlogged.COMPANION, new=fate.new)

    def forget(self, path: Path, value: Any) -> None:
        """Drop the edits and changes recorded inside `path` (which is about to be deleted),
        where `value` is found."""
        if not self._holds(path, value):
            return
        depth, inside = len(path), pointer(path) + "/"
        self.edits = [e for e in self.edits if e.path[:depth] != path or len(e.path) == depth]
        kept = [
            (c, e)
            for c, e in zip(self.changes, self.change_edits, strict=True)
            if not c.pointer.startswith(inside)
        ]
        self.changes = [c for c, _ in kept]
        self.change_edits = [e for _, e in kept]
        self._counted = len(self.edits), len(self.changes)

    def current(self, path: Path, value: Any) -> Any:
        """`value` (found at `path`) with the edits recorded so far inside it applied."""
        if not self._holds(path, value):
            return value
        depth = len(path)
        inside = [e for e in self.edits if e.path[:depth] == path and len(e.path) > depth]
        if not inside:
            return value
        return materialize(value, [_rebase(e, depth) for e in inside])

    def _holds(self, path: Path, value: Any) -> bool:
        """Whether an edit or a change may be recorded inside `path`, where `value` is: never
        inside a number or a string (a run table's widths, a series' title); else as the paths
        and pointers they are inside say, each edit and change taken in once. Looked for among
        all of them for each entry a key map adds or drops, a large spec cost entries x edits:
        `plan` of a 20 MB report took 2.0 s (1.5 s now), 13.8 s in replace mode (1.6 s now)."""
        if not isinstance(value, (dict, list)):
            return False
        edits, changes = self._counted
        for edit in self.edits[edits:]:
            self._paths_under.update(edit.path[:depth] for depth in range(len(edit.path)))
        for change in self.changes[changes:]:
            at = change.pointer
            while at:
                at = at[: at.rfind("/")]
                self._pointers_under.add(at)
        self._counted = len(self.edits), len(self.changes)
        return path in self._paths_under or pointer(path) in self._pointers_under


def _rebase(edit: Edit, depth: int) -> Edit:
    return replace(edit, path=edit.path[depth:])


@functools.lru_cache(maxsize=16)  # once per migration, not per object
def serialiser(anchors: tuple[bytes, ...]) -> Callable[[Any], bytes]:
    """What `may_hold` looks for the anchors in: orjson's JSON of a value, twice as fast to
    write as `marshal`'s bytes (which were five times faster than `json.dumps`). orjson writes
    a string's UTF-8 bytes as they are but for JSON's escapes (a quote, a backslash, a control
    character), so an anchor with none of those is in a value exactly when it is in orjson's
    text of it; for any other, `marshal`, which escapes nothing."""
    escaped = any(byte in b'"\\' or byte < 0x20 for anchor in anchors for byte in anchor)
    return marshal.dumps if escaped else orjson.dumps


@functools.lru_cache(maxsize=16)  # once per migration, not per object
def whole_names(spellings: frozenset[str]) -> re.Pattern[bytes] | None:
    """Each of `spellings` whole in orjson's text of a value (`Record.may_name`); None when
    one of them holds a character orjson escapes (a quote, a backslash, a control character)."""
    try:
        words = sorted(spelling.encode().decode("latin-1") for spelling in spellings)
    except UnicodeEncodeError:  # a lone surrogate, which orjson writes no text of
        return None
    if any(char in '"\\' or char < " " for word in words for char in word):
        return None
    # the boundary the rules read: an accessor's name runs to the end of its string after a
    # prefix ending in `:` or `.` (`summary:`), a mention or an expression's token stands alone
    alternatives = "|".join(trie(words, end=AFTER_NAME)) or "(?!)"
    return re.compile(f"{NAME_START}(?:{alternatives})".encode("latin-1"))


_WORDS = bytes(c if c in NAME_BYTES else 32 for c in range(256))  # `split()` gives the words
# The name after each escape `NAME_START` reads as a boundary, which `_WORDS` glues to it.
_AFTER_ESCAPE = re.compile(rb"\\(?:[nrtbfv/]|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2})([\w/-]+)")


def words_of(data: bytes) -> list[bytes]:
    """The words of orjson's text of a value (`name_words`): a name after an escape is whole
    too (`\\n`, `\\u00e9`)."""
    found = data.translate(_WORDS).split()
    return found + _AFTER_ESCAPE.findall(data) if b"\\" in data else found


@functools.lru_cache(maxsize=16)  # once per migration, not per object
def spelling_words(spellings: frozenset[str]) -> tuple[frozenset[bytes] | None, bool]:
    """What `may_name` looks up in a value's words, and whether a hit is an answer: the
    spellings themselves (`name_words`), or, when they hold dots (config keys, 0 of which the
    benchmark's 19,273 panels name), their first parts (`buffer` of `buffer.easy_border`: a
    spelling is whole only where its first part is a word), a hit then told by the pattern
    (figures at `Walk.may_name_either`, which asks both at once)."""
    exact = name_words(spellings)
    if exact is not None:
        return exact, True
    return name_words(frozenset(spelling.split(".", 1)[0] for spelling in spellings)), False


@functools.lru_cache(maxsize=16)  # once per migration, not per object
def name_words(spellings: frozenset[str]) -> frozenset[bytes] | None:
    """`spellings` as the words (runs of `NAME_BYTES`, a name's `[\\w/-]`) of orjson's text of
    a value: text starting with no such byte holds a spelling whole exactly when it holds it
    as a word or as the run after an escape (`_AFTER_ESCAPE`), as `whole_names` would find it;
    None when a spelling is empty or holds any other byte. A set lookup per word instead of the
    regex at every byte: with the 602-name prime-rl mapping the benchmark's 19,273 panels were
    told in 0.12 s instead of 0.49 s, its 10,596 texts (`Record.mentions`) in 0.01 s instead
    of 0.15 s, and the plan of its 600 objects took 1.53 s of CPU instead of 1.87 s at 0 ms
    (median of 6, alternating; the patterns are then never compiled). At 100 ms, in the full
    benchmark runs before and after it, the 500-view plan took 1.88 s instead of 2.22 s (2.12x
    the floor instead of 2.46x), the 5,000-view plan 15.0 s instead of 15.8 s."""
    words = frozenset(spelling.encode("utf-8", "surrogatepass") for spelling in spellings)
    return words if all(word and NAME_BYTES.issuperset(word) for word in words) else None
