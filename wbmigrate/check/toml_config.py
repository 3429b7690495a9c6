"""TOML configs (prime-rl's rl.toml, orchestrator.toml): renamed config keys, fixed in place,
and command-line flags inside string values (a task runner's command in pyproject.toml).

`tomllib` says whether the file is valid; a small scanner then finds where each key is, in
every form TOML allows (`[orchestrator]` tables, dotted keys, inline tables, quoted keys,
arrays of tables), so a fix replaces only the key's characters and every comment and layout
stays. A fix is only as good as the scanner's positions, so they are cross-checked: the keys the
scanner places must be exactly the keys `tomllib` parsed (every dotted path, and how many
times each value-holding key occurs). A file where they disagree is not fixed at all; it gets
one `needs-review` finding instead, never a wrong fix.

The scanner and the key counts it is cross-checked with follow the checks (over 300 lines: the
scanner serves these checks alone, and apart each would need the other's types).
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from wbmigrate.check.documents import parse_error
from wbmigrate.check.flags import flag_findings, holds_flag, keeping_data
from wbmigrate.check.model import Checked, Finding, Lines, Place, Rule
from wbmigrate.check.places import COMMENT, Places, hash_comments, spans
from wbmigrate.check.targets import Targets
from wbmigrate.edit.replacement import Replacement

TOML_VALUE = Place("a TOML key or value")
TOML_STRING = Place("a TOML string")
TOML_TEXT = Place("text in a TOML string", prose=True)  # a sentence, not a key or a command
UNPLACED = (
    "this file holds a renamed key or flag, but wbmigrate's TOML scanner could not place its "
    "keys exactly (it disagrees with the TOML parser), so nothing here is fixed: review it"
)


def check_toml(label: str, text: str, targets: Targets) -> Checked:
    lines = Lines(text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"at line (\d+), column (\d+)", str(exc))
        offset = lines.starts[int(match[1]) - 1] + int(match[2]) - 1 if match else 0
        return parse_error(label, text, offset, f"not valid TOML: {str(exc).split(' (at')[0]}")
    scan = placed(text, data)
    if scan is None:
        checked = Checked(place=hash_comments(text, TOML_VALUE))
        if _needs_places(data, targets):
            checked.findings.append(lines.finding(label, 0, 0, Rule.NEEDS_REVIEW, UNPLACED))
        return checked
    checked = Checked(place=_places(text, scan))
    news = targets.new_key_paths  # `vllm.enable_lora`: seen
    checked.findings += _check_keys(label, lines, scan, targets, news)
    checked.seen += [(key.written, key.end) for key in scan.keys if key.path in news]
    # old flags inside string values, renamed in place; kept fixable only if the file still
    # parses to the same data but for the flags
    flags = flag_findings(label, lines, targets, scan.strings)
    checked.findings += keeping_data(text, flags, _load, "TOML", targets) if flags else flags
    return checked


def _check_keys(
    label: str, lines: Lines, scan: Scan, targets: Targets, news: frozenset[KeyPath]
) -> Iterator[Finding]:
    """A finding for each key at a path the mapping renames, over the key as written (all of
    a dotted key: one result), its fix on the last part. A key spelled like an old one at
    another path (`trainer.max_off_policy_steps`, a key in an array of tables, one quoted key
    holding dots) is not that key, and not changed: it is for a person to review, unless it is
    one of `news`, a new key (`vllm.enable_lora`, of `enable_lora -> vllm.enable_lora`). A key
    renamed into one the file sets already is not changed either (see `_clashing`)."""
    wanted = {tuple(old.split(".")): (old, new) for old, new in targets.config_keys.items()}
    removed = {tuple(old.split(".")): old for old in targets.removed_keys}
    pattern = targets.spelling_pattern
    clashing = _clashing(scan, wanted)
    for key in scan.keys:
        if key.path in removed:
            old = removed[key.path]
            yield targets.removed(label, lines, key.written, key.end, old, "config key")
        elif key.path in wanted:
            old, new = wanted[key.path]
            rule, clash = targets.config_rule(old), key.path in clashing
            yield _renamed(label, lines, key, old, new, rule, clash)
        elif key.path in news:
            continue
        elif pattern is not None and pattern.search(lines.text, key.written, key.end):
            message = _other_key(key.path, targets)
            yield lines.finding(label, key.written, key.end, Rule.NEEDS_REVIEW, message)


def _clashing(scan: Scan, wanted: dict[KeyPath, tuple[str, str]]) -> set[KeyPath]:
    """The renamed keys whose new key the file has already, or another renamed key becomes
    too (`max_off_policy_steps` beside `max_staleness`): renamed, the file would set one key
    twice, which TOML refuses."""
    taken = scanned_keys(scan)[0]
    into: dict[KeyPath, set[KeyPath]] = {}  # a new key: the old keys renamed into it
    for key in scan.keys:
        if key.path in wanted:
            into.setdefault(tuple(wanted[key.path][1].split(".")), set()).add(key.path)
    return {old for new, olds in into.items() if new in taken or len(olds) > 1 for old in olds}


def _renamed(
    label: str, lines: Lines, key: Key, old: str, new: str, rule: Rule, clash: bool
) -> Finding:
    prefix, _, leaf = new.rpartition(".")
    fix: tuple[Replacement, ...] = ()
    message = f"{old} -> {new} (config key)"
    if clash:
        message = f"{old} -> {new} (config key; the file sets {new} too: keep one, by hand)"
    elif prefix == old.rpartition(".")[0]:
        fix = (Replacement(key.start, key.end, f"{key.quote}{leaf}{key.quote}"),)
    return lines.finding(label, key.written, key.end, rule, message, fix)


def _other_key(path: KeyPath, targets: Targets) -> str:
    shown = ".".join(f'"{part}"' if "." in part else part for part in path)
    # the renamed keys it is spelled like, not all of a mapping's hundreds
    leaf = path[-1].rpartition(".")[2]
    alike = [k for k in targets.config_keys if k.rpartition(".")[2] == leaf] or targets.config_keys
    renamed = ", ".join(k if "." in k else f"{k} at a file's top" for k in alike)
    return (
        f"{shown} is spelled like a renamed config key but is another key (the mapping renames "
        f"{renamed}): not changed; review it"
    )


def _load(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _needs_places(data: Any, targets: Targets) -> bool:
    """Whether the parsed document holds a key the mapping renames, or an old flag in a string:
    only then does it matter that the scanner could not place the keys."""
    wanted = {tuple(old.split(".")) for old in [*targets.config_keys, *targets.removed_keys]}
    paths, _ = parsed_keys(data)
    return bool(paths & wanted) or holds_flag(data, targets)


def _places(text: str, scan: Scan) -> Places:
    """Comments (notes), string values (a sentence is a note, anything else is reviewed) and
    keys and other values (reviewed), from the scanner's own positions."""
    regions = [(start, end, COMMENT) for start, end in scan.comments]
    for start, end in scan.strings:
        regions.append((start, end, TOML_TEXT if " " in text[start:end] else TOML_STRING))
    return spans(regions, TOML_VALUE)


