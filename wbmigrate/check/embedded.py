"""Strings that hold a JSON document (a saved view exported with its spec as a string).

A finding inside such a string must point at the name inside it, and a fix must edit the
string where it stands, in its own quoting: a JSON string keeps its escapes, a YAML string its
quotes or its literal block (`|`). So the string is read with the file offset of each of its
characters, and a new piece of it is written back in the same style. Every replacement is
read back before it is offered; a style this module does not edit safely (a folded block, a
quoted string over several lines) is still read, but not edited.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from wbmigrate.edit.located_yaml import value_start
from wbmigrate.edit.replacement import Replacement

Decode = Callable[[str], Any]  # the whole literal (quotes or block header included) -> value

_JSON_ESCAPES = dict(zip('"\\/bfnrt', '"\\/\b\f\n\r\t', strict=True))
_YAML_ESCAPES: dict[str, str] = yaml.scanner.Scanner.ESCAPE_REPLACEMENTS  # JSON's and more
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|U([0-9a-fA-F]{8})|(.))", re.S)
_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_HEADER = re.compile(r"([|>])([+-]?)[ \t]*(?:#[^\n]*)?\n")


@dataclass(frozen=True)
class StringText:
    """A string's value with the file offset of each character (and one past the last), and
    how to write a new piece of it in the string's own style."""

    value: str
    offsets: list[int]
    literal: tuple[int, int]  # the whole literal in the file: quotes or block header included
    encode: Callable[[str], str | None]
    decode: Decode
    block: bool = False  # a block scalar: its first line and its end are read with care

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.offsets[start], self.offsets[max(start, end)]

    def replacements(
        self, text: str, pieces: list[Replacement], whole: bool = True
    ) -> list[Replacement] | None:
        """The file replacements that turn each value[start:end] of `pieces` (sorted, apart)
        into its new text; None when this style cannot hold them. Text between the pieces
        keeps its bytes (its escapes, its line breaks). The whole string is read back to be
        sure, unless `whole` is off (one finding's fix: each piece is then written by an
        encoding whose inverse is exact, but for pieces at a block's edges)."""
        found, expected, at = [], [], 0
        for start, end, piece in ((p.start, p.end, p.text) for p in pieces):
            raw = self.encode(piece)
            if raw is None or not at <= start <= end <= len(self.value):
                return None
            found.append(Replacement(self.offsets[start], self.offsets[end], raw))
            expected += [self.value[at:start], piece]
            at = end
            whole = whole or (self.block and (start == 0 or end == len(self.value)))
        if not whole:
            return found
        expected.append(self.value[at:])
        lit_start, lit_end = self.literal
        literal, pos = [], lit_start
        for made in found:
            literal += [text[pos : made.start], made.text]
            pos = made.end
        literal.append(text[pos:lit_end])
        new = "".join(literal)
        if self.block and text[lit_end - 1 : lit_end] == "\n" and not new.endswith("\n"):
            return None  # what follows the block would join its last line
        try:
            return found if self.decode(new) == "".join(expected) else None
        except (ValueError, yaml.YAMLError, RecursionError):
            return None


def json_string(text: str, start: int, end: int, value: str) -> StringText | None:
    """The JSON string literal text[start:end] (quotes included), whose value is `value`."""
    read = json_chars(text, start, end)
    if read is None or read[0] != value:
        return None
    literal = text[start:end]
    ascii_only = literal.isascii() and ("\\u" in literal or text.isascii())

    def encode(piece: str) -> str:
        return json.dumps(piece, ensure_ascii=ascii_only)[1:-1]

    return StringText(value, read[1], (start, end), encode, json.loads)


def json_chars(text: str, start: int, end: int) -> tuple[str, list[int]] | None:
    """The value of the JSON string literal text[start:end] and the file offset of each of its
    characters (and of its closing quote)."""
    return _escaped(text, start + 1, end - 1, _JSON_ESCAPES)


