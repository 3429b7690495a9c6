"""Reports (view types `runs` and `runs/draft`): blocks, panel grids, weave blocks, settings;
a report in W&B's 2019 shape (`panelGroups`, no blocks) is read by `kinds.legacy_report`."""

from __future__ import annotations

from typing import Any

from wbmigrate.edit.edits import Insert, Path, Set
from wbmigrate.engine.annotate import find_marker, is_note, note_block, note_index, note_text
from wbmigrate.engine.model import ChangeAction
from wbmigrate.engine.panels import walk_section, walk_weave
from wbmigrate.engine.runsets import report_colours, walk_runset
from wbmigrate.engine.shapes import as_list
from wbmigrate.engine.walk import Walk
from wbmigrate.kinds import legacy_report

NAME = "report"
VIEW_TYPES = ("runs", "runs/draft")
# Blocks whose `children` are text nodes ({"text": ...}, nested in lists and callouts).
TEXT_BLOCKS = (
    "paragraph",
    "heading",
    "block-quote",
    "callout-block",
    "list",
    "code-block",
    "default",
    "latex",
)


def matches(spec: Any) -> bool:
    return _current(spec) or legacy_report.matches(spec)


def _current(spec: Any) -> bool:
    return isinstance(spec, dict) and isinstance(spec.get("blocks"), list)


def walk(w: Walk, spec: dict[str, Any]) -> None:
    if not _current(spec):
        legacy_report.walk(w, spec)
        return
    settings = spec.get("panelSettings")
    if isinstance(settings, dict) and "xAxis" in settings:
        w.single(("panelSettings", "xAxis"), settings["xAxis"], "panelSettings.xAxis")
    _blocks(w, ("blocks",), spec["blocks"])


def _blocks(w: Walk, path: Path, blocks: list[Any]) -> None:
    for i, block in enumerate(blocks):
        if isinstance(block, dict):
            _block(w, (*path, i), block, i)


def _block(w: Walk, path: Path, block: dict[str, Any], index: int) -> None:
    kind = block.get("type")
    if kind == "panel-grid":
        with w.at(f"panel grid (block {index})"):
            _panel_grid(w, (*path, "metadata"), block.get("metadata"))
    elif kind == "weave-panel":
        with w.at(f"weave panel (block {index})"):
            if isinstance(block.get("config"), dict):
                walk_weave(w, (*path, "config"), block["config"])
    elif kind == "markdown-block":
        if not is_note(block.get("content")):
            w.text((*path, "content"), block.get("content"), f"markdown (block {index})")
    elif kind in TEXT_BLOCKS:
        _text_nodes(w, (*path, "children"), block.get("children"), f"{kind} (block {index})")
    else:
        w.scan(path, block, f"block type {kind!r}")
    if isinstance(block.get("collapsedChildren"), list):
        with w.at(f"{kind} (block {index}), collapsed"):
            _blocks(w, (*path, "collapsedChildren"), block["collapsedChildren"])


def _text_nodes(w: Walk, path: Path, nodes: Any, field: str) -> None:
    for i, node in enumerate(nodes if isinstance(nodes, list) else []):
        if isinstance(node, dict):
            w.text((*path, i, "text"), node.get("text"), field)
            _text_nodes(w, (*path, i, "children"), node.get("children"), field)


def _panel_grid(w: Walk, path: Path, metadata: Any) -> None:
    if not isinstance(metadata, dict):
        return
    runsets = as_list(metadata.get("runSets"))
    for i, runset in enumerate(runsets):
        walk_runset(w, (*path, "runSets", i), runset)
    report_colours(w, (*path, "customRunColors"), metadata.get("customRunColors"), runsets)
    section = metadata.get("panelBankSectionConfig")
    if isinstance(section, dict):
        walk_section(w, (*path, "panelBankSectionConfig"), section)
    bank = metadata.get("panelBankConfig")
    if isinstance(bank, dict):
        for i, section in enumerate(as_list(bank.get("sections"))):
            with w.at(f'section "{section.get("name", i)}"' if isinstance(section, dict) else ""):
                walk_section(w, (*path, "panelBankConfig", "sections", i), section)


def annotate(w: Walk, spec: dict[str, Any]) -> None:
    """A markdown block at the top of the report (after the SDK's empty first paragraph), or
    the existing one brought up to date."""
    if not _current(spec):
        legacy_report.annotate(w, spec)
        return
    mapping_id, version = w.migration.mapping_id, w.migration.end.version
    text = note_text(w)
    for i, block in enumerate(spec["blocks"]):
        found = find_marker(block.get("content"), mapping_id) if isinstance(block, dict) else None
        if found == version:
            return
        if found is not None:
            w.change(
                Set(("blocks", i, "content"), text),
                ChangeAction.ANNOTATED,
                block["content"],
                text,
                "migration note",
            )
            return
    at = ("blocks", note_index(spec["blocks"]))
    w.change(Insert(at, note_block(text)), ChangeAction.ANNOTATED, None, text, "migration note")
