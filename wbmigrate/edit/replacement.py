"""A replacement of a span of text, the one shape every edit of a file's text takes (`check`'s
fixes, the YAML edits, a string's pieces), and the one way to make them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Replacement:
    """Replace text[start:end] with `text`."""

    start: int
    end: int
    text: str


def apply(text: str, replacements: Iterable[Replacement]) -> str | None:
    """`text` with the replacements made; None if two of them overlap (the same replacement
    twice is made once: an edit reached through two aliases of one node, or two findings)."""
    out, pos = [], 0
    for r in sorted(set(replacements)):
        if r.start < pos:
            return None
        out += [text[pos : r.start], r.text]
        pos = r.end
    return "".join(out) + text[pos:]
