"""Words every report uses, and the escaping of text that came from elsewhere (a server, a
spec) before it is laid out."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import click

from wbmigrate.redact import printable


def plural(count: int, word: str) -> str:
    """`1 file`, `2 files`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


# The colour of each change mark, level and write status, as a text report shows it at a
# terminal: `coloured` styles them, `terminal_safe` lets these exact styled words through.
COLOURS = {
    **{"~": "yellow", "+": "green", "-": "red", "x": "red", "*": "cyan"},  # changes
    **{"!": "yellow", "?": "magenta", "i": "blue"},  # a plan's notes
    **{"error": "red", "warning": "yellow", "note": "cyan"},  # check's and verify's levels
    **{"applied": "green", "restored": "green", "skipped": "yellow"},  # writes
    **{"conflict": "red", "failed": "red"},
}
STYLED = {word: click.style(word, fg=colour) for word, colour in COLOURS.items()}
_STYLED = re.compile(f"({'|'.join(map(re.escape, STYLED.values()))})")


_styling = threading.Event()  # set while a command runs (`colours`), in all its threads


def coloured(word: str, width: int = 0) -> str:
    """One of our own marks or levels (`COLOURS`) in its colour, padded to `width`, while a
    command runs (click.echo strips the style where there is no colour: see `colours`); plain
    for a library's caller. Styled after the text around it is escaped. A word without a
    colour stays plain."""
    styled = STYLED.get(word, word) if _styling.is_set() else word
    return styled + " " * (width - len(word))


@contextmanager
def colours(ctx: click.Context) -> Iterator[None]:
    """While the command of `ctx` (the root) runs: marks are styled, and shown where click
    shows colour (a terminal) with what click (8.x) lacks: NO_COLOR (no-color.org) turns
    colour off, FORCE_COLOR on even into a pipe; any non-empty value, NO_COLOR first, as
    Python's own `_colorize` reads them."""
    if ctx.color is None and os.environ.get("NO_COLOR"):
        ctx.color = False
    elif ctx.color is None and os.environ.get("FORCE_COLOR"):
        ctx.color = True
    _styling.set()
    try:
        yield
    finally:
        _styling.clear()


def terminal_safe(text: str) -> str:
    """`text` with every character a terminal would act on (an ANSI escape, a carriage return,
    a bidi override) but a line end or a tab escaped as `\\uXXXX`, which a JSON string reads as
    the same character: the last guard of everything printed, whatever printed it. Only our
    own styled words (`STYLED`, each whole, ending in a reset) pass: a colour, and no other
    escape, which the renderers add after escaping what came from elsewhere."""
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text
    parts = _STYLED.split(text)  # our styled words at the odd places
    return "".join(part if i % 2 else _safe(part) for i, part in enumerate(parts))


def _safe(text: str) -> str:
    return "".join(ch if ch.isprintable() or ch in "\n\t" else _escaped(ch) for ch in text)


def _escaped(char: str) -> str:
    units = char.encode("utf-16-be", "surrogatepass")  # two units (a surrogate pair) above U+FFFF
    return "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))


def markdown(text: str) -> str:
    """`text` as inert Markdown: printable, and unable to end a table cell (a `|`, or a `\\`
    before ours), open a code span, a link, an image or HTML."""
    text = printable(text).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
    return text.replace("<", "&lt;").replace("](", "]\\(")


def code(text: str) -> str:
    """`text` as a Markdown code span: fenced by more backticks than it holds in a row (a
    backslash escapes nothing in a code span). In a table cell, escape its `|` too."""
    text = printable(text)
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
