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
from wbmigrate.engine.model import Change, Mode, Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.live import Fingerprint, LiveObject
from wbmigrate.mapping import Migration
from wbmigrate.plan import Plan
from wbmigrate.report.plan import as_dict

FORMAT = "wbmigrate-plan/1"


class PlanFileError(WbmigrateError):
    """A saved plan that cannot be used."""


def migration_digest(migration: Migration) -> str:
    """Identifies what a migration does, whatever file it came from."""
    table = {name: [r.action.value, r.new, r.equivalent] for name, r in migration.metrics.items()}
    config = [[c.old, c.new, dict(c.toml), dict(c.cli)] for c in migration.config]
    steps = [[s.version, s.annotation] for s in migration.steps]
    text = json.dumps([migration.mapping_id, table, config, steps], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def signature(changes: tuple[Change, ...]) -> list[list[Any]]:
    """The changes as plain data, to compare a fresh rewrite with the saved plan."""
    return [[c.pointer, c.action.value, c.old, c.new] for c in changes]


def save_plan(
    path: Path, plan: Plan, objects: dict[str, LiveObject], target: str, drafts: bool
) -> None:
    data = as_dict(plan)
    for entry in data["objects"]:
        obj = objects[entry["origin"]]
        entry["id"] = obj.id
        entry["fingerprint"] = {"updatedAt": obj.updated_at, "sha256": obj.fingerprint.sha256}
    data.update(
        {
            "format": FORMAT,
            "wbmigrate": __version__,
            "target": target,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "migration_sha256": migration_digest(plan.migration),
            "drafts": drafts,
            "options": {
                "mode": plan.options.mode.value,
                "rewrite_text": plan.options.rewrite_text,
                "annotate": plan.options.annotate,
                "project_keys": sorted(plan.options.project_keys),
            },
        }
    )
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class SavedObject:
    id: str
    fingerprint: Fingerprint
    changes: list[list[Any]]


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
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PlanFileError(f"{path} is not a wbmigrate plan (write one with `plan --out`)")
    try:
        options = Options(
            mode=Mode(data["options"]["mode"]),
            rewrite_text=data["options"]["rewrite_text"],
            annotate=data["options"]["annotate"],
            project_keys=frozenset(data["options"]["project_keys"]),
        )
        objects = {
            o["id"]: SavedObject(
                o["id"],
                Fingerprint(o["fingerprint"]["updatedAt"], o["fingerprint"]["sha256"]),
                [[c["pointer"], c["action"], c["old"], c["new"]] for c in o.get("changes", [])],
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
    except (KeyError, TypeError, ValueError) as exc:
        raise PlanFileError(f"{path}: damaged plan ({exc!r})") from None


def check_plan(saved: SavedPlan, target: str, migration: Migration) -> None:
    """Refuse a plan made for another target or with another mapping."""
    if saved.target != target:
        raise PlanFileError(f"the plan is for {saved.target}, not {target}")
    if migration_digest(migration) != saved.migration_sha256:
        raise PlanFileError(
            f"mapping {saved.mapping_id} {saved.start}..{saved.end} changed "
            "since the plan was made; make a new plan"
        )
