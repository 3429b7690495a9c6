"""Dashboards as code on disk: the export-file format, and finding and reading spec files.

An export file (`wbmigrate export`) is a JSON document of the object's metadata with its
parsed spec under `spec`; a raw spec file is the spec alone, its kind told by its shape. Both
`plan DIR` and `check` read them through `spec_in`, and find them with the same discovery
(`wbmigrate.discover`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from wbmigrate import json_values, kinds
from wbmigrate.discover import find_files, refusal
from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.mapping import Migration
from wbmigrate.plan import Planned, Source, plan_one
from wbmigrate.rewrite import too_big

EXPORT_FORMAT = "wbmigrate-export/1"
EXPORT_SPEC = ("spec",)  # where an export document holds the spec
SPEC_SUFFIXES = (".json",)
# The keys, one of which every spec's shape holds (see each kind's `matches`), and the export
# marker: a file with none of them is no spec, and is not parsed to find that out.
SPEC_MARKERS = (
    f'"{EXPORT_FORMAT}"',
    '"blocks"',
    '"panelGroups"',
    '"section"',
    '"__typename"',
    '"event"',
    '"triggeringCondition"',
)


def export_document(kind: str, entity: str, project: str, metadata: dict[str, Any]) -> str:
    """The text of an export file: the format, the object's kind and project, then its
    metadata (which ends with `spec`), pretty-printed in the order given."""
    document = {"wbmigrate": EXPORT_FORMAT, "kind": kind, "entity": entity, "project": project}
    return json.dumps({**document, **metadata}, indent=2, ensure_ascii=False) + "\n"


def spec_in(document: Any) -> tuple[tuple[str, ...], str] | None:
    """Where a document's spec sits and its kind: an export file's, or a raw spec's shape;
    None for a document that holds no spec (a config, a package.json)."""
    if isinstance(document, dict) and document.get("wbmigrate") == EXPORT_FORMAT:
        kind = document.get("kind")
        return (EXPORT_SPEC, kind) if kind in kinds.KINDS else None
    try:
        return (), kinds.detect(document)
    except kinds.UnknownKindError:
        return None


def spec_paths(target: Path, exclude: Iterable[str] = ()) -> list[Path]:
    """The spec files of a target: the file itself, or every JSON file `check` would read under
    the folder (`.gitignore`d paths, `exclude` patterns and symlinks skipped), in `check`'s
    order. A FIFO, socket or device is refused, never opened."""
    refused = refusal(target)
    if refused:
        raise WbmigrateError(f"{target}: {refused}")
    if target.is_file():
        return [target]
    if not target.is_dir():
        raise WbmigrateError(f"{target}: no such file or folder")
    return [path for path in find_files([target], exclude) if path.suffix in SPEC_SUFFIXES]


def read_sources(target: Path, exclude: Iterable[str] = ()) -> Iterator[Source]:
    """One Source per spec file, read as asked for; one that cannot be read carries the reason
    instead. In a folder, a JSON file that is no spec (a `package.json`, a resolved config) is
    skipped without a word; a file named alone is always planned, and said to be no spec. The
    target is checked at once, so a bad one is refused before any output."""
    named = target.is_file()
    found = (read_source(path, named) for path in spec_paths(target, exclude))
    return (source for source in found if source is not None)


def plan_files(
    target: Path, exclude: Iterable[str], migration: Migration, options: Options
) -> Iterator[Planned]:
    """The plan of each spec file of a target, in order, made as the report asks for it (so
    one spec at a time is held)."""
    return (plan_one(source, migration, options) for source in read_sources(target, exclude))


def read_source(path: Path, named: bool) -> Source | None:
    """The Source of one spec file (None: a file found in a folder that is no spec)."""
    try:
        refused = too_big(path.stat().st_size)
        if refused:
            return Source(name=path.stem, origin=str(path), error=f"not read: {refused}")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return Source(name=path.stem, origin=str(path), error="not UTF-8 text")
    except OSError as exc:
        return Source(name=path.stem, origin=str(path), error=exc.strerror or str(exc))
    return _source(path, text, named)


def _source(path: Path, text: str, named: bool) -> Source | None:
    """The Source of a spec file's text. A file named alone is always planned: a raw spec, or
    an export file told by its first bytes (so a raw spec is parsed only once, when planned).
    A file found in a folder is planned only if it may be a spec: without any key a spec's
    shape needs it cannot be one, and is not parsed to find that out; valid JSON of another
    shape is no spec either. Text that does not parse is planned, so a broken spec is reported
    (and so is JSON nested too deeply to tell)."""
    unparsed = Source(name=path.stem, origin=str(path), text=text)
    if named and EXPORT_FORMAT not in text[:200]:
        return unparsed
    if not named and not any(marker in text for marker in SPEC_MARKERS):
        return None
    try:
        document = json.loads(text) if named else json_values.loads(text)
    except (ValueError, RecursionError):
        return unparsed
    found = spec_in(document)
    if found is None or (named and found[0] != EXPORT_SPEC):
        return unparsed if named else None
    root, kind = found
    if root != EXPORT_SPEC:
        return replace(unparsed, kind=kind, document=document)
    name = document.get("displayName") or document.get("name") or path.stem
    return replace(unparsed, name=str(name), kind=kind, root=EXPORT_SPEC, document=document)
