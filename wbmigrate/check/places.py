"""What kind of place an offset of a file is in, for the residual pass: a comment, a docstring
or prose (a note), or code, a string, a key (a person must review it)."""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from collections.abc import Callable
from pathlib import Path

from wbmigrate.check.model import Lines, Place

COMMENT = Place("a comment", prose=True)
DOCSTRING = Place("a docstring", prose=True)
PROSE = Place("prose", prose=True)
STRING = Place("a Python string")
TEXT_STRING = Place("text in a Python string", prose=True)  # a message, not a key
_TOKEN_PLACES = {
    tokenize.COMMENT: COMMENT,
    tokenize.NAME: Place("a Python identifier (never renamed)"),
}
PROSE_SUFFIXES = {".txt", ".rst", ".adoc", ".md", ".markdown"}
_HASH_COMMENT = re.compile(r"""(?m)(?:^|[ \t])(#.*)$""")

Places = Callable[[int], Place]


def spans(regions: list[tuple[int, int, Place]], default: Place) -> Places:
    """A lookup over sorted, non-overlapping (start, end, place) regions."""
    regions = sorted(regions)
    starts = [start for start, _, _ in regions]

    def place(offset: int) -> Place:
        i = bisect.bisect_right(starts, offset) - 1
        if i >= 0 and offset < regions[i][1]:
            return regions[i][2]
        return default

    return place


def hash_comments(text: str, default: Place) -> Places:
    """Files whose comments start with `#` (TOML, YAML, shell, Makefile, Dockerfile). A `#`
    inside quotes on its line is not a comment."""
    regions = []
    for match in _HASH_COMMENT.finditer(text):
        line_start = text.rfind("\n", 0, match.start(1)) + 1
        before = text[line_start : match.start(1)]
        if before.count('"') % 2 == 0 and before.count("'") % 2 == 0:
            regions.append((match.start(1), match.end(1), COMMENT))
    return spans(regions, default)


def python_places(text: str, tree: ast.AST) -> Places:
    """Comments and docstrings (notes), other strings, identifiers and code (review)."""
    lines = Lines(text)

    def offset(row: int, column: int) -> int:  # tokenize counts characters (ast: UTF-8 bytes)
        return lines.starts[row - 1] + column

    regions = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            place = _TOKEN_PLACES.get(token.type)
            if token.type == tokenize.STRING:
                place = TEXT_STRING if " " in token.string else STRING
            if place is not None:  # (ENDMARKER sits past the last line of a file without one)
                regions.append((offset(*token.start), offset(*token.end), place))
    except (tokenize.TokenError, SyntaxError):
        pass
    docstrings = {
        (lines.offset(n.lineno, n.col_offset), lines.offset(n.end_lineno, n.end_col_offset))
        for n in _docstrings(tree)
        if n.end_lineno is not None and n.end_col_offset is not None
    }
    regions = [(s, e, DOCSTRING if (s, e) in docstrings else p) for s, e, p in regions]
    return spans(regions, Place("Python code"))


def _docstrings(tree: ast.AST) -> list[ast.Constant]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0].value if node.body and isinstance(node.body[0], ast.Expr) else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append(first)
    return found


def of_file(path: Path) -> Place:
    """The place of a whole file no checker parses: prose, or text a person must read."""
    if path.suffix.lower() in PROSE_SUFFIXES:
        return PROSE
    return Place(f"a {path.suffix or path.name} file wbmigrate does not parse")