def placed(text: str, data: dict[str, Any]) -> Scan | None:
    """The scan of a valid TOML text, if it agrees with `data` (what tomllib parsed from it);
    None if the scanner failed or placed other keys than the parser found."""
    try:
        found = scan(text)
    except (ValueError, IndexError, AssertionError, RecursionError):
        return None
    return found if scanned_keys(found) == parsed_keys(data) else None


# --- where each key is: a scanner of every form TOML allows, and the key counts to cross-check it

KeyPath = tuple[str, ...]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_WS = re.compile(r"[ \t]*")
_TO_LINE_END = re.compile(r"[^\r\n]*")
# Values that are neither strings, arrays nor inline tables. A date may be followed by a space
# and a time (`1979-05-27 07:32:00Z`): one value, so the space must not end it.
_SCALAR = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})?)?"
    r"|\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?"  # a time
    r"|[^\s,\]}#]+"  # numbers, booleans, inf, nan
)
# A string value or quoted key, multi-line ones first. A multi-line string may end with one or
# two quotes just before its delimiter (four quotes at the end hold one quote, then close).
_STRING = re.compile(
    r"""
    \"\"\"(?:\\.|[^\\])*?\"\"\"\"{0,2}    # multi-line basic (an escaped quote does not end it)
    | '''.*?''''{0,2}                     # multi-line literal
    | "(?:\\.|[^"\\])*"                   # basic
    | '[^']*'                             # literal
    """,
    re.S | re.X,
)


@dataclass(frozen=True)
class Key:
    path: KeyPath  # the full dotted path from the document root
    written: int  # where the key as written starts (a dotted key's first part)
    start: int  # the last part's characters (quotes included)
    end: int
    quote: str  # '"', "'" or "" for a bare key
    leaf: bool = True  # its value is no table (nor an array holding one)


@dataclass
class Scan:
    """What the scanner found in a TOML text, each with its position."""

    keys: list[Key] = field(default_factory=list)
    tables: list[KeyPath] = field(default_factory=list)  # `[a.b]` and `[[a.b]]` headers
    strings: list[tuple[int, int]] = field(default_factory=list)  # string values, quotes too
    comments: list[tuple[int, int]] = field(default_factory=list)


def scanned_keys(found: Scan) -> tuple[set[KeyPath], Counter[KeyPath]]:
    """Every dotted path the scan implies (tables, headers and the parents of dotted keys), and
    how often each value-holding key occurs (arrays of tables repeat theirs)."""
    paths: set[KeyPath] = set()
    for path in [*(k.path for k in found.keys), *found.tables]:
        paths.update(path[:end] for end in range(1, len(path) + 1))
    return paths, Counter(k.path for k in found.keys if k.leaf)


