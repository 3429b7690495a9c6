"""What `verify --baseline` compares with: the objects before the migration, from the backup
an apply run wrote (the whole originals) or from a saved plan (only what it changed).

Each view becomes its panels (by `__id__`, else by pointer; a saved plan knows pointers only)
with the metrics each showed, in the newest names; each alert, the metrics it watched.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wbmigrate.engine.panels import series_of
from wbmigrate.kinds.automation import alert_metrics
from wbmigrate.live.backup import BackupError
from wbmigrate.live.objects import LiveObject
from wbmigrate.live.planfile import load_plan
from wbmigrate.live.restore import load_backups
from wbmigrate.mapping import Migration
from wbmigrate.names import accessor
from wbmigrate.redact import printable
from wbmigrate.verify import Panels, baseline_panels, newest

PANEL = re.compile(r"\A(?P<panel>.*/panels/\d+)(?:/|\Z)")


@dataclass
class Baseline:
    views: dict[str, Panels] = field(default_factory=dict)  # view id -> its panels
    alerts: dict[str, tuple[str, ...]] = field(default_factory=dict)  # trigger id -> metrics
    source: str = ""  # what it was read from, in words
    host: str | None = None  # the W&B host it was made on, where it says

    def check_host(self, base_url: str) -> None:
        """Refuse a baseline of another W&B host: its ids name other objects."""
        if self.host is not None and self.host != base_url:
            raise BackupError(f"made on {printable(self.host)}, not {base_url}")


def load_baseline(path: Path, migration: Migration) -> Baseline:
    """A backup folder, a backup set, or a saved plan; a `BackupError` (or the plan's own
    error) when it is none of them or fails its checks."""
    if path.is_dir():
        loaded = load_backups(path)
        baseline = Baseline(source=f"the backup {path}", host=loaded.manifest.get("base_url"))
        for backup in loaded.backups.values():
            for item in backup.items:
                original = item.original
                if original.view is not None:
                    baseline.views[original.id] = baseline_panels(_spec(original), migration)
                else:
                    baseline.alerts[original.id] = tuple(alert_metrics(original.trigger))
        return baseline
    if not path.is_file():
        raise BackupError(f"{path}: no backup folder or saved plan there")
    return _from_plan(path, migration)


def _spec(original: LiveObject) -> Any:
    """A backed-up view's spec. Its checksums hold, yet it may not parse: a backup made by hand
    (or its checksums recomputed) is refused in one line, as a damaged one is."""
    try:
        return json.loads(original.text)
    except (ValueError, RecursionError):
        view = printable(original.id)
        raise BackupError(f"the backed-up spec of view {view} is not JSON") from None


def _from_plan(path: Path, migration: Migration) -> Baseline:
    saved = load_plan(path)
    baseline = Baseline(source=f"the saved plan {path}", host=saved.host)
    for entry in saved.objects.values():
        panels: dict[str, set[str]] = {}
        alerts: list[str] = []
        for pointer, action, old, _new in entry.changes:
            if entry.kind == "automation" and isinstance(old, str) and action == "renamed":
                alerts += [old] if accessor(old) else []
                continue
            match = PANEL.match(pointer) if isinstance(pointer, str) else None
            if match is None:
                continue
            if isinstance(old, dict):
                shown = series_of(old)
            else:
                shown = [a.name] if (a := accessor(old)) else []
            panels.setdefault(match["panel"], set()).update(newest(migration, k) for k in shown)
        if entry.kind == "automation":
            baseline.alerts[entry.id] = tuple(alerts)
        else:
            baseline.views[entry.id] = {k: frozenset(v) for k, v in panels.items()}
    return baseline
