"""What an `apply` run must do, worked out before anything is written: every object planned
once (or the saved plan followed), the objects to write with the state each must still be in
and the rewrite its write will send (both on disk until their turn: memory holds no spec), what
is gone and what cannot be read (`prepare_apply`, each object planned by `plan_write`); and the
backup folder the run writes first (`backup_folder`, `start_backup`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError, bug
from wbmigrate.live.backup import Backup, check_folder, default_folder
from wbmigrate.live.objects import LiveObject, ObjectRef
from wbmigrate.live.outcomes import Expected, Outcome, Queued, Rewritten, Spool, WriteStatus
from wbmigrate.live.project import Counts, Project
from wbmigrate.plan import Planned, Status, Tally
from wbmigrate.plan_json import mapping_entry
from wbmigrate.rewrite import NewText, rewrite_of

if TYPE_CHECKING:
    from wbmigrate.live.planfile import SavedPlan
    from wbmigrate.mapping import Migration


@dataclass
class Work:
    """What an apply run must do: the objects to write, each with the state it must still be
    in, and the outcomes already known (objects gone since the saved plan, or unreadable).
    Each object to write is kept with the rewrite made when it was planned, for the write to
    reuse, on disk (`spool`) until its turn: in memory only what names it."""

    todo: list[Queued] = field(default_factory=list)
    settled: list[Outcome] = field(default_factory=list)
    planned: list[Planned] | None = None  # every object as `plan` shows it, if asked for
    tally: Tally = field(default_factory=Tally)
    spool: Spool | None = None  # made for the first object to write

    def jobs(self, backup: Backup) -> list[Queued]:
        """The objects to write, each with its plan, backed up into `backup`."""
        return [replace(queued, backup=backup) for queued in self.todo]

    def keep(self, obj: LiveObject, expected: Expected, plan: Rewritten | None) -> None:
        assert plan is not None  # every object planned without an error has one
        self.spool = self.spool or Spool()
        self.todo.append(Queued(obj.ref, expected, self.spool, self.spool.put((obj, plan))))


def prepare_apply(
    project: Project,
    migration: Migration,
    options: Options,
    saved: SavedPlan | None = None,
    counts: Counts | None = None,
    objects: Iterator[LiveObject] | None = None,
    shown: bool = False,
) -> Work:
    """Plan every object once (or follow `saved`) and keep only what must be written, with
    the rewrite its write will send. `objects`: the project's objects, already being read
    (else they are read now, counted into `counts`). `shown`: also keep every object's
    changes and notes (`Work.planned`), for the plan shown before the question."""
    work = Work(planned=[] if shown else None)
    unreadable, seen = [], set()
    for obj in objects if objects is not None else project.read(counts):
        planned, plan = plan_write(obj, migration, options, project.client.base_url)
        work.tally.add(planned)
        if work.planned is not None:
            work.planned.append(_as_shown(planned))
        seen.add(obj.id)
        if planned.status is Status.ERROR:
            unreadable.append(Outcome(obj.ref, WriteStatus.SKIPPED, f"not read: {planned.error}"))
        elif saved is None and planned.status is Status.CHANGES:
            work.keep(obj, Expected(obj.fingerprint), plan)
        elif saved is not None and obj.id in saved.objects:
            entry = saved.objects[obj.id]
            work.keep(obj, Expected(entry.fingerprint, entry.changes), plan)
    work.settled = _gone(saved, seen) + unreadable
    return work


def plan_write(
    obj: LiveObject, migration: Migration, options: Options, base_url: str = ""
) -> tuple[Planned, Rewritten | None]:
    """Plan one object as `apply` writes it: the plan (for the summary) and, when one could be
    made, its rewrite: the changes, and the edits the text to send is spliced from when the
    object's turn to be written comes (`Rewritten.text`). The data-loss guard checks those
    exact bytes against the edits then (`live.outcomes.to_send`): the bytes are only sent if
    W&B still holds what they were made from. `base_url`: the API host, for the object's link."""
    source = obj.source(base_url)
    if source.error is not None:
        return Planned(source, error=source.error), None
    try:
        result = rewrite_of(obj.text, migration, kind=obj.kind, name=obj.title, options=options)
    except WbmigrateError as exc:
        return Planned(source, error=str(exc)), None
    except Exception as exc:  # a bug: said for this object alone, as `plan_one` does
        return Planned(source, error=bug(exc)), None
    if not result.changed:
        return Planned(source, result), Rewritten(None)
    text = NewText(obj.text, result.edits)
    return Planned(source, result), Rewritten(text, result.changes, result.edits)


def _as_shown(planned: Planned) -> Planned:
    """An object's plan as a report shows it (its changes and notes), as a saved plan keeps
    it: not the spec nor the edits, which memory keeps for no object."""
    from wbmigrate.live.planfile import SavedRewrite

    result = planned.result
    if result is None:
        return planned
    name = planned.source.name
    light = SavedRewrite.of(result.kind, name, result.changes, result.notes, result.changed)
    return Planned(planned.source, light)


def backup_folder(label: str, given: str | None = None) -> Path:
    """The backup folder an apply run will use (`given`, or a fresh default named after
    `label`), checked before anything is read: one that cannot be made or written is refused
    in one line."""
    folder = Path(given) if given else default_folder(label)
    check_folder(folder)
    return folder


def start_backup(project: Project, migration: Migration, options: Options, folder: Path) -> Backup:
    """The backup folder of an apply run (see `backup_folder`), its manifest saying what was
    migrated how and where."""
    info = {
        "target": project.target,
        "base_url": project.client.base_url,
        **mapping_entry(migration, options),
    }
    return Backup(folder, info)


def _gone(saved: SavedPlan | None, seen: set[str]) -> list[Outcome]:
    """Objects of the saved plan that the project no longer holds: failed, and said so."""
    if saved is None:
        return []
    return [
        Outcome(ObjectRef(entry.kind, entry.id, entry.name), WriteStatus.FAILED, "no longer exists")
        for entry in saved.objects.values()
        if entry.id not in seen
    ]
