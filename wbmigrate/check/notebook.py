"""Jupyter notebooks (.ipynb): each cell's source checked as what it is, in the notebook's JSON.

Code cells are Python (IPython's `%magic`, `!command` and `obj?` lines are shell or nothing to
Python: they are blanked, keeping every offset, and their flags are checked as a shell
script's); Markdown cells are Markdown, code blocks included; raw cells are text. Outputs are
the record of a past run: never read, never changed (the next run rewrites them).

A cell's source is a JSON string, or a list of them (one a line, as nbformat writes it), so a
finding's offset in the source is not its offset in the file: escapes (`\\n`, `\\"`, `\\u00e9`)
take more characters in the file than in the source. Each string's escapes are mapped, so
findings land on the right line and column, and a fix re-encodes only the strings it changes
(as nbformat does: `ensure_ascii=False`, one string a line), so outputs, metadata and every
other byte stay.

Reading a source out of its JSON strings and writing it back follows the checks (over 300 lines:
the two halves are one cell's reading and writing, and serve nothing else).
"""

from __future__ import annotations

import bisect
import difflib
import itertools
import json
import re
from dataclasses import dataclass
from functools import cached_property

from wbmigrate.check.documents import parse_error
from wbmigrate.check.embedded import json_chars
from wbmigrate.check.flags import check_flags, flag_findings
from wbmigrate.check.hosts import minimal
from wbmigrate.check.markdown import Part, check_markdown, constant, lift
from wbmigrate.check.model import Checked, Lines, Place, Rule
from wbmigrate.check.places import spans
from wbmigrate.check.python_code import check_python
from wbmigrate.check.residual import residual
from wbmigrate.check.targets import Targets
from wbmigrate.edit.json import JsonText
from wbmigrate.edit.replacement import Replacement
from wbmigrate.files import Unreadable, read_json

METADATA = Place("the notebook's metadata")
NOT_A_NOTEBOOK = Place("a notebook wbmigrate cannot read (it reads nbformat 4)")
SHELL_COMMAND = Place("a shell command in a notebook cell")
CELLS = {
    "code": Place("a code cell"),
    "markdown": Place("a Markdown cell", prose=True),
    "raw": Place("a raw cell"),
}
SHELL_CELLS = {"bash", "sh", "zsh", "script", "system"}  # %%bash: the cell is a shell script
PYTHON_CELLS = {"time", "timeit", "capture", "prun", "debug"}  # %%time: the cell is still Python

_LINE = re.compile(r"[^\n]*\n|[^\n]+")
# `%matplotlib inline`, `!uv run rl ...`, `files = !ls`, `wandb.log?`
_MAGIC = re.compile(
    r"[ \t]*(?:[\w.]+[ \t]*=[ \t]*)?(?P<magic>[!%].*)"
    r"|[ \t]*(?P<help>\?{1,2}[\w.]+|[\w.]+\?{1,2})[ \t]*"
)
OUTPUT = Place("a cell's output (never changed)", prose=True)
_CELL_MAGIC = re.compile(r"[ \t]*%%(?P<name>\w*)")


def check_notebook(label: str, text: str, targets: Targets) -> Checked:
    try:
        data = read_json(text)
    except Unreadable as exc:
        return parse_error(label, text, exc.offset, exc.problem)
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return Checked(place=constant(NOT_A_NOTEBOOK))
    document = JsonText(text)
    parts: list[Part] = []
    outputs: list[tuple[int, int, Place]] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        if "outputs" in cell:
            outputs.append((*document.locate(("cells", index, "outputs")), OUTPUT))
        source = read_source(document, ("cells", index, "source"), cell.get("source"))
        if source is not None and targets.may_contain(source.text):
            parts.append(_cell(label, str(cell.get("cell_type")), source, targets))
    # outputs are never changed; an old name printed there is worth a note, no more
    return lift(label, text, parts, spans(outputs, METADATA))


# --- checking a cell ---------------------------------------------------------------------------


def _cell(label: str, kind: str, source: CellSource, targets: Targets) -> Part:
    """A cell as a part of the notebook: its findings, as what it is (a raw cell is text), and
    a result on its line for every old name no check accounted for (found here in the
    source's text, not in its escaped form)."""
    place = constant(CELLS.get(kind, Place(f"a {kind} cell")))
    check = {"markdown": check_markdown, "code": check_code}.get(kind)
    checked = check(label, source.text, targets) if check else Checked(place=place)
    accounted = [f.span for f in checked.findings] + checked.seen
    checked.findings += residual(label, source.text, targets, accounted, checked.place)
    start, end = source.span
    return Part(start, end, source.text, checked, source.outer, source.encode, source.move, place)


