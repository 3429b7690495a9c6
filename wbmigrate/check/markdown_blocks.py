"""Markdown's code blocks, found CommonMark's way: fenced and indented ones, in list items and
block quotes, each with a map between its own text and where that text is in the file.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_QUOTE_MARK = re.compile(r" {0,3}>[ ]?")
_OPEN = re.compile(r"(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*?)[ \t\r]*\n?")
_LIST_ITEM = re.compile(r"(?P<indent>[ \t]*)(?:[-+*]|\d{1,9}[.)])(?P<gap>[ ]{1,4})(?=\S)")
_WORD = re.compile(r"[{.]*(?P<word>[\w+#-]*)")
_INDENTED_CODE = 4  # columns that make an indented code block (CommonMark)


@dataclass(frozen=True)
class Block:
    """A code block: its text without the container's markers and indentation, and for each of
    its lines where that line's text starts in the file (a sentinel line last: where the block
    ends, after the closing fence's own markers)."""

    language: str  # the info string's first word, lowercased ("" for none)
    starts: tuple[int, ...]  # offsets in `text` of each line (and of the end)
    origins: tuple[int, ...]  # the same offsets in the file
    text: str
    prefix: str  # what a new line of the block starts with in the file (markers, indentation)
    region: tuple[int, int]  # the block's lines in the file

    def outer(self, offset: int, end: bool = False) -> int:
        """An offset of `text` in the file (a span's end too). A line's start maps to after
        its markers, so that a replacement across lines takes each line's markers with it
        (and `fix_lines` puts them back)."""
        i = max(0, bisect.bisect_right(self.starts, offset) - 1)
        return self.origins[i] + offset - self.starts[i]

    def inner(self, offset: int) -> int | None:
        """An offset of the file in `text`; None in a line's markers."""
        i = bisect.bisect_right(self.origins, offset) - 1
        if i < 0:
            return None
        found = self.starts[i] + offset - self.origins[i]
        if i + 1 < len(self.starts) and found >= self.starts[i + 1]:
            return None
        return found

    def fix_lines(self, new: str) -> str:
        """New text for the block as the file writes it: every new line starts with the
        markers and indentation (a blank line in the middle with the markers alone)."""
        pieces = new.split("\n")
        last = len(pieces) - 1
        return pieces[0] + "".join(
            "\n" + (self.prefix if piece or i == last else self.prefix.rstrip()) + piece
            for i, piece in enumerate(pieces[1:], start=1)
        )


def code_blocks(text: str) -> Iterator[Block]:
    """Every fenced and indented code block, CommonMark's way in the cases READMEs have: fences
    of three or more backticks or tildes, closed by a longer-or-equal run of the same character
    (or the end of the document or block quote); indented blocks after a blank line, indented
    four columns past the list item they are in."""
    lines = _LINE.findall(text)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    scan = _Scan(lines, offsets)
    while scan.i < len(lines):
        block = scan.next()
        if block is not None:
            yield block


@dataclass
class _Scan:
    lines: list[str]
    offsets: list[int]
    i: int = 0
    blank_before: bool = True
    list_indent: int = 0

    def next(self) -> Block | None:
        """The block that starts at line `i`, if one does; moves `i` past what it read."""
        quote, rest = _split(self.lines[self.i])
        width = _width(rest)
        blank = not rest.strip()
        if not blank and self.blank_before and width >= self.list_indent + _INDENTED_CODE:
            return self._indented(quote)
        opening = _OPEN.fullmatch(rest)
        if opening and width < self.list_indent + _INDENTED_CODE and _may_open(opening):
            return self._fenced(quote, opening)
        item = _LIST_ITEM.match(rest)
        if item:
            marker = len(item.group()) - len(item["indent"])
            self.list_indent = _width(item["indent"]) + marker
        elif not blank and self.blank_before and width < self.list_indent:
            self.list_indent = 0  # a paragraph after a blank line, less indented: the list ended
        self.blank_before = blank
        self.i += 1
        return None

    def _fenced(self, quote: str, opening: re.Match[str]) -> Block:
        first = self.i
        fence = opening["fence"]
        closing = re.compile(rf"[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t\r]*\n?")
        depth = _depth(quote)
        end, closed = first + 1, False
        while end < len(self.lines):
            inside, rest = _split(self.lines[end], depth)
            if _depth(inside) < depth:
                break  # the block quote ended, and the block with it
            if closing.fullmatch(rest):
                closed = True
                break
            end += 1
        self.i, self.blank_before = end + (1 if closed else 0), True
        word = _WORD.match(opening["info"].strip())
        language = word["word"].lower() if word else ""
        indent = _width(opening["indent"])
        prefix = self.lines[first][: len(quote) + len(opening["indent"])]
        return self._block(language, first + 1, end, (depth, indent), prefix)

    def _indented(self, quote: str) -> Block:
        first, end, last = self.i, self.i, self.i
        strip, depth = self.list_indent + _INDENTED_CODE, _depth(quote)
        while end < len(self.lines):
            inside, rest = _split(self.lines[end], depth)
            if _depth(inside) < depth:
                break
            if rest.strip():
                if _width(rest) < strip:
                    break
                last = end
            end += 1
        self.i = last + 1
        self.blank_before = False
        prefix = self.lines[first][: len(quote) + _chars(_split(self.lines[first])[1], strip)]
        return self._block("", first, last + 1, (depth, strip), prefix)

    def _block(
        self, language: str, first: int, end: int, strip: tuple[int, int], prefix: str
    ) -> Block:
        """The block of lines [first, end), each without `strip`: its block quote's markers
        (so many of them) and indentation (so many columns)."""
        depth, indent = strip
        starts, origins, kept = [], [], []
        size = 0
        for number in range(first, end + 1):
            if number < len(self.lines):
                quote, rest = _split(self.lines[number], depth)
                cut = len(quote) + _chars(rest, indent)
                origin = self.offsets[number] + cut
            else:
                origin, cut = self.offsets[-1], 0
            starts.append(size)
            origins.append(origin)
            if number < end:
                kept.append(self.lines[number][cut:])
                size += len(kept[-1])
        region = (self.offsets[first], self.offsets[end])
        return Block(language, tuple(starts), tuple(origins), "".join(kept), prefix, region)


def _split(line: str, most: int = -1) -> tuple[str, str]:
    """A line's block-quote markers (`most` of them at most, when given: in a code block a
    `>>>` is code), and the rest."""
    end, count = 0, 0
    while count != most:
        mark = _QUOTE_MARK.match(line, end)
        if mark is None:
            break
        end, count = mark.end(), count + 1
    return line[:end], line[end:]


def _depth(quote: str) -> int:
    return quote.count(">")


def _width(text: str) -> int:
    """Columns of leading whitespace (a tab to the next multiple of four)."""
    column = 0
    for ch in text:
        if ch == " ":
            column += 1
        elif ch == "\t":
            column += 4 - column % 4
        else:
            break
    return column


def _chars(text: str, columns: int) -> int:
    """How many leading whitespace characters make up at most `columns` columns."""
    count = 0
    while count < len(text) and text[count] in " \t" and _width(text[: count + 1]) <= columns:
        count += 1
    return count


def _may_open(opening: re.Match[str]) -> bool:
    """A backtick fence's info string has no backtick (```a``` is inline code)."""
    return opening["fence"][0] == "~" or "`" not in opening["info"]
