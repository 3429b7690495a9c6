"""Saved plans (`plan --out`): exactly what `apply --plan` may do, and to which state.

For each object the file records its fingerprint (updatedAt and the SHA-256 of the spec) and
the changes. `apply --plan` refuses an object whose fingerprint moved, and one whose changes
would now differ; it refuses the whole plan for another host, target or mapping. `show`
renders the plan back from the file alone (`saved_report`).

The boundary note `apply --plan` writes is made again from the mapping (checked by its digest)
and the census the file records: the runs' names, days and counts `show` prints, and their
links, which must be the ones the census makes for the plan's own host and project (a plan
that links elsewhere is refused whole, so nothing in it can point a note at another site).
Over 300 lines because the file is read back beside the format it is written in, every field
checked as it is read (a plan file is anyone's input): split, one format would have two homes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from wbmigrate import __version__, plan_json
from wbmigrate.engine.history import History
from wbmigrate.engine.model import Change, ChangeAction, Note, NoteKind, Options, Rewrite
from wbmigrate.errors import WbmigrateError
from wbmigrate.live.census import project_url, runs_url
from wbmigrate.live.objects import Fingerprint, LiveObject
from wbmigrate.plan import Plan, Planned, Source, Status, Tally
from wbmigrate.plan_json import JsonDocument, mapping_entry, object_entry, options_of, signature
from wbmigrate.safe_write import SafeFile, read_file

if TYPE_CHECKING:  # the mapping loads after a live plan's first requests
    from wbmigrate.mapping import Migration
    from wbmigrate.mapping.file import Mapping

FORMAT = "wbmigrate-plan/2"  # /1 counted objects as `changes` in its summary, which is not read
READ = (FORMAT, "wbmigrate-plan/1")


class PlanFileError(WbmigrateError):
    """A saved plan that cannot be used."""


def migration_digest(migration: Migration) -> str:
    """Identifies what a migration does, whatever file it came from."""
    table = {
        name: ["removed", None, f.new, f.reason] if f.removed else ["renamed", f.new, None, None]
        for name, f in migration.metrics.items()
    }
    config = [[c.old, c.new, dict(c.toml), dict(c.cli)] for c in migration.config]
    # everything a step puts into what is written: the boundary note names its date and source
    steps = [[s.version, s.date.isoformat(), s.source, s.annotation] for s in migration.steps]
    text = json.dumps([migration.mapping_id, table, config, steps], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class PlanFile:
    """A saved plan, written object by object as they are planned, to a temporary file that
    takes the plan's name only when complete (an interrupted run leaves no half plan)."""

    path: Path
    migration: Migration
    options: Options
    target: str
    drafts: bool
    host: str  # the base URL the plan read: `apply --plan` writes there only

    def __post_init__(self) -> None:
        self.tally = Tally()
        self._file = SafeFile(self.path)
        entry = mapping_entry(self.migration, self.options)
        self._document = JsonDocument(self._file.write, entry, "objects")

    def add(self, planned: Planned, obj: LiveObject) -> None:
        self.tally.add(planned)
        fingerprint = {"updatedAt": obj.updated_at, "sha256": obj.fingerprint.sha256}
        self._document.add({**object_entry(planned), "id": obj.id, "fingerprint": fingerprint})

    def close(self) -> None:
        self._document.close(
            {
                "summary": plan_json.summary_entry(self.tally),
                "format": FORMAT,
                "wbmigrate": __version__,
                "target": self.target,
                "host": self.host,
                "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "migration_sha256": migration_digest(self.migration),
                "drafts": self.drafts,
                "options": plan_json.options_entry(self.options),
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
    kind: str
    name: str


@dataclass(frozen=True)
class SavedPlan:
    target: str
    host: str
    mapping_id: str
    start: str
    end: str
    migration_sha256: str
    options: Options
    drafts: bool
    objects: dict[str, SavedObject]  # id -> what apply may write: the objects with changes
    planned: tuple[Planned, ...] = ()  # every object as the plan showed it (see `saved_report`)


def load_plan(path: Path) -> SavedPlan:
    """A saved plan, every field checked. Read with the standard library and checked by hand,
    not msgspec: typed Structs cut 7 lines and read a 5,000-view plan no faster, and its parser
    words a broken file's error otherwise than the messages users are shown today."""
    try:
        data = json.loads(read_file(path)[0].decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise PlanFileError(f"cannot read plan {path}: {exc}") from None
    except RecursionError:
        raise PlanFileError(f"cannot read plan {path}: nested too deeply") from None
    if not isinstance(data, dict) or data.get("format") not in READ:
        raise PlanFileError(f"{path} is not a wbmigrate plan (write one with `plan --out`)")
    if "host" not in data:  # plans are short-lived: one made before hosts were recorded is redone
        raise PlanFileError(f"{path} records no host (an older wbmigrate made it); plan again")
    try:
        options = options_of(data["options"])
        planned = tuple(map(saved_planned, data["objects"]))
        objects = {
            o["id"]: SavedObject(
                o["id"],
                Fingerprint(o["fingerprint"]["updatedAt"], o["fingerprint"]["sha256"]),
                signature(p.result.changes),
                p.result.kind,
                p.source.name,
            )
            for o, p in zip(data["objects"], planned, strict=True)
            if p.result is not None and p.result.changed
        }
        mapping = data["mapping"]
        target, host = _text(data, "target"), _text(data, "host")
        foreign = _foreign_link(options.history, host, target)
        if foreign is not None:
            raise PlanFileError(f"{path}: a run's link is not the project's: {foreign!r}")
        foreign = _foreign_object_link(planned, host, target)
        if foreign is not None:
            raise PlanFileError(f"{path}: an object's link is not the project's: {foreign!r}")
        name, start, end = (_text(mapping, key) for key in ("id", "from", "to"))
        sha256, drafts = data["migration_sha256"], data["drafts"]
        return SavedPlan(target, host, name, start, end, sha256, options, drafts, objects, planned)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise PlanFileError(f"{path}: damaged plan ({exc!r})") from None


def _foreign_link(history: History | None, host: str, target: str) -> str | None:
    """A link of the census to anything but a run page of `target` on `host` (as the census
    makes them), if there is one; a run without a link names no place at all."""
    if history is None:
        return None
    entity, _, project = target.partition("/")
    prefix = runs_url(host, entity, project)
    spans = [run for span in history.spans.values() for run in (span.first, span.last)]
    for run in [history.last_old, history.first_new, *spans]:
        if run is not None and run.url not in ("", prefix + quote(run.id, safe="")):
            return run.url
    return None


def _foreign_object_link(planned: tuple[Planned, ...], host: str, target: str) -> str | None:
    """An object's link to anything but a page under `target`'s on `host`, or with a character
    `LiveObject.url` never writes, if there is one."""
    page = re.escape(project_url(host, *target.split("/", 1))) + r"[/?][\w%./=~-]*"
    for url in (p.source.url for p in planned if p.source.url):
        if not re.fullmatch(page, url, re.ASCII):
            return url
    return None


# --- a saved plan shown again (`wbmigrate show`) ----------------------------------------------


@dataclass(frozen=True)
class SavedRewrite(Rewrite):
    """A rewrite read back from a saved plan: its changes and notes, all a report shows of it;
    whether it changes the object is as saved (the file holds no edits, nor the new spec)."""

    saved_changed: bool = False

    @property
    def changed(self) -> bool:
        return self.saved_changed

    @classmethod
    def of(
        cls,
        kind: str,
        name: str,
        changes: tuple[Change, ...],
        notes: tuple[Note, ...],
        changed: bool,
    ) -> SavedRewrite:
        """Titled as `rewrite.rewrite` names an object (a draft's name says so)."""
        return cls(kind, f'{kind} "{name}"', None, (), changes, notes, saved_changed=changed)


def saved_report(saved: SavedPlan) -> Plan:
    """The plan a saved plan was written from, as far as a report shows it: `plan`'s text,
    Markdown and JSON reports of it are those `plan` printed when it saved the file. Its
    migration only names the mapping and its first and last version (the mapping file itself
    may not be at hand); it renames nothing."""
    from wbmigrate.mapping import Migration, Step

    ends = dict.fromkeys((saved.start, saved.end))  # one step when they are the same
    steps = tuple(Step(version, dt.date.min, "", "", {}, {}, (), "") for version in ends)
    migration = Migration(saved.mapping_id, steps, {}, (), {})
    return Plan(migration, saved.options, saved.planned)


def saved_planned(entry: dict[str, Any]) -> Planned:
    """An object entry of a saved plan (see `plan.object_entry`) read back; KeyError,
    TypeError or ValueError if damaged."""
    status = Status(entry["status"])
    name, origin = _text(entry, "name"), _text(entry, "origin")
    url = _text(entry, "url") if "url" in entry else ""
    if status is Status.ERROR:  # an object not read has a kind when W&B said which
        kind = None if entry["kind"] is None else _text(entry, "kind")
        return Planned(Source(name, origin, kind=kind, url=url), error=_text(entry, "error"))
    kind = _text(entry, "kind")
    changes = tuple(map(_saved_change, entry["changes"]))
    notes = tuple(map(_saved_note, entry["notes"]))
    result = SavedRewrite.of(kind, name, changes, notes, status is Status.CHANGES)
    return Planned(Source(name, origin, kind=kind, url=url), result)


def _saved_change(entry: dict[str, Any]) -> Change:
    action = ChangeAction(entry["action"])
    where, field = _texts(entry, "where"), _text(entry, "field")
    return Change(_text(entry, "pointer"), action, entry["old"], entry["new"], where, field)


def _saved_note(entry: dict[str, Any]) -> Note:
    kind, message = NoteKind(entry["kind"]), _text(entry, "message")
    pointer, where = _text(entry, "pointer"), _texts(entry, "where")
    return Note(pointer, kind, message, where, _text(entry, "field"))


def _text(entry: dict[str, Any], key: str) -> str:
    value = entry[key]
    if not isinstance(value, str):
        raise TypeError(f"{key} is no string")
    return value


def _texts(entry: dict[str, Any], key: str) -> tuple[str, ...]:
    values = entry[key]
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise TypeError(f"{key} is no list of strings")
    return tuple(values)


def saved_migration(saved: SavedPlan, mapping: Mapping, target: str) -> Migration:
    """The migration a saved plan was made with, refused for another target or mapping."""
    migration = mapping.migration(saved.start, saved.end)
    check_plan(saved, target, migration)
    return migration


def check_host(saved: SavedPlan, base_url: str) -> None:
    """Refuse a plan made on another W&B host: its objects, census and links are that host's."""
    if saved.host != base_url:
        raise PlanFileError(f"the plan was made on {saved.host}, not {base_url}")


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
    """Options given beside a saved plan (`given`: the names of every option set on the command
    line) must be the plan's: a plan is applied exactly as it was made."""

    def made(o: Options, drafts: bool) -> tuple[Any, ...]:
        return o.mode, o.rewrite_text, o.annotate, o.project_keys, drafts

    names = ("mode", "rewrite_text", "no_annotate", "project_keys", "drafts")
    pairs = zip(names, made(options, drafts), made(saved.options, saved.drafts), strict=True)
    differ = [name for name, mine, theirs in pairs if name in given and mine != theirs]
    if differ:
        *rest, last = ["--" + name.replace("_", "-") for name in differ]
        shown, verb = (f"{', '.join(rest)} and {last}", "differ") if rest else (last, "differs")
        raise PlanFileError(f"{shown} {verb} from the saved plan, which is applied as it was made")