def yaml_string(text: str, node: yaml.Node, value: str) -> StringText | None:
    """A YAML string scalar in a style this module can edit: quoted on one line, or a literal
    block without an indentation indicator. None for the others (folded, plain, multi-line)."""
    start, end = value_start(text, node), node.end_mark.index
    style = getattr(node, "style", None)
    if style in ('"', "'") and "\n" not in text[start:end] and "\r" not in text[start:end]:
        escapes = _YAML_ESCAPES if style == '"' else None
        read = _escaped(text, start + 1, end - 1, escapes)
        if read is None or read[0] != value:
            return None
        encode = _double_quoted if style == '"' else _single_quoted
        return StringText(value, read[1], (start, end), encode, _yaml_value)
    if style in ("|", ">"):
        return _block(text, start, end, value)
    return None


def _escaped(
    text: str, start: int, end: int, escapes: dict[str, str] | None
) -> tuple[str, list[int]] | None:
    """(value, offsets) of a quoted string's body: backslash escapes (JSON, YAML double
    quotes) or doubled quotes (YAML single quotes, `escapes` None)."""
    parts: list[str] = []
    offsets: list[int] = []
    pos = start
    pattern = _ESCAPE if escapes is not None else re.compile("''")
    for match in pattern.finditer(text, start, end):
        parts.append(text[pos : match.start()])
        offsets.extend(range(pos, match.start()))
        char = "'" if escapes is None else _unescape(match, escapes)
        if char is None:
            return None
        parts.append(char)
        offsets.append(match.start())
        pos = match.end()
    parts.append(text[pos:end])
    offsets.extend(range(pos, end))
    offsets.append(end)
    return _joined_surrogates("".join(parts), offsets)


def _unescape(match: re.Match[str], escapes: dict[str, str]) -> str | None:
    hex_digits = match.group(1) or match.group(2) or match.group(3)
    if hex_digits:
        return chr(int(hex_digits, 16))
    return escapes.get(match.group(4))


def _joined_surrogates(value: str, offsets: list[int]) -> tuple[str, list[int]]:
    """A JSON `\\ud83d\\ude00` pair is one character when read: join such pairs (the
    character is where its first half was)."""
    for pair in reversed(list(_SURROGATES.finditer(value))):
        del offsets[pair.start() + 1]
    joined = _SURROGATES.sub(
        lambda m: m[0].encode("utf-16", "surrogatepass").decode("utf-16"), value
    )
    return joined, offsets


def _double_quoted(piece: str) -> str:
    return json.dumps(piece, ensure_ascii=False)[1:-1]  # JSON's escapes are YAML's too


def _single_quoted(piece: str) -> str | None:
    return None if "\n" in piece or "\r" in piece else piece.replace("'", "''")


def _yaml_value(literal: str) -> Any:
    """A scalar's value, read as YAML reads it where it stands (the key keeps a block's
    indentation meaningful)."""
    return yaml.safe_load("k: " + literal)["k"]


def _block(text: str, start: int, end: int, value: str) -> StringText | None:
    """A block scalar without an indentation indicator: literal (`|`: each line's text past
    the block's indentation) or folded (`>`: the lines joined by spaces; only when no line is
    empty or more indented, whose folding is subtler)."""
    header = _HEADER.match(text, start, end)
    if header is None or "\r" in text[start:end]:
        return None  # an indentation indicator, or CRLF line ends: not edited
    folded = header.group(1) == ">"
    body = header.end()
    lines = text[body:end].split("\n")
    indent = next((len(ln) - len(ln.lstrip(" ")) for ln in lines if ln.strip()), 0)
    parts: list[str] = []
    offsets: list[int] = []
    pos = body
    for i, line in enumerate(lines):
        if line.strip():
            if line[:indent].strip() or (folded and line[indent] in " \t"):
                return None
            parts.append(line[indent:])
            offsets.extend(range(pos + indent, pos + len(line)))
        elif folded and i < len(lines) - 1:
            return None
        if i < len(lines) - 1:
            parts.append(" " if folded and lines[i + 1].strip() else "\n")
            offsets.append(pos + len(line))
        pos += len(line) + 1
    read = "".join(parts)
    if indent == 0 or not read.startswith(value):
        return None
    offsets = [*offsets[: len(value)], offsets[len(value)] if len(value) < len(read) else end]
    margin = "\n" + " " * indent

    def encode(piece: str) -> str | None:
        if "\r" in piece or (folded and "\n" in piece):
            return None
        return piece.replace("\n", margin)

    return StringText(value, offsets, (start, end), encode, _yaml_value, block=True)
