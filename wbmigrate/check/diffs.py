"""The smallest replacements between two texts: a fix changes only what differs, so every
other byte (and its spelling: escapes, line breaks) stays."""

from __future__ import annotations

import difflib
from collections.abc import Callable

from wbmigrate.edit.replacement import Replacement


def minimal(text: str, new: str) -> tuple[Replacement, ...]:
    """The one replacement that turns `text` into `new` (common head and tail kept)."""
    limit = min(len(text), len(new))
    head = longest(lambda n: text[:n] == new[:n], limit)
    tail = longest(lambda n: text[len(text) - n :] == new[len(new) - n :], limit - head)
    return (Replacement(head, len(text) - tail, new[head : len(new) - tail]),)


def longest(agrees: Callable[[int], bool], high: int) -> int:
    """The largest n in [0, high] for which `agrees(n)`, given that it holds up to some n and
    no further: a binary search of C-speed slice comparisons, not a loop over characters."""
    low = 0
    while low < high:
        middle = (low + high + 1) // 2
        if agrees(middle):
            low = middle
        else:
            high = middle - 1
    return low


def differences(old: str, new: str) -> list[Replacement]:
    """Where `new` differs from `old`, in pieces (for a short string; one piece for a long
    one), so a block scalar keeps its own line breaks between them."""
    if len(old) + len(new) > 20_000:
        return list(minimal(old, new))
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [
        Replacement(a, b, new[c:d]) for op, a, b, c, d in matcher.get_opcodes() if op != "equal"
    ]
