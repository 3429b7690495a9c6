"""Markdown: prose, and code blocks read as the language they are written in.

Prose is for people: an old name in it is a note (the residual pass gives it). A fenced block
(```toml, ~~~python, or none: shell) or an indented one is checked by the checker of its
language on its own text, so a TOML snippet in a README is fixed as precisely as a TOML file;
its findings are then moved to where the block is in the file. A block that does not parse as
its language (a fragment, a doctest) is no error of the Markdown file: its old names go to the
residual pass, for a person to review.

A block inside a list item or a block quote is read without its indentation and `>` markers,
so Python and YAML in it parse; a fix puts them back on every line it writes.

The embedding of one checked text in another (`Part`, `lift`) is shared with notebooks, whose
cells are texts inside a JSON document.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from wbmigrate.check.documents import check_json, check_yaml, minimal
from wbmigrate.check.flags import check_flags
from wbmigrate.check.model import Checked, Finding, Lines, Place, Replacement, Rule, apply_fixes
from wbmigrate.check.places import PROSE
from wbmigrate.check.python_code import check_python
from wbmigrate.check.targets import Targets
from wbmigrate.check.toml_config import check_toml

Checker = Callable[[str, str, Targets], Checked]
Fix = Callable[[list[Finding]], str | None]

# info-string word -> (the language's name, its checkers in the order their fixes are made)
LANGUAGES: dict[str, tuple[str, tuple[Checker, ...]]] = {
    "toml": ("TOML", (check_toml,)),
    "python": ("Python", (check_python,)),
    "py": ("Python", (check_python,)),
    "sh": ("shell", (check_flags,)),
    "bash": ("shell", (check_flags,)),
    "shell": ("shell", (check_flags,)),
    "console": ("shell", (check_flags,)),
    "zsh": ("shell", (check_flags,)),
    "": ("shell", (check_flags,)),  # an unlabelled block: most often commands
    "yaml": ("YAML", (check_yaml, check_flags)),  # CI steps run commands: flags, as in .yml files
    "yml": ("YAML", (check_yaml, check_flags)),
    "json": ("JSON", (check_json,)),
}

_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_QUOTE_MARK = re.compile(r" {0,3}>[ ]?")
_OPEN = re.compile(r"(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*?)[ \t\r]*\n?")
_LIST_ITEM = re.compile(r"(?P<indent>[ \t]*)(?:[-+*]|\d{1,9}[.)])(?P<gap>[ ]{1,4})(?=\S)")
_WORD = re.compile(r"[{.]*(?P<word>[\w+#-]*)")
_INDENTED_CODE = 4  # columns that make an indented code block (CommonMark)


# --- a text inside another ---------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """A text inside another (a code block of a Markdown file, a notebook cell's source),
    checked on its own: findings and fixes are made on `text` and moved out through `outer`."""

    start: int  # where the part is in the outer text (for places)
    end: int
    text: str
    checked: Checked  # the part's own findings, spans and places, in `text`'s offsets
    outer: Callable[[int, bool], int]  # an offset in `text` (ending a span?) -> the outer text's
    encode: Callable[[str], tuple[Replacement, ...]]  # a new `text` -> edits of the outer text
    move: Callable[[Replacement], Replacement | None]  # one edit of `text` in the outer text
    fix: Fix  # chosen findings of `checked` -> the new `text` (None: not safely)
    place: Callable[[int], Place]  # an outer offset inside the part -> the kind of place


def lift(label: str, text: str, parts: list[Part], default: Place) -> Checked:
    """The outer text's Checked: every part's findings and seen spans moved out, places looked
    up in the part an offset is in (`default` elsewhere), and fixes made part by part."""
    lines = Lines(text)
    checked = Checked()
    origins: dict[tuple[object, ...], list[tuple[Part, Finding]]] = {}
    for part in parts:
        for finding in part.checked.findings:
            moved = _moved(label, lines, part, finding)
            checked.findings.append(moved)
            origins.setdefault(_key(moved), []).append((part, finding))
        checked.seen += [(part.outer(s, False), part.outer(e, True)) for s, e in part.checked.seen]
    checked.place = _places(parts, default)
    checked.fix_text = lambda chosen: _fix_text(text, chosen, origins)
    return checked


def _moved(label: str, lines: Lines, part: Part, finding: Finding) -> Finding:
    """A part's finding, at its place in the outer text, with its own fix moved out too: edit
    by edit where they can be (a report shows them as the checker made them), else as the
    edits that make the part's text with this fix."""
    start, end = part.outer(finding.span[0], False), part.outer(finding.span[1], True)
    moved = [part.move(r) for r in finding.fix]
    fix = tuple(r for r in moved if r is not None)
    if len(fix) < len(moved):
        new = apply_fixes(part.text, [finding])
        fix = part.encode(new) if new is not None and new != part.text else ()
    return lines.finding(label, start, max(start, end), finding.rule, finding.message, fix)


def _key(finding: Finding) -> tuple[object, ...]:
    """What identifies a moved finding when it comes back to be fixed: a suppression without a
    reason changes its message, nothing else."""
    return finding.span, finding.rule, finding.fix


def _fix_text(
    text: str, chosen: list[Finding], origins: dict[tuple[object, ...], list[tuple[Part, Finding]]]
) -> str | None:
    """The outer text with the chosen findings fixed: each part makes its own new text (its
    checker's fixes, which may be more than a finding's replacements), encoded back in."""
    by_part: dict[int, tuple[Part, list[Finding]]] = {}
    for finding in chosen:
        for part, inner in origins.get(_key(finding), []):
            by_part.setdefault(id(part), (part, []))[1].append(inner)
    replacements: list[Replacement] = []
    for part, picked in by_part.values():
        new = part.fix(picked)
        if new is not None and new != part.text:
            replacements += _edits(part, picked, new)
    return splice(text, replacements)


def _edits(part: Part, picked: list[Finding], new: str) -> list[Replacement]:
    """The outer text's edits that make `new` the part's text: the findings' own edits, moved
    one by one, when they are all it takes (every byte between them stays as it is written),
    else `new` encoded as the part's text."""
    if apply_fixes(part.text, picked) == new:
        moved = [part.move(r) for f in picked for r in f.fix]
        if all(m is not None for m in moved):
            return [m for m in moved if m is not None]
    return list(part.encode(new))


def splice(text: str, replacements: list[Replacement]) -> str | None:
    """`text` with the replacements made; None when there is none, or two overlap."""
    out, pos = [], 0
    for r in sorted(set(replacements), key=lambda r: (r.start, r.end)):
        if r.start < pos:
            return None
        out += [text[pos : r.start], r.text]
        pos = r.end
    return "".join(out) + text[pos:] if out else None


def _places(parts: list[Part], default: Place) -> Callable[[int], Place]:
    starts = [part.start for part in parts]

    def place(offset: int) -> Place:
        i = bisect.bisect_right(starts, offset) - 1
        if i >= 0 and offset < parts[i].end:
            return parts[i].place(offset)
        return default

    return place


def constant(place: Place) -> Callable[[int], Place]:
    return lambda _: place


# --- code blocks -------------------------------------------------------------------------------


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


# --- checking a Markdown file ------------------------------------------------------------------


def check_markdown(label: str, text: str, targets: Targets) -> Checked:
    """Findings of the code blocks, at their place in the file; prose is left to the
    residual pass, as notes."""
    parts = [
        _block_part(label, block, targets)
        for block in code_blocks(text)
        if targets.may_contain(block.text)
    ]
    return lift(label, text, parts, PROSE)


def _block_part(label: str, block: Block, targets: Targets) -> Part:
    known = LANGUAGES.get(block.language)
    fix: Fix
    shown = f"a `{block.language}` code block" if block.language else "a code block"
    if known is None:
        checked, fix = Checked(place=constant(Place(shown))), _no_fix
    else:
        name, checkers = known
        checked, fix = _check_block(label, block.text, targets, checkers)
        if any(f.rule is Rule.PARSE_ERROR for f in checked.findings):
            broken = Place(f"{shown} that is not valid {name}")
            checked, fix = Checked(place=constant(broken)), _no_fix
    inner_place = checked.place or constant(Place(shown))

    def place(offset: int) -> Place:
        inner = block.inner(offset)
        return PROSE if inner is None else inner_place(inner)

    def move(edit: Replacement) -> Replacement:
        return Replacement(
            block.outer(edit.start), block.outer(edit.end), block.fix_lines(edit.text)
        )

    def encode(new: str) -> tuple[Replacement, ...]:
        return (move(minimal(block.text, new)[0]),)

    start, end = block.region
    return Part(start, end, block.text, checked, block.outer, encode, move, fix, place)


def _no_fix(chosen: list[Finding]) -> str | None:
    return None


def _check_block(
    label: str, text: str, targets: Targets, checkers: tuple[Checker, ...]
) -> tuple[Checked, Fix]:
    """The block's findings from each of its language's checkers, and the fix that makes the
    chosen ones with each checker in turn, as `check` fixes a file."""
    results = [checker(label, text, targets) for checker in checkers]
    merged = Checked(
        [f for r in results for f in r.findings],
        seen=[s for r in results for s in r.seen],
        place=results[0].place,
    )

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

    return merged, fix


def same_findings(wanted: list[Finding], found: list[Finding]) -> list[Finding]:
    """The findings of `found` that are `wanted` ones, by rule, message and order, in a text
    another checker's fixes have moved."""
    left: dict[tuple[Rule, str], int] = {}
    for finding in wanted:
        left[finding.rule, finding.message] = left.get((finding.rule, finding.message), 0) + 1
    picked = []
    for finding in found:
        if left.get((finding.rule, finding.message), 0) > 0:
            left[finding.rule, finding.message] -= 1
            picked.append(finding)
    return picked
