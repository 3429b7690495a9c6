"""Reports in W&B's 2019 shape (still view type `runs`, so part of the `report` kind): a
`global` part (settings, panels, run colours) and `panelGroups`, each a section with its run
sets and its panels under `panels.views.<id>.config`.

The panels and run sets are the ones newer reports hold, walked by the same rules; anything
else in the shape is scanned, each old name in it reported for review.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wbmigrate import names
from wbmigrate.edit.edits import Path
from wbmigrate.engine.model import NoteKind
from wbmigrate.engine.panels import walk_panel
from wbmigrate.engine.runsets import walk_runset
from wbmigrate.engine.shapes import as_list
from wbmigrate.engine.walk import Walk

# Why this shape gets no migration note: it has no text block to hold one, and where W&B's
# conversion (opening and saving the report in W&B) would put a new section is not known.
NO_NOTE = (
    "this report is in W&B's 2019 shape (`panelGroups`), which has no text block for the "
    "migration note: none was added. Open and save the report in W&B, which converts it to "
    "the current shape, then run wbmigrate again to add the note"
)


def matches(spec: Any) -> bool:
    return isinstance(spec, dict) and isinstance(spec.get("panelGroups"), list)


def walk(w: Walk, spec: dict[str, Any]) -> None:
    if isinstance(spec.get("global"), dict):
        with w.at("report settings"):
            _global(w, ("global",), spec["global"])
    for i, group in enumerate(spec["panelGroups"]):
        if isinstance(group, dict):
            _group(w, ("panelGroups", i), group, i)
        else:
            w.scan(("panelGroups", i), group, "section")
    w.scan((), _rest(spec, ("global", "panelGroups")), "report field")


def _global(w: Walk, path: Path, top: dict[str, Any]) -> None:
    """The report-wide part: panels and run colours as a section has, and the x axis."""
    _part(w, path, top)
    settings = top.get("settings")
    if isinstance(settings, dict) and "xAxis" in settings:
        w.single((*path, "settings", "xAxis"), settings["xAxis"], "settings.xAxis")
    rest = _rest(top, ("name", "panels", "customRunColors", "settings"))
    if "settings" in top:
        rest["settings"] = _rest(settings, ("xAxis",))
    w.scan(path, rest, "report settings field")


def _group(w: Walk, path: Path, group: dict[str, Any], index: int) -> None:
    """One section: its name (free text), run sets, panels and run colours."""
    name = group.get("name")
    with w.at(f'section "{name}"' if isinstance(name, str) and name else f"section {index + 1}"):
        _part(w, path, group)
        for i, runset in enumerate(as_list(group.get("runSets"))):
            walk_runset(w, (*path, "runSets", i), runset)
        handled = ("name", "panels", "customRunColors", "runSets")
        w.scan(path, _rest(group, handled), "section field")


def _part(w: Walk, path: Path, part: dict[str, Any]) -> None:
    """What `global` and a section share: a name, panels, run colours."""
    w.text((*path, "name"), part.get("name"), "name")
    _panels(w, (*path, "panels"), part.get("panels"))
    colors = part.get("customRunColors")
    for key in colors if isinstance(colors, dict) else ():
        _color_key(w, (*path, "customRunColors", key), key)


def _color_key(w: Walk, path: Path, key: str) -> None:
    """A run colour's key: a run id, or `<runset>-<accessor>:<value>` for the runs a grouping
    puts together. A grouping on an old name is said, not changed (its colours are keyed by
    what the runs logged)."""
    _, dash, grouped = key.partition("-")
    found = names.accessor(grouped.rpartition(":")[0]) if dash else None
    if found is not None and w.fate(found.name):
        why = f"colours runs grouped by {found.name}, which the mapping renames or removes"
        w.note(path, NoteKind.REVIEW, f"{why}; run colours are not rewritten", "customRunColors")
    else:
        w.scan(path, key, "customRunColors key")


def _panels(w: Walk, path: Path, panels: Any) -> None:
    """`{views: {<id>: {name, defaults, config: [panel, ...]}}, tabs}`."""
    if not isinstance(panels, dict):
        w.scan(path, panels, "panels")
        return
    views = panels.get("views")
    for key, view in views.items() if isinstance(views, dict) else ():
        at = (*path, "views", key)
        listed = isinstance(view, dict) and isinstance(view.get("config"), list)
        if listed:
            for i, panel in enumerate(view["config"]):
                walk_panel(w, (*at, "config", i), panel)
        w.scan(at, _rest(view, ("config",)) if listed else view, "panel view")
    w.scan(path, _rest(panels, ("views",) if isinstance(views, dict) else ()), "panels")


def _rest(part: Any, handled: Iterable[str]) -> Any:
    """`part` without the keys a rule handles (the rest is scanned)."""
    skip = set(handled)
    return {k: v for k, v in part.items() if k not in skip} if isinstance(part, dict) else part


def annotate(w: Walk, spec: dict[str, Any]) -> None:
    """No note: a warning says why (the changes are made without it)."""
    w.note((), NoteKind.WARNING, NO_NOTE, "migration note")
