"""Markdown: prose, and code blocks read as the language they are written in.

Prose is for people: an old name in it is a note (the residual pass gives it). A fenced block
(```toml, ~~~python, or none: shell) or an indented one is checked by the checker of its
language on its own text, so a TOML snippet in a README is fixed as precisely as a TOML file;
its findings are then moved to where the block is in the file. A block that does not parse as
its language (a fragment, a doctest) is no error of the Markdown file: its old names go to the
residual pass, for a person to review.

A block inside a list item or a block quote is read without its indentation and `>` markers,
so Python and YAML in it parse; a fix puts them back on every line it writes.

The blocks are found by markdown-it-py (CommonMark's list and quote cases are its job), and
cut from the file's own text here; moving a block's findings and fixes into the file is
`snippets`, shared with notebooks, whose cells are texts inside a JSON document.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

from wbmigrate.check.documents import check_json, check_yaml
from wbmigrate.check.flags import check_flags
from wbmigrate.check.hosts import minimal
from wbmigrate.check.model import Checked, Finding, Place, Rule, apply_fixes
from wbmigrate.check.places import PROSE
from wbmigrate.check.python_code import check_python
from wbmigrate.check.snippets import Part, constant, lift
from wbmigrate.check.targets import Targets
from wbmigrate.check.toml_config import check_toml
from wbmigrate.edit.replacement import Replacement

Checker = Callable[[str, str, Targets], Checked]

# info-string word -> (the language's name, its checkers in the order their fixes are made)
LANGUAGES: dict[str, tuple[str, tuple[Checker, ...]]] = {
    "toml": ("TOML", (check_toml,)),
    **dict.fromkeys(("python", "py"), ("Python", (check_python,))),
    # an unlabelled block ("") is most often commands
    **dict.fromkeys(("sh", "bash", "shell", "console", "zsh", ""), ("shell", (check_flags,))),
    # CI steps run commands: flags, as in .yml files
    **dict.fromkeys(("yaml", "yml"), ("YAML", (check_yaml, check_flags))),
    "json": ("JSON", (check_json,)),
}


def check_markdown(label: str, text: str, targets: Targets) -> Checked:
    """Findings of the code blocks, at their place in the file; prose is left to the
    residual pass, as notes."""
    parts = [
        _block_part(label, block, targets)
        for block in code_blocks(text)
        if targets.may_contain(block.text)
    ]
    return lift(label, text, parts, constant(PROSE))


def _block_part(label: str, block: Block, targets: Targets) -> Part:
    known = LANGUAGES.get(block.language)
    shown = f"a `{block.language}` code block" if block.language else "a code block"
    checked = Checked(place=constant(Place(shown)))
    if known is not None:
        name, checkers = known
        checked = _check_block(label, block.text, targets, checkers)
        if any(f.rule is Rule.PARSE_ERROR for f in checked.findings):
            checked = Checked(place=constant(Place(f"{shown} that is not valid {name}")))
    inner_place = checked.place or constant(Place(shown))

    def place(offset: int) -> Place:
        inner = block.inner(offset)
        return PROSE if inner is None else inner_place(inner)

    def move(edit: Replacement) -> Replacement:
        start, end = block.outer(edit.start), block.outer(edit.end)
        return Replacement(start, end, block.fix_lines(edit.text))

    def encode(new: str) -> tuple[Replacement, ...]:
        return (move(minimal(block.text, new)),)

    start, end = block.region
    return Part(start, end, block.text, checked, block.outer, encode, move, place)


def _check_block(label: str, text: str, targets: Targets, checkers: tuple[Checker, ...]) -> Checked:
    """The block's findings from each of its language's checkers, and a fix that makes the
    chosen ones with each checker in turn, as `check` fixes a file."""
    results = [checker(label, text, targets) for checker in checkers]
    findings = [f for r in results for f in r.findings]
    seen = [s for r in results for s in r.seen]
    merged = Checked(findings, seen=seen, place=results[0].place)

    def fix(chosen: list[Finding]) -> str | None:
        current = text
        for checker, checked in zip(checkers, results, strict=True):
            picked = [f for f in checked.findings if f in chosen]
            if not picked:
                continue
            if current != text:  # an earlier checker changed the text: find them again there
                checked = checker(label, current, targets)
                picked = same_findings(picked, checked.findings)
            new = checked.fix_text(picked) if checked.fix_text else apply_fixes(current, picked)
            current = new if new is not None else current
        return current

    merged.fix_text = fix
    return merged


def same_findings(wanted: list[Finding], found: list[Finding]) -> list[Finding]:
    """The findings of `found` that are `wanted` ones, by rule, message and order, in a text
    another checker's fixes have moved."""
    left = Counter((finding.rule, finding.message) for finding in wanted)
    picked = []
    for finding in found:
        if left[finding.rule, finding.message] > 0:
            left[finding.rule, finding.message] -= 1
            picked.append(finding)
    return picked


