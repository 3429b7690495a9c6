"""The migration-boundary note: one per migrated view, found again by its marker, placed and
shaped as W&B's own SDK (wandb_workspaces) writes a markdown block or a workspace section.

The marker (`wbmigrate:<mapping id>@<version>`) makes a second run add nothing, and a run with
a later mapping version update the note in place instead of adding another.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from wbmigrate.engine.history import History, RunRef
from wbmigrate.engine.walk import Walk

_MARKER = re.compile(r"wbmigrate:(?P<id>[a-z0-9._-]+)@(?P<version>\S+?)(?=[_*\s)]|$)")


DUAL = (
    "Panels keep the old keys, which runs from before the boundary logged, and show "
    "the new keys beside them. Compare values across the boundary with care."
)
REPLACE = "Panels now show only the new keys: runs from before the boundary do not appear in them."

# The empty paragraph wandb_workspaces puts first in every report it saves, and drops when it
# loads one (`Report._to_model` / `_from_model`, reports/v2/interface.py): a note in front of
# it would make the SDK's next save add another.
EMPTY_PARAGRAPH = {"type": "paragraph", "children": [{"text": ""}]}
# A new workspace section as wandb_workspaces writes one (`PanelBankConfigSectionsItem`,
# reports/v2/internal.py), its settings with the two flags the SDK computes from them
# (`smoothingActive`: a smoothing type or weight is set; `xAxisActive`: not `_step`, no range).
FLOW = {
    "snapToColumns": True,
    "columnsPerPage": 3,
    "rowsPerPage": 2,
    "gutterWidth": 16,
    "boxWidth": 460,
    "boxHeight": 300,
}
SECTION_SETTINGS = {
    "smoothingWeight": 0,
    "smoothingType": "exponential",
    "xAxis": "_step",
    "ignoreOutliers": False,
    "useRunsTableGroupingInPanels": True,
    "smoothingActive": True,
    "xAxisActive": False,
}


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
    name, day = _escaped(run.name), _escaped(run.day)
    if not run.url.startswith(("https://", "http://")):  # no link to anything but a web page
        return f"{name} ({day})"
    return f"[{name}]({markdown_url(run.url)}) ({day})"


def _escaped(text: str) -> str:
    # A run's name and date are anyone's text: one line, markdown (and marker look-alikes) escaped.
    return re.sub(r"([\\`*_\[\]()<>:])", r"\\\1", " ".join(text.split()))


def markdown_url(url: str) -> str:
    """`url` as a Markdown link's destination: what could end it or start a title (parentheses,
    spaces, angle brackets, quotes, backslashes, control characters) is percent-encoded; the
    characters a URL gives meaning to are kept, and so are escapes already made."""
    return quote(url, safe="/:?#[]@!$&'*+,;=%~")


def note_block(text: str) -> dict[str, Any]:
    """The note as a report's markdown block, its keys in the SDK's order."""
    return {"type": "markdown-block", "children": [{"text": ""}], "content": text}


def note_index(blocks: list[Any]) -> int:
    """Where a new note goes in a report's blocks: first, after the SDK's empty paragraph."""
    return 1 if blocks and blocks[0] == EMPTY_PARAGRAPH else 0


def note_section(section_id: str, text: str, flow: Any = None) -> dict[str, Any]:
    """The note as a workspace section of its own (`flow`: the layout of the section it goes
    before, so the workspace keeps one look), holding one markdown panel."""
    panel = {
        "__id__": f"{section_id}-note",
        "layout": {"x": 0, "y": 0, "w": 24, "h": 8},
        "viewType": "Markdown Panel",
        "config": {"value": text},
    }
    return {
        "__id__": section_id,
        "name": "Migration notes",
        "isOpen": True,
        "type": "flow",
        "flowConfig": flow if isinstance(flow, dict) else FLOW,
        "sorted": 0,
        "localPanelSettings": SECTION_SETTINGS,
        "panels": [panel],
        "pinned": False,
        "isPanelsAuto": False,  # its panel is ours, never one the app regenerates
    }
