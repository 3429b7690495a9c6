"""Reading specs defensively: a field that should hold a list may hold anything, or nothing."""

from __future__ import annotations

from typing import Any


def as_list(value: Any) -> list[Any]:
    """`value` if it is a list, else an empty one (a missing, null or malformed field)."""
    return value if isinstance(value, list) else []
