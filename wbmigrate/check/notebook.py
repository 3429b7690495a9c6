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

Reading a source out of its JSON strings and writing it back is `notebook_sources`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wbmigrate.check.documents import parse_error
from wbmigrate.check.flags import check_flags, flag_findings
from wbmigrate.check.markdown import check_markdown
from wbmigrate.check.model import Checked, Lines, Place, Rule
from wbmigrate.check.notebook_sources import CellSource, read_source
from wbmigrate.check.places import spans
from wbmigrate.check.python_code import check_python
from wbmigrate.check.residual import residual
from wbmigrate.check.snippets import Part, constant, lift
from wbmigrate.check.targets import Targets
from wbmigrate.edit.json import JsonText
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
