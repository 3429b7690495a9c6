"""Reading specs defensively: a field that should hold a list may hold anything, or nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from wbmigrate.edit.edits import Path


def as_list(value: Any) -> list[Any]:
    """`value` if it is a list, else an empty one (a missing, null or malformed field)."""
    return value if isinstance(value, list) else []


def nodes(
    value: Any, path: Path = (), enter: Callable[[Any], bool] = lambda node: True
) -> Iterator[tuple[Path, Any]]:
    """`value` and every value inside it, with its path, in document order; the insides of a
    container that `enter` rules out are skipped (a cold part of a big structure costs one
    test). A stack, not recursion: any depth is fine."""
    stack = [(path, value)]
    while stack:
        at, node = stack.pop()
        yield at, node
        if isinstance(node, (dict, list)) and enter(node):
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack += reversed([((*at, k), v) for k, v in items])
