"""A notebook cell's source in the file: one JSON string or a list of them, mapped escape by
escape (`\\n`, `\\"`, `\\u00e9`) to file offsets, and re-encoded string by string for a fix.
"""

from __future__ import annotations

import bisect
import difflib
import itertools
import json
from dataclasses import dataclass
from functools import cached_property

from wbmigrate.check.embedded import json_chars
from wbmigrate.check.hosts import minimal
from wbmigrate.edit.json import JsonText
from wbmigrate.edit.replacement import Replacement


@dataclass(frozen=True)
class JsonString:
    """One JSON string of the file: where it is, and where each of its characters is."""

    start: int  # the opening quote
    end: int  # after the closing quote
    at: int  # where its text starts in the cell's source
    value: str  # its text
    offsets: list[int]  # the file offset of each character of its text (and the closing quote's)


@dataclass(frozen=True)
class CellSource:
    """A cell's source: its text, the strings it is made of, and how to write a new text."""

    document: str
    text: str
    strings: tuple[JsonString, ...]
    listed: bool  # a list of lines (nbformat's way), or one string
    span: tuple[int, int]  # the source's value in the file

    @cached_property
    def ats(self) -> list[int]:
        """Where each string's text starts in the source (looked up for every offset)."""
        return [s.at for s in self.strings]

    def outer(self, offset: int, end: bool = False) -> int:
        """The file offset of an offset of the text; a span's end at a line's end stays in
        that line's string."""
        string = self.strings[self._string(offset, end)]
        return string.offsets[offset - string.at]

    def encode(self, new: str) -> tuple[Replacement, ...]:
        """Edits of the file that make `new` the source. Lines that stay keep their bytes; a
        changed line is edited inside its string; lines that come or go are strings written
        anew, split as nbformat splits them (`str.splitlines`)."""
        if not self.listed:
            return self._in_string(new)
        old_lines = [s.value for s in self.strings]
        new_lines = new.splitlines(True)
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        edits: list[Replacement] = []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "replace" and i2 - i1 == j2 - j1:
                for old, line in zip(range(i1, i2), new_lines[j1:j2], strict=True):
                    edits.append(self._line(old, line))
            elif tag != "equal":
                edits.append(self._relist(i1, i2, new_lines[j1:j2]))
        return tuple(edits)

    def _in_string(self, new: str) -> tuple[Replacement, ...]:
        """One string: an edit for each run of changed lines, only its changed characters."""
        old_lines, new_lines = self.text.splitlines(True), new.splitlines(True)
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        old_at, new_at = _starts(old_lines), _starts(new_lines)
        edits = []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                start = old_at[i1]
                change = minimal(self.text[start : old_at[i2]], new[new_at[j1] : new_at[j2]])
                edits.append(self._moved(start + change.start, start + change.end, change.text))
        return tuple(edits)

    def _line(self, index: int, line: str) -> Replacement:
        """String `index`, one line, becomes `line`: only its changed characters."""
        string = self.strings[index]
        change = minimal(string.value, line)
        escaped = json.dumps(change.text, ensure_ascii=False)[1:-1]
        return Replacement(string.offsets[change.start], string.offsets[change.end], escaped)

    def _moved(self, start: int, end: int, text: str) -> Replacement:
        """text[start:end] becomes `text`, inside one string."""
        escaped = json.dumps(text, ensure_ascii=False)[1:-1]
        return Replacement(self.outer(start), self.outer(end, end=True), escaped)

    def move(self, edit: Replacement) -> Replacement | None:
        """An edit of the text as an edit inside one of the file's strings; None when it
        changes which lines there are (the list of lines is then written anew)."""
        start, end = edit.start, edit.end
        first = self._string(start)
        last = first if end == start else self._string(end, end=True)
        if self.listed and not (first == last and self._one_line(first, edit)):
            return None
        return self._moved(start, end, edit.text)

    def _one_line(self, index: int, edit: Replacement) -> bool:
        """Whether string `index` is still one line, as `str.splitlines` sees it, after the
        edit: ending with its line break unless it is the last."""
        lower = self.strings[index].at
        last = index + 1 == len(self.strings)
        upper = len(self.text) if last else self.strings[index + 1].at
        line = self.text[lower : edit.start] + edit.text + self.text[edit.end : upper]
        return line.splitlines(True) == [line] and (last or line.splitlines()[0] != line)

    def _string(self, offset: int, end: bool = False) -> int:
        found = (bisect.bisect_left if end else bisect.bisect_right)(self.ats, offset) - 1
        return min(max(found, 0), len(self.strings) - 1)

    def _relist(self, first: int, end: int, lines: list[str]) -> Replacement:
        """Strings [first, end) give way to `lines`, written as nbformat writes strings,
        with the list's own separator between them."""
        strings, separator = self.strings, self._separator()
        written = separator.join(json.dumps(line, ensure_ascii=False) for line in lines)
        if first < end and lines:
            return Replacement(strings[first].start, strings[end - 1].end, written)
        if lines:  # only new lines: before string `first`, or after the last
            if first < len(strings):
                return Replacement(strings[first].start, strings[first].start, written + separator)
            return Replacement(strings[-1].end, strings[-1].end, separator + written)
        if first > 0:  # only lines that go, with the separator before them
            return Replacement(strings[first - 1].end, strings[end - 1].end, "")
        if end < len(strings):
            return Replacement(strings[0].start, strings[end].start, "")
        return Replacement(self.span[0], self.span[1], "[]")

    def _separator(self) -> str:
        """What stands between two strings of the list: as between the first two, or a new
        line at the first one's indentation."""
        if len(self.strings) > 1:
            return self.document[self.strings[0].end : self.strings[1].start]
        start = self.strings[0].start
        line_start = self.document.rfind("\n", 0, start) + 1
        indent = self.document[line_start:start]
        return ",\n" + indent if not indent.strip() else ", "


def _starts(lines: list[str]) -> list[int]:
    """Where each line starts, and the end."""
    return [0, *itertools.accumulate(map(len, lines))]


def read_source(
    document: JsonText, path: tuple[str | int, ...], value: object
) -> CellSource | None:
    """The source at `path`, if it is a string or a list of strings the text holds as parsed
    (a duplicate key can make them differ: the cell is then left to the residual pass)."""
    text = document.text
    listed = isinstance(value, list) and all(isinstance(line, str) for line in value)
    if not (listed or isinstance(value, str)):
        return None
    start, end = document.locate(path)
    spans = [(m.value_start, m.end) for m in document.members(start)] if listed else [(start, end)]
    values: list[str] = value if isinstance(value, list) else [str(value)]
    if not values or len(spans) != len(values):
        return None
    strings, at = [], 0
    for (token_start, token_end), line in zip(spans, values, strict=True):
        if text[token_start] != '"':
            return None
        read = json_chars(text, token_start, token_end)
        if read is None or read[0] != line:
            return None
        strings.append(JsonString(token_start, token_end, at, line, read[1]))
        at += len(line)
    source = "".join(values)
    return CellSource(text, source, tuple(strings), listed, (start, end))