def parsed_keys(data: dict[str, Any]) -> tuple[set[KeyPath], Counter[KeyPath]]:
    """The same of a parsed document: every dotted path, walking into tables and into arrays
    of tables (their elements share the array's path), and the count of every key whose value
    is no table."""
    paths: set[KeyPath] = set()
    leaves: Counter[KeyPath] = Counter()
    stack: list[tuple[KeyPath, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if path:
            paths.add(path)
        if isinstance(value, dict):
            stack.extend(((*path, str(k)), v) for k, v in value.items())
        elif isinstance(value, list) and (tables := list(_tables_in(value))):
            stack.extend((path, table) for table in tables)
        elif path:
            leaves[path] += 1
    return paths, leaves


def _tables_in(items: list[Any]) -> Iterator[dict[str, Any]]:
    for item in items:
        if isinstance(item, dict):
            yield item
        elif isinstance(item, list):
            yield from _tables_in(item)


def scan(text: str) -> Scan:
    """Scan a valid TOML document (raises on text the scanner cannot follow)."""
    scanner = _Scanner(text)
    table: KeyPath = ()
    while scanner.skip_blank():
        if scanner.peek("["):
            table = scanner.header()
            scanner.found.tables.append(table)
        else:
            scanner.pair(table)
    return scanner.found


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.found = Scan()

    def peek(self, token: str) -> bool:
        return self.text.startswith(token, self.pos)

    def skip_ws(self) -> None:
        self.pos = _end(_WS, self.text, self.pos)

    def skip_blank(self) -> bool:
        """Skip whitespace, newlines and comments (noting where they are); False at the end."""
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch in " \t\r\n":
                self.pos += 1
            elif ch == "#":
                start, self.pos = self.pos, _end(_TO_LINE_END, self.text, self.pos)
                self.found.comments.append((start, self.pos))
            else:
                return True
        return False

    def header(self) -> KeyPath:
        double = self.peek("[[")
        self.pos += 2 if double else 1
        path = tuple(part for part, _, _, _ in self.dotted_key())
        closing = "]]" if double else "]"
        if not self.peek(closing):
            raise ValueError(f"expected {closing} at {self.pos}")
        self.pos += len(closing)
        return path

    def dotted_key(self) -> list[tuple[str, int, int, str]]:
        parts = []
        while True:
            self.skip_ws()
            start = self.pos
            ch = self.text[self.pos]
            if ch in "\"'":
                self.pos = self._string_end(start)
                raw = self.text[start : self.pos]
                parts.append((raw[1:-1] if ch == "'" else _unescape(raw), start, self.pos, ch))
            else:
                match = _BARE.match(self.text, start)
                if match is None:
                    raise ValueError(f"expected a key at {self.pos}")
                self.pos = match.end()
                parts.append((match.group(), start, self.pos, ""))
            self.skip_ws()
            if not self.peek("."):
                return parts
            self.pos += 1

    def pair(self, table: KeyPath) -> None:
        """A `key = value` pair; its key is listed before any key of an inline table in it."""
        parts = self.dotted_key()
        path = (*table, *(p[0] for p in parts))
        _, start, end, quote = parts[-1]
        written = parts[0][1]
        if not self.peek("="):
            raise ValueError(f"expected = at {self.pos}")
        self.pos += 1
        index = len(self.found.keys)
        leaf = self.value(path)
        self.found.keys.insert(index, Key(path, written, start, end, quote, leaf))

    def value(self, path: KeyPath) -> bool:
        """Skip one value, noting its keys and strings; whether it holds no table."""
        self.skip_ws()
        ch = self.text[self.pos]
        if ch in "\"'":
            start, self.pos = self.pos, self._string_end(self.pos)
            self.found.strings.append((start, self.pos))
            return True
        if ch in "[{":
            return self._items(ch, path)
        match = _SCALAR.match(self.text, self.pos)
        if match is None:
            raise ValueError(f"expected a value at {self.pos}")
        self.pos = match.end()
        return True

    def _items(self, opening: str, path: KeyPath) -> bool:
        """An array's values or an inline table's pairs; whether it is an array holding no
        table."""
        closing, leaf = ("]", True) if opening == "[" else ("}", False)
        self.pos += 1
        while self.skip_blank() and not self.peek(closing):
            if opening == "[":
                leaf = self.value(path) and leaf
            else:
                self.pair(path)
            self.skip_blank()
            if self.peek(","):
                self.pos += 1
        self.pos += 1
        return leaf

    def _string_end(self, start: int) -> int:
        match = _STRING.match(self.text, start)
        if match is None:
            raise ValueError(f"unterminated string at {start}")
        return match.end()


def _end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    match = pattern.match(text, pos)
    assert match is not None  # both patterns match the empty string
    return match.end()


def _unescape(raw: str) -> str:
    return str(tomllib.loads(f"k = {raw}")["k"])
