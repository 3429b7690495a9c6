"""The first look at every file `check` reads: a scan of its bytes for what can give it a result,
so that most files are never decoded, parsed or walked.

A file goes on to its checkers when the scan finds a whole spelling of an old name (a metric,
config key or flag, with the residual pass's boundaries: `eval/off_policy/mean` and
`off_policy/mean_smoothed` are other names), or else what may hide one:

- the start of an old spelling cut short by a quote, a brace, a `%` or an escape: a key built
  at run time (`f"off_policy/{split}"`, `"off_policy/" + split`), an escape inside a name
  (`off_policy\\/mean`);
- a name right after an escape (`\\noff_policy/mean` in a notebook's JSON), or an escape
  earlier in a name's token (`dispatcher\\/off_policy_level\\/max`);
- brace shorthand (`off_policy/{mean,max}`), which the residual pass expands;
- a regex field (`metricRegex`, `searchQuery`, `searchHistory`) with a value: an empty one
  (`"searchQuery": ""`, as every workspace has) matches nothing.

A config form of one word (`wandb`, `name`: see `Targets`) is no name here, and only a file's
structure gives it a result: a file goes on too if it holds a one-word flag (`--wandb`), or,
when it may be a config (TOML, JSON, YAML, Markdown, a notebook), every part of a config key
whose last part is one word (`inference`, `model` and `name` for `inference.model.name`).

A file's bytes are first split, in C, into its words (runs of name characters): a whole
spelling starts with one of them (its head: `orchestrator` of `orchestrator.seed`), a one-word
key part is one, and what may hide a name ends one before a cut or follows an escape. Most files
hold none of those words and are passed over after that one pass; the patterns run only where
such a word is (whole spellings: at the head's places; what may hide one: in files holding an
anchor of the mapping, `Targets.anchors`). A name whose anchor is cut by an escape or braces
(`off_{policy,x}/mean`) is not looked for, as before. Whole spellings are handed to the residual
pass, which then does not look for them again.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from wbmigrate.names import AFTER_NAME, BEFORE_NAME, NAME_BYTES, NOT_IN_NAME, trie

Name = tuple[int, int, str]  # start, end, the spelling

_CUT = r"""(?=["'{%\\])"""  # what ends the start of a name built at run time
# An escape that may stand for a character of a name.
_NAME_ESCAPE = r"\\(?:/|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|U[0-9a-fA-F]{8})"
# A regex field's empty value: "", '', [], null or ~ (JSON, YAML, or JSON kept in a string).
_EMPTY = r"""\\?["']?[ \t]*:[ \t]*(?:\\?"\\?"|''|\[[ \t]*\]|null|~)[ \t]*(?:[,}\]\r\n#]|\\[rn]|$)"""
# Past this many anchors, each pattern makes one pass over a file's bytes instead of a look for
# each anchor and at each place it is: the whole-history prime-rl mapping's 67 anchors, common
# words among them (`mean`, `max`), scanned 499 files of the check benchmark's tree in 1.70 s
# one by one, 0.78 s in one pass (the 3-step mapping has 2 anchors, and keeps its 0.04 s).
CROWDED = 16
_BRACE_LIST = re.compile(rb"\{[\w/.-]*,")  # the start of brace shorthand's first list
_AN_ESCAPE = re.compile(_NAME_ESCAPE.encode())
# A word after an escape that `BEFORE_NAME` lets a name follow.
_ESCAPED_WORD = re.compile(rb"\\(?:[nrtbfv/]|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2})([\w/-]+)")
_HEAD = re.compile(rb"[\w/-]+|[^\w/-]+")


def _table(cuts: bytes) -> bytes:
    """Bytes to `bytes.translate` a file with: a name's characters kept, each of `cuts` a line
    break, any other a space. Its `split()` is then the file's words."""
    return bytes(c if c in NAME_BYTES else 10 if c in cuts else 32 for c in range(256))


_TABLES = {False: _table(b"\"'{%\\"), True: _table(b"\\")}  # by data_only (see _CUT)
_CUTS = {False: re.compile(rb"[\"'{%\\]"), True: re.compile(rb"\\")}


@dataclass(frozen=True)
class Scan:
    """What the scan found in a file it sends on: every whole spelling, as the residual pass
    finds them in the file's text, when the bytes are that text (ASCII); None: it looks itself."""

    names: tuple[Name, ...] | None


class Prefilter:
    """The scan for one migration's spellings and anchors (see the module's docstring).

    Splitting a file into its words first, and looking further only where one may start a
    name, took the scan of the check benchmark's 5,000 files with the whole-history prime-rl
    mapping from 5.6 s to 1.3 s (a pass of the patterns over every file tried nearly every
    offset, common words being anchors), and no file of it now needs `partial` compiled (1.2 s
    for both): the whole `check` from 13.6 s to 6.3 s of CPU."""

    def __init__(
        self,
        spellings: Collection[str],
        anchors: Iterable[str],
        regex_keys: Iterable[str],
        flags: Iterable[str] = (),
        key_parts: Iterable[tuple[str, ...]] = (),
    ) -> None:
        # a one-word flag anywhere: one pass (they all start with `--`), not one each
        alternatives = [re.escape(_chars(flag.encode())) for flag in flags]
        self.flags = _compile(alternatives) if alternatives else None
        self.key_parts = tuple(tuple(part.encode() for part in parts) for parts in key_parts)
        # each key by its first part: only those whose first part is a word are looked at
        self._keys_by_first: dict[bytes, list[tuple[bytes, ...]]] = {}
        for parts in self.key_parts:
            self._keys_by_first.setdefault(parts[0], []).append(parts)
        # a part is a whole word (`env`, not in `environment` nor `env/x`): one of the file's
        # words, or, made of other characters too, found with the boundary before it looked at
        # after it (a search then skips ahead to the part itself)
        self._odd_words = {
            part: re.compile(
                re.escape(part) + rb"(?<![\w/-]%s)(?![\w/-])" % (b"." * len(part)), re.S
            )
            for parts in self.key_parts
            for part in parts
            if not NAME_BYTES.issuperset(part)
        }
        self.spellings = {spelling.encode(): spelling for spelling in spellings}
        found = [anchor.encode() for anchor in anchors]
        found += [s for s in self.spellings if not any(a in s for a in found)]  # its own
        self.anchors = tuple(found)
        self.crowded = len(self.anchors) > CROWDED
        self.keys = tuple(key.encode() for key in regex_keys)
        # how far before an anchor an escape may be in the same name (`\U0001f600`: 10 bytes)
        self._longest = max(map(len, self.spellings), default=0)
        self._reach = 10 * self._longest
        self._words = [_chars(s) for s in self.spellings]
        self._anchored = [_chars(a) for a in self.anchors]
        # every whole spelling: the residual pass's pattern, over bytes
        self.names = _compile(trie(self._words, after_first=NOT_IN_NAME, end=AFTER_NAME))
        # A whole spelling begins with its head, a word of the file (or, of other characters,
        # anywhere in it). A spelling or its start cut short (see `partial`) is a word before a
        # cut or after an escape when made of name characters only; else its head is a word.
        self._heads: set[bytes] = set()
        self._odd_heads: set[bytes] = set()
        self._cut_words: set[bytes] = set()
        self._continued: set[bytes] = set()
        self._cut_longer: set[bytes] = set()  # a start cut short past its head
        for spelling in self.spellings:
            head = _HEAD.match(spelling).group()  # type: ignore[union-attr]  # never empty
            if head[0] not in NAME_BYTES:
                self._odd_heads.add(head)
                continue
            self._heads.add(head)
            shortest = self._cut(_chars(spelling))
            self._cut_words.update(spelling[:end] for end in range(shortest, len(head) + 1))
            if len(head) < len(spelling):
                self._continued.add(head)
                longer = range(max(shortest, len(head) + 1), len(spelling))
                self._cut_longer.update(spelling[:end] for end in longer)
        # the only words a scan asks about: a file's others are not kept
        self._vocabulary = self._heads.union(*self.key_parts)
        any_anchor = "|".join(map(re.escape, self._anchored)) or "(?!)"
        self.escaped = _compile([rf"{_NAME_ESCAPE}[\w/.-]*?(?:{any_anchor})"])
        self.valued = _compile([f"{re.escape(_chars(k))}(?!{_EMPTY})" for k in self.keys])

    def _cut(self, word: str) -> int:
        """Where the start of a spelling may be cut short: once it holds an anchor (a prefix
        without one is like any other text)."""
        return min(word.index(a) + len(a) for a in self._anchored if a in word)

    def scan(
        self,
        data: bytes,
        spec_like: bool = False,
        config_like: bool = False,
        data_only: bool = False,
    ) -> Scan | None:
        """None when `data` cannot give any result; else what the scan found. A `spec_like`
        file (JSON, YAML) may hold W&B specs, so regex fields count; a `config_like` one may
        hold config keys of one word; a `data_only` one (JSON, YAML) builds no key."""
        text = data.translate(_TABLES[data_only])
        words = self._vocabulary.intersection(text.split())
        names = self._names(data, words)
        if (
            not names
            and not self._structured(data, words, spec_like, config_like)
            and not self._valued(data, spec_like)
            and not (self._may_hide(data, text, words, data_only) and self._hides(data, data_only))
        ):
            return None
        return Scan(tuple(names) if data.isascii() else None)  # offsets of bytes, not text

    def _structured(
        self, data: bytes, words: set[bytes], spec_like: bool, config_like: bool
    ) -> bool:
        """Whether a one-word form may be in the file's structure (see the module's docstring)."""
        if self.flags is not None and self.flags.search(data):
            return True
        # a JSON or YAML document's top-level `env` or `filters` is no config's (a CI workflow,
        # a W&B spec): only a key of two parts or more may be one there
        if not config_like:
            return False

        def word(part: bytes) -> bool:
            odd = self._odd_words.get(part)
            return part in words if odd is None else odd.search(data) is not None

        firsts = [f for f in self._keys_by_first if f in self._odd_words or f in words]
        keys = (parts for first in firsts for parts in self._keys_by_first[first])
        return any(all(map(word, parts)) for parts in keys if len(parts) > 1 or not spec_like)

    def _valued(self, data: bytes, spec_like: bool) -> bool:
        """Whether a regex field has a value (outside a spec, only in a file with an anchor)."""
        keyed = [at for key in self.keys for at in _occurrences(data, key)]
        return (
            bool(keyed)
            and (spec_like or self._holds_anchor(data))
            and any(self.valued.match(data, at) for at in keyed)
        )

    def _holds_anchor(self, data: bytes) -> bool:
        return any(anchor in data for anchor in self.anchors)

    def _may_hide(self, data: bytes, text: bytes, words: set[bytes], data_only: bool) -> bool:
        """Whether brace shorthand, an escape that may stand for a name's character, or a
        spelling or its start cut short (see `partial`) may be in `data` (`text`: its bytes
        translated, see `_table`); if not, `_hides` cannot find anything."""
        if _BRACE_LIST.search(data) or _AN_ESCAPE.search(data):
            return True
        if any(h in data for h in self._odd_heads):
            return True
        # the word right before each cut; or, past a head, what comes before a cut
        if any(s[s.rfind(b" ") + 1 :] in self._cut_words for s in text.split(b"\n")[:-1]):
            return True
        cuts = _CUTS[data_only]
        for head in self._continued & words:
            for at in _occurrences(data, head):
                if at and data[at - 1] in NAME_BYTES:
                    continue
                ends = cuts.finditer(data, at + len(head), at + self._longest)
                if any(data[at : end.start()] in self._cut_longer for end in ends):
                    return True
        escaped = _ESCAPED_WORD.findall(data) if b"\\" in data else ()
        return any(w in self._cut_words or w in self._continued for w in escaped)

    @functools.cache  # noqa: B019 (one Prefilter a run) compiled when first needed: each
    # takes 0.5 s with the whole-history prime-rl mapping, and a tree may need none
    def partial(self, data_only: bool) -> re.Pattern[bytes]:
        """After a character or an escape that is no part of it: a spelling, or its start
        (once it holds an anchor) cut short by a quote, a brace, a `%` or an escape; in JSON
        and YAML, where no key is built, by an escape only. A cut by any other character
        (`run, value` with `run_name` renamed), or by a quote in JSON (every spec's
        `"filters"`, with `filters/all/*` renamed) sent on 3/4 of the check benchmark's files
        with the whole-history prime-rl mapping, to no result, and took 10x the time."""
        cut_end = r"(?=\\)" if data_only else _CUT
        words = trie(
            self._words, after_first=BEFORE_NAME, end=AFTER_NAME, cut=self._cut, cut_end=cut_end
        )
        return _compile(words)

    @functools.cached_property
    def _offsets(self) -> dict[bytes, list[int]]:
        """Where each anchor sits in the spellings that hold it: a name starts that far before."""
        return {
            anchor: sorted({i for s in self.spellings for i in _occurrences(s, anchor)})
            for anchor in self.anchors
        }

    def _starts(self, held: dict[bytes, list[int]]) -> list[int]:
        """Where a name may start: as far before an anchor as it sits in a spelling."""
        starts: set[int] = set()
        for anchor, found in held.items():
            starts.update(at - offset for at in found for offset in self._offsets[anchor])
        return sorted(start for start in starts if start >= 0)

    def _names(self, data: bytes, words: set[bytes]) -> list[Name]:
        """Whole spellings, exactly as a search of the whole text finds them (leftmost, then
        longest, none overlapping): each starts where its head is."""
        heads = (self._heads & words) | {h for h in self._odd_heads if h in data}
        starts = sorted({at for head in heads for at in _occurrences(data, head)})
        found: list[Name] = []
        end = 0
        for start in starts:
            match = self.names.match(data, start) if start >= end else None
            if match is not None:
                end = match.end()
                found.append((start, end, self.spellings[match.group()]))
        return found

    def _hides(self, data: bytes, data_only: bool) -> bool:
        """Whether anything in a file without a whole spelling may hide one (see the module's
        docstring): each is looked for where it can be, next to an anchor or at an escape
        (with many anchors: anywhere, in a file holding one)."""
        held: dict[bytes, list[int]] | None = None
        if self.crowded and not self._holds_anchor(data):
            return False
        if not self.crowded:
            held = {a: at for a in self.anchors if (at := _occurrences(data, a))}
            if not held:
                return False
        if _BRACE_LIST.search(data):
            return True
        partial = self.partial(data_only)
        # nothing is built: only an escape may hide a name, and next to it (searching whole
        # JSON files for it was 0.31 s of the 0.78 s above)
        if data_only:
            near = _merged(
                (at - self._longest, at + self._reach) for at in _occurrences(data, b"\\")
            )
            return any(
                partial.search(data, lo, hi) or self.escaped.search(data, lo, hi) for lo, hi in near
            )
        if held is None:
            return bool(partial.search(data) or (b"\\" in data and self.escaped.search(data)))
        if any(partial.match(data, at) for at in self._starts(held)):
            return True
        near = [
            (max(0, at - self._reach), at + len(anchor))
            for anchor, found in held.items()
            for at in found
        ]
        return any(b"\\" in data[lo:hi] and self.escaped.search(data, lo, hi) for lo, hi in near)


def _occurrences(data: bytes, part: bytes) -> list[int]:
    found, at = [], data.find(part)
    while at >= 0:
        found.append(at)
        at = data.find(part, at + 1)
    return found


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans, those that overlap as one (from offset 0 at the least)."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((max(0, lo), hi))
    return merged


def _chars(text: bytes) -> str:
    """Bytes as a text of one character a byte (latin-1): a pattern made of it matches bytes,
    and a lookbehind after a name's first character sees the byte before it."""
    return text.decode("latin-1")


def _compile(alternatives: list[str]) -> re.Pattern[bytes]:
    """Alternatives that each start with a character of their own, with no group around them:
    a search then skips to the offsets where one may start."""
    return re.compile("|".join(alternatives or ["(?!)"]).encode("latin-1"))
