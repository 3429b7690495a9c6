"""Words every report uses, and the escaping of text that came from elsewhere (a server, a
spec) before it is laid out."""

from __future__ import annotations

import re

from wbmigrate.redact import printable


def plural(count: int, word: str) -> str:
    """`1 file`, `2 files`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def terminal_safe(text: str) -> str:
    """`text` with every character a terminal would act on (an ANSI escape, a carriage return,
    a bidi override) but a line end or a tab escaped as `\\uXXXX`, which a JSON string reads as
    the same character: the last guard of everything printed, whatever printed it."""
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text
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
