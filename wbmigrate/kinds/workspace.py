"""Saved workspaces (view type `project-view`): sections, run set, overrides, panel search."""

from __future__ import annotations

import json
from typing import Any

from wbmigrate.edit.edits import Insert, Path, Set
from wbmigrate.engine.annotate import find_marker, note_section, note_text
from wbmigrate.engine.model import ChangeAction, NoteKind
from wbmigrate.engine.panels import walk_section
from wbmigrate.engine.runsets import walk_runset, workspace_colours
from wbmigrate.engine.shapes import as_list
from wbmigrate.engine.walk import Walk

NAME = "workspace"
VIEW_TYPES = ("project-view",)
OVERRIDE_MAPS = ("panelConfigOverrides", "panelPlacementOverrides")


def matches(spec: Any) -> bool:
    return isinstance(spec, dict) and isinstance(spec.get("section"), dict)


def walk(w: Walk, spec: dict[str, Any]) -> None:
    path: Path = ("section",)
    section = spec["section"]
    for i, runset in enumerate(as_list(section.get("runSets"))):
        walk_runset(w, (*path, "runSets", i), runset)
    workspace_colours(w, (*path, "customRunColors"), section.get("customRunColors"))
    for name in ("settings", "workspaceSettings"):
        settings = section.get(name)
        if isinstance(settings, dict) and "xAxis" in settings:
            w.single((*path, name, "xAxis"), settings["xAxis"], f"{name}.xAxis")
    bank = section.get("panelBankConfig")
    if isinstance(bank, dict):
        _panel_bank(w, (*path, "panelBankConfig"), bank)
    if isinstance(section.get("panelBankSectionConfig"), dict):
        walk_section(w, (*path, "panelBankSectionConfig"), section["panelBankSectionConfig"])


def _panel_bank(w: Walk, path: Path, bank: dict[str, Any]) -> None:
    settings = bank.get("settings")
    if isinstance(settings, dict):
        # The panel search box: a case-insensitive regex over panel and metric names.
        w.regex(
            (*path, "settings", "searchQuery"),
            settings.get("searchQuery"),
            "panel search",
            ignore_case=True,
        )
        for i, entry in enumerate(as_list(settings.get("searchHistory"))):
            if isinstance(entry, dict):
                w.regex(
                    (*path, "settings", "searchHistory", i, "query"),
                    entry.get("query"),
                    f"searchHistory[{i}]",
                    ignore_case=True,
                )
    for i, section in enumerate(as_list(bank.get("sections"))):
        if isinstance(section, dict) and not _is_note_section(section, w.migration.mapping_id):
            with w.at(f'section "{section.get("name", i)}"'):
                walk_section(w, (*path, "sections", i), section)
    for name in OVERRIDE_MAPS:
        overrides = bank.get(name)
        if not isinstance(overrides, dict):
            continue
        # Keyed by metric for auto panels; the config override of a panel also holds keys.
        for key, value in overrides.items():
            config = value.get("config") if isinstance(value, dict) else None
            if isinstance(config, dict):
                with w.at(f"{name}[{json.dumps(key)}]"):
                    _override_config(w, (*path, name, key, "config"), config)
        w.key_map((*path, name), overrides, name)


def _override_config(w: Walk, path: Path, config: dict[str, Any]) -> None:
    """An override's config body, whatever the panel type: every known key field."""
    if isinstance(config.get("metrics"), list):
        w.key_list((*path, "metrics"), config["metrics"], "config.metrics")
    for key in ("xAxis", "groupBy"):
        if key in config:
            w.single((*path, key), config[key], f"config.{key}")
    for key in ("chartTitle", "xAxisTitle", "yAxisTitle"):
        w.text((*path, key), config.get(key), f"config.{key}")


def _is_note_section(section: dict[str, Any], mapping_id: str) -> bool:
    return section.get("__id__") == _note_section_id(mapping_id)


def _note_section_id(mapping_id: str) -> str:
    return f"wbmigrate-{mapping_id}"


def annotate(w: Walk, spec: dict[str, Any]) -> None:
    """A markdown panel in a section of its own at the top of the workspace."""
    mapping_id, version = w.migration.mapping_id, w.migration.end.version
    text = note_text(w)
    path: Path = ("section", "panelBankConfig", "sections")
    bank = spec["section"].get("panelBankConfig")
    sections = as_list(bank.get("sections")) if isinstance(bank, dict) else None
    if sections is None:
        w.note(
            path, NoteKind.REVIEW, "no panel sections to hold the migration note", "migration note"
        )
        return
    for i, section in enumerate(sections):
        if isinstance(section, dict) and _is_note_section(section, mapping_id):
            panels = as_list(section.get("panels"))
            value = panels[0].get("config", {}).get("value") if panels else None
            if find_marker(value, mapping_id) != version and panels:
                w.change(
                    Set((*path, i, "panels", 0, "config", "value"), text),
                    ChangeAction.ANNOTATED,
                    value,
                    text,
                    "migration note",
                )
            return
    first = sections[0] if sections and isinstance(sections[0], dict) else {}
    section = note_section(_note_section_id(mapping_id), text, first.get("flowConfig"))
    w.change(
        Insert((*path, 0), section),
        ChangeAction.ANNOTATED,
        None,
        text,
        "migration note",
    )
