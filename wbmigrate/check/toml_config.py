"""TOML configs (prime-rl's rl.toml, orchestrator.toml): renamed config keys, fixed in place.

`tomllib` says whether the file is valid; a small scanner then finds where each key is, in
every form TOML allows (`[orchestrator]` tables, dotted keys, inline tables, quoted keys), so
a fix replaces only the key's characters and every comment and layout stays.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass

from wbmigrate.check.model import Checked, Lines, Replacement, Rule
from wbmigrate.check.targets import Targets

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_WS = re.compile(r"[ \t]*")
_TO_LINE_END = re.compile(r"[^\n]*")


@dataclass(frozen=True)
class Key:
    path: tuple[str, ...]  # the full dotted path from the document root
    start: int  # the last part's characters (quotes included)
    end: int
    quote: str  # '"', "'" or "" for a bare key


def check_toml(label: str, text: str, targets: Targets) -> Checked:
    lines = Lines(text)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"at line (\d+), column (\d+)", str(exc))
        offset = lines.starts[int(match[1]) - 1] + int(match[2]) - 1 if match else 0
        return Checked(
            [
                lines.finding(
                    label,
                    offset,
                    offset,
                    Rule.PARSE_ERROR,
                    f"not valid TOML: {str(exc).split(' (at')[0]}",
                )
            ]
        )
    checked = Checked()
    for key in keys(text):
        dotted = ".".join(key.path)
        new = targets.config_keys.get(dotted)
        if new is None:
            continue
        prefix, _, leaf = new.rpartition(".")
        fix: tuple[Replacement, ...] = ()
        if prefix == dotted.rpartition(".")[0]:
            fix = (Replacement(key.start, key.end, f"{key.quote}{leaf}{key.quote}"),)
        checked.findings.append(
            lines.finding(
                label,
                key.start,
                key.end,
                Rule.RENAMED_CONFIG_KEY,
                f"{dotted} -> {new} (config key)",
                fix,
            )
        )
    return checked


def keys(text: str) -> Iterator[Key]:
    """Every key of a valid TOML document, with its full path and position."""
    scanner = _Scanner(text)
    table: tuple[str, ...] = ()
    while scanner.skip_blank():
        if scanner.peek("["):
            table = scanner.header()
        else:
            yield from scanner.pair(table)


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self, token: str) -> bool:
        return self.text.startswith(token, self.pos)

    def skip_blank(self) -> bool:
        """Skip whitespace, newlines and comments; False at the end."""
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch in " \t\r\n":
                self.pos += 1
            elif ch == "#":
                self.pos = _TO_LINE_END.match(self.text, self.pos).end()  # type: ignore[union-attr]
            else:
                return True
        return False

    def header(self) -> tuple[str, ...]:
        double = self.peek("[[")
        self.pos += 2 if double else 1
        path = tuple(part for part, _, _, _ in self.dotted_key())
        self.pos = self.text.index("]]" if double else "]", self.pos) + (2 if double else 1)
        return path

    def dotted_key(self) -> list[tuple[str, int, int, str]]:
        parts = []
        while True:
            self.pos = _WS.match(self.text, self.pos).end()  # type: ignore[union-attr]
            start = self.pos
            ch = self.text[self.pos]
            if ch in "\"'":
                end = self._string_end(self.pos)
                raw = self.text[start:end]
                name = raw[1:-1] if ch == "'" else _unescape(raw)
                parts.append((name, start, end, ch))
                self.pos = end
            else:
                match = _BARE.match(self.text, self.pos)
                assert match is not None
                parts.append((match.group(), start, match.end(), ""))
                self.pos = match.end()
            self.pos = _WS.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if not self.peek("."):
                return parts
            self.pos += 1

    def pair(self, table: tuple[str, ...]) -> Iterator[Key]:
        parts = self.dotted_key()
        path = table + tuple(p[0] for p in parts)
        _, start, end, quote = parts[-1]
        yield Key(path, start, end, quote)
        self.pos = self.text.index("=", self.pos) + 1
        yield from self.value(path)

    def value(self, path: tuple[str, ...]) -> Iterator[Key]:
        self.pos = _WS.match(self.text, self.pos).end()  # type: ignore[union-attr]
        ch = self.text[self.pos]
        if ch in "\"'":
            self.pos = self._string_end(self.pos)
        elif ch == "[":
            self.pos += 1
            while self.skip_blank() and not self.peek("]"):
                yield from self.value(path)
                self.skip_blank()
                if self.peek(","):
                    self.pos += 1
            self.pos += 1
        elif ch == "{":
            self.pos += 1
            while self.skip_blank() and not self.peek("}"):
                yield from self.pair(path)
                self.skip_blank()
                if self.peek(","):
                    self.pos += 1
            self.pos += 1
        else:  # number, boolean, date: up to a separator
            match = re.compile(r"[^,\]}\s#]+").match(self.text, self.pos)
            self.pos = match.end() if match else self.pos + 1

    def _string_end(self, start: int) -> int:
        text = self.text
        for quotes in ('"""', "'''"):
            if text.startswith(quotes, start):
                end = text.index(quotes, start + 3) + 3
                while text.startswith(quotes[0], end):  # """a"""" ends with a quote char
                    end += 1
                return end
        if text[start] == "'":
            return text.index("'", start + 1) + 1
        pos = start + 1
        while text[pos] != '"':
            pos += 2 if text[pos] == "\\" else 1
        return pos + 1


def _unescape(raw: str) -> str:
    value: str = tomllib.loads(f"k = {raw}")["k"]
    return value
