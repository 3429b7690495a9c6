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
cut from the file's own text here. A block is a `Part`, checked on its own text; `lift`
moves its findings, places and fixes into the file, for notebooks' cells too (texts inside a
JSON document).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

from wbmigrate.check.hosts import minimal
from wbmigrate.check.model import Checked, Finding, Lines, Place, Rule, apply_fixes
from wbmigrate.check.places import PROSE, Places
from wbmigrate.check.run import KINDS, check_text
from wbmigrate.check.targets import Targets
from wbmigrate.edit.replacement import Replacement, apply

# info-string word -> (the language's name, the file kind whose checkers read it: a YAML block's
# flags too, as CI steps run commands); an unlabelled block ("") is most often commands
LANGUAGES: dict[str, tuple[str, str]] = {
    "toml": ("TOML", "*.toml"),
    **dict.fromkeys(("python", "py"), ("Python", "*.py")),
    **dict.fromkeys(("sh", "bash", "shell", "console", "zsh", ""), ("shell", "*.sh")),
    **dict.fromkeys(("yaml", "yml"), ("YAML", "*.yaml")),
    "json": ("JSON", "*.json"),
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
        name, kind = known
        checked = check_text(KINDS[kind], label, block.text, targets)
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
    end = first + len(_lines(token.content))
    quote, rest = _split(lines[opening], depth)
    if token.type == "fence":
        column = rest.index(token.markup)
        indent = _width(rest[:column]) if rest[:column].isspace() else column
        language = _WORD.match(token.info.strip())
    else:
        indent = _width(rest) - _width(_lines(token.content)[0])
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


def _lines(content: str) -> list[str]:
    """A token's lines, as markdown-it made them: ended by a line feed alone (it turned every
    `\r\n` and `\r` into one). `str.splitlines` breaks at a form feed or `\u2028` too, which
    put a block's end past the file's last line."""
    return content.removesuffix("\n").split("\n") if content else []


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


# --- a text checked inside another (a code block, a notebook cell): findings moved out -------


@dataclass(frozen=True)
class Part:
    """A text inside another (a code block of a Markdown file, a notebook cell's source),
    checked on its own: findings and fixes are made on `text` and moved out through `outer`."""

    start: int  # where the part is in the outer text (for places)
    end: int
    text: str
    checked: Checked  # the part's own findings, spans, places and fix, in `text`'s offsets
    outer: Callable[[int, bool], int]  # an offset in `text` (ending a span?) -> the outer text's
    encode: Callable[[str], tuple[Replacement, ...]]  # a new `text` -> edits of the outer text
    move: Callable[[Replacement], Replacement | None]  # one edit of `text` in the outer text
    place: Callable[[int], Place]  # an outer offset inside the part -> the kind of place


def lift(label: str, text: str, parts: list[Part], default: Places) -> Checked:
    """The outer text's Checked: every part's findings and seen spans moved out, places looked
    up in the part an offset is in (`default` elsewhere), and fixes made part by part."""
    lines = Lines(text)
    checked = Checked()
    origins: dict[tuple[object, ...], list[tuple[Part, Finding]]] = {}
    for part in parts:
        for finding in part.checked.findings:
            moved = _moved(label, lines, part, finding)
            checked.findings.append(moved)
            origins.setdefault(moved.identity, []).append((part, finding))
        checked.seen += [(part.outer(s, False), part.outer(e, True)) for s, e in part.checked.seen]
    checked.place = _places(parts, default)
    checked.fix_text = lambda chosen: _fix_text(text, chosen, origins)
    return checked


def _moved(label: str, lines: Lines, part: Part, finding: Finding) -> Finding:
    """A part's finding, at its place in the outer text, with its own fix moved out too (see
    `_edits`)."""
    start, end = part.outer(finding.span[0], False), part.outer(finding.span[1], True)
    new = apply_fixes(part.text, [finding])
    fix = tuple(_edits(part, [finding], new)) if new is not None and new != part.text else ()
    return lines.finding(label, start, max(start, end), finding.rule, finding.message, fix)


def _fix_text(
    text: str, chosen: list[Finding], origins: dict[tuple[object, ...], list[tuple[Part, Finding]]]
) -> str | None:
    """The outer text with the chosen findings fixed: each part makes its own new text (its
    checker's fixes, which may be more than a finding's replacements), encoded back in."""
    by_part: dict[int, tuple[Part, list[Finding]]] = {}
    for finding in chosen:
        for part, inner in origins.get(finding.identity, []):
            by_part.setdefault(id(part), (part, []))[1].append(inner)
    replacements: list[Replacement] = []
    for part, picked in by_part.values():
        fix = part.checked.fix_text  # (None: its findings' own fixes make the new text)
        new = fix(picked) if fix else apply_fixes(part.text, picked)
        if new is not None and new != part.text:
            replacements += _edits(part, picked, new)
    return apply(text, replacements) if replacements else None


def _edits(part: Part, picked: list[Finding], new: str) -> list[Replacement]:
    """The outer text's edits that make `new` the part's text: the findings' own edits, moved
    one by one, when they are all it takes (every byte between them stays as it is written, and
    a report shows them as the checker made them), else `new` encoded as the part's text."""
    if apply_fixes(part.text, picked) == new:
        moved = [part.move(r) for f in picked for r in f.fix]
        if all(m is not None for m in moved):
            return [m for m in moved if m is not None]
    return list(part.encode(new))


def _places(parts: list[Part], default: Places) -> Places:
    starts = [part.start for part in parts]

    def place(offset: int) -> Place:
        i = bisect.bisect_right(starts, offset) - 1
        if i >= 0 and offset < parts[i].end:
            return parts[i].place(offset)
        return default(offset)

    return place


def constant(place: Place) -> Callable[[int], Place]:
    return lambda _: place
