"""The migration-boundary note: one per migrated view, found again by its marker.

The marker (`wbmigrate:<mapping id>@<version>`) makes a second run add nothing, and a run with
a later mapping version update the note in place instead of adding another.
"""

from __future__ import annotations

import re
from typing import Any

from wbmigrate.engine.history import History, RunRef
from wbmigrate.engine.walk import Walk

_MARKER = re.compile(r"wbmigrate:(?P<id>[a-z0-9._-]+)@(?P<version>\S+?)(?=[_*\s)]|$)")


DUAL = (
    "Panels keep the old keys, which runs from before the boundary logged, and show "
    "the new keys beside them. Compare values across the boundary with care."
)
REPLACE = "Panels now show only the new keys: runs from before the boundary do not appear in them."


def marker(mapping_id: str, version: str) -> str:
    return f"wbmigrate:{mapping_id}@{version}"


def find_marker(text: Any, mapping_id: str) -> str | None:
    """The version in `text`'s marker for this mapping, if it carries one."""
    if not isinstance(text, str):
        return None
    for match in _MARKER.finditer(text):
        if match["id"] == mapping_id:
            return match["version"]
    return None


def is_note(text: Any) -> bool:
    """Whether `text` is a note wbmigrate wrote (its names are not up for review)."""
    return isinstance(text, str) and _MARKER.search(text) is not None


def note_text(w: Walk) -> str:
    """Markdown for the note: each step this view needed, and how the panels were changed."""
    migration = w.migration
    steps = [s for s in migration.steps if s.version in w.versions] or [migration.end]
    heading = f"Metric migration: {migration.mapping_id} {migration.end.version}"
    parts = [f"### {heading}", ""]
    for step in steps:
        boundary = f"**Boundary {step.date.isoformat()}**"
        parts += [f"{boundary} ({step.pull or step.version}): {step.annotation}", ""]
    if w.options.history is not None and w.options.history.runs:
        parts += [project_boundary(w.options.history), ""]
    parts += [DUAL if w.dual else REPLACE, ""]
    parts.append(f"_Added by {marker(migration.mapping_id, migration.end.version)}_")
    return "\n".join(parts)


def project_boundary(history: History) -> str:
    """The project's own boundary, from its runs: markdown, one paragraph."""
    last_old = history.last_old
    if history.first_new is None:
        last = f"; the last run with the old keys is {_run(last_old)}" if last_old else ""
        return (
            f"**This project has not upgraded yet:** none of {history.scope} logged "
            f"the new keys{last}."
        )
    before = (
        f"the last run that logged the old keys is {_run(last_old)}"
        if last_old
        else f"none of {history.scope} logged the old keys"
    )
    return (
        f"**This project's boundary:** {before}; the first run that logged the new keys "
        f"is {_run(history.first_new)}."
    )


def _run(run: RunRef) -> str:
    # A run's name is anyone's text: one line, its markdown (and any marker look-alike) escaped.
    name = re.sub(r"([\\`*_\[\]()<>:])", r"\\\1", " ".join(run.name.split()))
    return f"[{name}]({run.url}) ({run.day})" if run.url else f"{name} ({run.day})"
