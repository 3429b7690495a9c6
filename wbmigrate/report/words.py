"""Words every report uses."""

from __future__ import annotations


def plural(count: int, word: str) -> str:
    """`1 file`, `2 files`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def printable(text: str) -> str:
    """`text` with control characters escaped, so a name cannot forge lines of a report."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
