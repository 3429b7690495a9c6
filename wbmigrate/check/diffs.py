"""The smallest replacements between two texts: a fix changes only what differs, so every
other byte (and its spelling: escapes, line breaks) stays."""

from __future__ import annotations

import difflib
from collections.abc import Callable

from wbmigrate.edit.replacement import Replacement

Span = tuple[int, int]


def minimal(text: str, new: str, hint: Span = (0, 0)) -> tuple[Replacement, ...]:
    """The one replacement that turns `text` into `new` (common head and tail kept).

    `hint` is the span of `text` the change lies in, when known; it narrows the search."""
    start, end = hint
    limit = min(len(text), len(new))
    same = start if start <= limit and text[:start] == new[:start] else 0
    head = longest(lambda n: text[same:n] == new[same:n], same, limit)
    after = min(len(text) - end, limit - head)
    known = after if after > 0 and text[len(text) - after :] == new[len(new) - after :] else 0
    tail = longest(lambda n: text[len(text) - n :] == new[len(new) - n :], known, limit - head)
    return (Replacement(head, len(text) - tail, new[head : len(new) - tail]),)


def longest(agrees: Callable[[int], bool], low: int, high: int) -> int:
    """The largest n in [low, high] for which `agrees(n)`, given that it holds up to some n and
    no further: a binary search of C-speed slice comparisons, not a loop over characters."""
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
