"""Paths shared by the tests."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"


def affected_paths(edits):
    """Where each edit may change text: the value for a Set, else its container; outermost only."""
    from wbmigrate.edit.edits import Set

    paths = sorted({e.path if isinstance(e, Set) else e.path[:-1] for e in edits}, key=len)
    return [p for i, p in enumerate(paths) if not any(p[: len(q)] == q for q in paths[:i])]


def outside(text, paths):
    """`text` without the spans of the values at `paths`."""
    spans = sorted(_span(text, path) for path in paths)
    out, pos = [], 0
    for start, end in spans:
        out.append(text[pos:start])
        pos = end
    return "".join(out) + text[pos:]


def _span(text, path):
    from wbmigrate.edit.json import _members, _value_end

    start = len(text) - len(text.lstrip())
    for part in path:
        (member,) = [m for m in _members(text, start) if m.key == part]
        start = member.value_start
    return start, _value_end(text, start)
