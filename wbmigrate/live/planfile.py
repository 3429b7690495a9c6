"""Saved plans (`plan --out`): exactly what `apply --plan` may do, and to which state.

For each object the file records its fingerprint (updatedAt and the SHA-256 of the spec) and
the changes. `apply --plan` refuses an object whose fingerprint moved, and one whose changes
would now differ; it refuses the whole plan for another target or another mapping.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wbmigrate import __version__
from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.live.objects import Fingerprint, LiveObject
from wbmigrate.mapping import Mapping, Migration
from wbmigrate.plan import (
    JsonDocument,
    Planned,
    Tally,
    entry_signature,
    mapping_entry,
    object_entry,
    options_entry,
    options_of,
    summary_entry,
)
from wbmigrate.safe_write import SafeFile

FORMAT = "wbmigrate-plan/1"


class PlanFileError(WbmigrateError):
    """A saved plan that cannot be used."""


def migration_digest(migration: Migration) -> str:
    """Identifies what a migration does, whatever file it came from."""
    table = {
        name: [r.action.value, r.new, r.equivalent, r.removal.reason if r.removal else None]
        for name, r in migration.metrics.items()
    }
    config = [[c.old, c.new, dict(c.toml), dict(c.cli)] for c in migration.config]
    # everything a step puts into what is written: the boundary note names its date and source
    steps = [[s.version, s.date.isoformat(), s.source, s.annotation] for s in migration.steps]
    text = json.dumps([migration.mapping_id, table, config, steps], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


class PlanFile:
    """A saved plan, written object by object as they are planned, to a temporary file that
    takes the plan's name only when complete (an interrupted run leaves no half plan)."""

    def __init__(
        self, path: Path, migration: Migration, options: Options, target: str, drafts: bool
    ) -> None:
        self.path, self.migration, self.options = path, migration, options
        self.target, self.drafts = target, drafts
        self.tally = Tally()
        self._file = SafeFile(path)
        self._document = JsonDocument(
            self._file.write, mapping_entry(migration, options), "objects"
        )

    def add(self, planned: Planned, obj: LiveObject) -> None:
        self.tally.add(planned)
        fingerprint = {"updatedAt": obj.updated_at, "sha256": obj.fingerprint.sha256}
        self._document.add({**object_entry(planned), "id": obj.id, "fingerprint": fingerprint})

    def close(self) -> None:
        self._document.close(
            {
                "summary": summary_entry(self.tally),
                "format": FORMAT,
                "wbmigrate": __version__,
                "target": self.target,
                "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "migration_sha256": migration_digest(self.migration),
                "drafts": self.drafts,
                "options": options_entry(self.options),
            }
        )
        self._file.commit()

    def discard(self) -> None:
        self._file.discard()


@dataclass(frozen=True)
class SavedObject:
    id: str
    fingerprint: Fingerprint
    changes: list[list[Any]]
    kind: str = ""
    name: str = ""


@dataclass(frozen=True)
class SavedPlan:
    target: str
    mapping_id: str
    start: str
    end: str
    migration_sha256: str
    options: Options
    drafts: bool
    objects: dict[str, SavedObject]


def load_plan(path: Path) -> SavedPlan:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PlanFileError(f"cannot read plan {path}: {exc}") from None
    except RecursionError:
        raise PlanFileError(f"cannot read plan {path}: nested too deeply") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PlanFileError(f"{path} is not a wbmigrate plan (write one with `plan --out`)")
    try:
        options = options_of(data["options"])
        objects = {
            o["id"]: SavedObject(
                o["id"],
                Fingerprint(o["fingerprint"]["updatedAt"], o["fingerprint"]["sha256"]),
                entry_signature(o),
                o.get("kind") or "",
                o.get("name") or "",
            )
            for o in data["objects"]
            if o.get("status") == "changes"
        }
        return SavedPlan(
            data["target"],
            data["mapping"]["id"],
            data["mapping"]["from"],
            data["mapping"]["to"],
            data["migration_sha256"],
            options,
            data["drafts"],
            objects,
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise PlanFileError(f"{path}: damaged plan ({exc!r})") from None


def saved_migration(saved: SavedPlan, mapping: Mapping, target: str) -> Migration:
    """The migration a saved plan was made with, refused for another target or mapping."""
    migration = mapping.migration(saved.start, saved.end)
    check_plan(saved, target, migration)
    return migration


def check_plan(saved: SavedPlan, target: str, migration: Migration) -> None:
    """Refuse a plan made for another target or with another mapping."""
    if saved.target != target:
        raise PlanFileError(f"the plan is for {saved.target}, not {target}")
    if migration_digest(migration) != saved.migration_sha256:
        raise PlanFileError(
            f"mapping {saved.mapping_id} {saved.start}..{saved.end} changed "
            "since the plan was made; make a new plan"
        )


def check_options(saved: SavedPlan, options: Options, drafts: bool, given: set[str]) -> None:
    """Options given beside a saved plan (`given`: their names) must be the plan's: a plan is
    applied exactly as it was made."""
    differ = [
        name
        for name, mine, theirs in (
            ("mode", options.mode, saved.options.mode),
            ("rewrite_text", options.rewrite_text, saved.options.rewrite_text),
            ("no_annotate", not options.annotate, not saved.options.annotate),
            ("project_keys", options.project_keys, saved.options.project_keys),
            ("drafts", drafts, saved.drafts),
        )
        if name in given and mine != theirs
    ]
    if differ:
        shown = ", ".join("--" + name.replace("_", "-") for name in differ)
        raise PlanFileError(f"{shown} differ from the saved plan, which is applied as it was made")