# --- the code blocks -------------------------------------------------------------------------

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")  # CommonMark's lines
_QUOTE_MARK = re.compile(r" {0,3}>[ ]?")
_WORD = re.compile(r"[{.]*(?P<word>[\w+#-]*)")


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
    """Every fenced and indented code block, as CommonMark finds them (markdown-it-py's token
    map: which lines, in how many block quotes); each line is then cut here from the file's
    own text, so the block keeps its bytes (markdown-it normalises line breaks)."""
    lines = _LINE.findall(text)
    offsets = [0, *itertools.accumulate(map(len, lines))]
    depth = 0
    for token in _parser().parse(text):
        depth += {"blockquote_open": 1, "blockquote_close": -1}.get(token.type, 0)
        if token.type in ("fence", "code_block") and token.map:
            yield _block(lines, offsets, token, depth)


@functools.cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").disable(["inline", "text_join"])  # blocks only


def _block(lines: list[str], offsets: list[int], token: Token, depth: int) -> Block:
    """The block of `token`: its lines without their block quotes' markers (so many of them)
    and the indentation CommonMark takes off (so many columns: the fence's, or the first
    line's beyond its content)."""
    opening = token.map[0] if token.map else 0
    first = opening + (token.type == "fence")
    end = first + len(token.content.splitlines())
    quote, rest = _split(lines[opening], depth)
    if token.type == "fence":
        column = rest.index(token.markup)
        indent = _width(rest[:column]) if rest[:column].isspace() else column
        language = _WORD.match(token.info.strip())
    else:
        indent = _width(rest) - _width(token.content.splitlines()[0])
        language = None
    starts, origins, kept, size = [], [], [], 0
    for number in range(first, end + 1):
        if number < len(lines):
            inside, after = _split(lines[number], depth)
            cut = len(inside) + _chars(after, indent)
            origin = offsets[number] + cut
        else:
            origin, cut = offsets[-1], 0
        starts.append(size)
        origins.append(origin)
        if number < end:
            kept.append(lines[number][cut:])
            size += len(kept[-1])
    lead = rest[: _chars(rest, indent)]
    prefix = quote + (lead if _width(lead) == indent else " " * indent)
    region = (offsets[first], offsets[end])
    word = language["word"].lower() if language else ""
    return Block(word, tuple(starts), tuple(origins), "".join(kept), prefix, region)


def _split(line: str, depth: int) -> tuple[str, str]:
    """A line's block-quote markers (`depth` of them at most: in a code block a `>>>` is
    code), and the rest."""
    end = 0
    for _ in range(depth):
        mark = _QUOTE_MARK.match(line, end)
        if mark is None:
            break
        end = mark.end()
    return line[:end], line[end:]


def _width(text: str) -> int:
    """Columns of leading whitespace (a tab to the next multiple of four)."""
    return len(text[: len(text) - len(text.lstrip(" \t"))].expandtabs(4))


def _chars(text: str, columns: int) -> int:
    """How many leading whitespace characters make up at most `columns` columns."""
    count = 0
    while count < len(text) and text[count] in " \t" and _width(text[: count + 1]) <= columns:
        count += 1
    return count