def check_code(label: str, text: str, targets: Targets) -> Checked:
    """A code cell: Python with IPython's syntax taken out, and flags in its shell commands."""
    cell_magic = _CELL_MAGIC.match(text)
    name = cell_magic["name"] if cell_magic else None
    if name in SHELL_CELLS:
        return check_flags(label, text, targets)
    if name is not None and name not in PYTHON_CELLS:
        return Checked(place=constant(Place(f"a %%{name} cell")))
    shell = magics(text)
    # a cell's last line has no newline; the Python checker is given one (offsets stay)
    python = check_python(label, blanked(text, shell) + "\n", targets)
    if any(f.rule is Rule.PARSE_ERROR for f in python.findings):
        python = Checked(place=constant(Place("a code cell that is not valid Python")))
    inside = [(start, end) for start, end, _ in shell]
    flags = flag_findings(label, Lines(text), targets, inside)
    python_place = python.place or constant(CELLS["code"])

    def place(offset: int) -> Place:
        if any(s <= offset < e for s, e in inside):
            return SHELL_COMMAND
        return python_place(offset)

    return Checked(python.findings + flags, seen=python.seen, place=place)


def magics(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, continued) of IPython's syntax in a cell: `%%time`, `%magic`, `!command`
    and `x = !command` lines (and the lines a trailing backslash continues them on), `name?`
    help lines; only where a statement starts, as IPython reads them (`% value` continuing an
    expression in brackets is Python's modulo)."""
    found: list[tuple[int, int, bool]] = []
    python = _Statements()
    offset, continued = 0, False
    for line in _LINE.findall(text):
        body = line.rstrip("\r\n")
        match = _MAGIC.fullmatch(body) if python.at_start and not continued else None
        if continued:
            found.append((offset, offset + len(body), True))
        elif match is not None:
            found.append((offset + match.start(match.lastgroup or 0), offset + len(body), False))
        else:
            python.read(body)
        continued = (continued or match is not None) and body.endswith("\\")
        offset += len(line)
    return found


@dataclass
class _Statements:
    """Just enough of Python's tokenizer to tell whether a line starts a statement: open
    brackets, an open triple-quoted string, a backslash at the end of the line before."""

    depth: int = 0
    quote: str = ""  # the open string's quotes
    continued: bool = False

    @property
    def at_start(self) -> bool:
        return not (self.depth or self.quote or self.continued)

    def read(self, line: str) -> None:
        i, comment = 0, False
        while i < len(line):
            if self.quote:
                if line[i] == "\\":
                    i += 2
                elif line.startswith(self.quote, i):
                    i, self.quote = i + len(self.quote), ""
                else:
                    i += 1
                continue
            char = line[i]
            if char == "#":
                comment = True
                break
            if char in "\"'":
                self.quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else char
                i += len(self.quote)
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            i += 1
        self.continued = line.endswith("\\") and not (self.quote or comment)
        if len(self.quote) == 1 and not line.endswith("\\"):
            self.quote = ""  # a one-line string left open: Python's error, not ours


def blanked(text: str, regions: list[tuple[int, int, bool]]) -> str:
    """`text` with each region made Python of the same length: `0` and spaces (a statement
    where one was), or spaces alone on a line a magic continues on."""
    out, pos = [], 0
    for start, end, continued in regions:
        filler = " " * (end - start) if continued else "0".ljust(end - start)
        out += [text[pos:start], filler]
        pos = end
    return "".join(out) + text[pos:]


# --- a cell's source in the file: JSON strings mapped escape by escape, and written back -----


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
        changed line is edited inside its string (in one string: each run of changed lines, only
        its changed characters); lines that come or go are strings written anew, split as
        nbformat splits them (`str.splitlines`)."""
        old_lines = [s.value for s in self.strings] if self.listed else self.text.splitlines(True)
        new_lines = new.splitlines(True)
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        old_at, new_at = _starts(old_lines), _starts(new_lines)
        edits: list[Replacement] = []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            if not self.listed:
                start = old_at[i1]
                change = minimal(self.text[start : old_at[i2]], new[new_at[j1] : new_at[j2]])
                edits.append(self._moved(start + change.start, start + change.end, change.text))
            elif tag == "replace" and i2 - i1 == j2 - j1:
                edits += map(self._line, range(i1, i2), new_lines[j1:j2])
            else:
                edits.append(self._relist(i1, i2, new_lines[j1:j2]))
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
