"""Words every report uses."""

from __future__ import annotations

import re


def plural(count: int, word: str) -> str:
    """`1 file`, `2 files`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def printable(text: str) -> str:
    """`text` with control characters escaped, so a name cannot forge lines of a report."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def markdown(text: str) -> str:
    """`text` (a name, a message: anyone's) in Markdown as it is: never a tag, a table cell, or
    a link or image (a `](` is escaped; backslashes too, so none undoes an escape; a bare `[x]`
    links only to a definition, and no line of a report can hold one)."""
    return re.sub(r"[\\|]", r"\\\g<0>", text).replace("](", "]\\(").replace("<", "&lt;")


def code(text: str) -> str:
    """`text` as a Markdown code span that no backtick in it can end (a table's `|` escaped)."""
    fence = "`" * (1 + max(map(len, re.findall("`+", text)), default=0))
    pad = " " if text[:1] == "`" or text[-1:] == "`" else ""
    return fence + pad + text.replace("|", "\\|") + pad + fence
