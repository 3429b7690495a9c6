"""What the tests share: paths, text spans, and the live test server's state."""

from __future__ import annotations

import json
from pathlib import Path

from wbmigrate import find_mapping
from wbmigrate.rewrite import rewrite_text

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"

MIGRATION = find_mapping("prime-rl").migration()
TARGET = "team/async-rl"


def expected_spec(server, view_id):
    """What the engine makes of a view's spec as the server holds it now."""
    view = server.state.views[view_id]
    kind = "workspace" if view["type"] == "project-view" else "report"
    return rewrite_text(view["spec"], MIGRATION, kind=kind, name=view["displayName"])[1]


def snapshot(server):
    return (
        {i: v["spec"] for i, v in server.state.views.items()},
        {i: json.dumps(t, sort_keys=True) for i, t in server.state.triggers.items()},
    )


def writes(server):
    return [r for r in server.requests if "mutation" in r.body]


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
