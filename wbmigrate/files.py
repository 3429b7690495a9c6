"""Dashboards as code on disk: the export-file format, and finding and reading spec files.

An export file (`wbmigrate export`) is a document of the object's metadata with its parsed
spec under `spec`; a raw spec file is the spec alone, its kind told by its shape. Both are JSON
or YAML (each `---` document of a YAML file on its own). `plan DIR` and `check` find them with
the same discovery (`wbmigrate.discover`), parse them with the same readers (`read_json`,
`read_yaml`) and tell a spec with the same `spec_in`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from wbmigrate import json_values, kinds
from wbmigrate.discover import find_files, refusal
from wbmigrate.edit.located_yaml import Located, load_located_all
from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.mapping import Migration
from wbmigrate.plan import Planned, Source, plan_one
from wbmigrate.rewrite import too_big

EXPORT_FORMAT = "wbmigrate-export/1"
EXPORT_SPEC = ("spec",)  # where an export document holds the spec
YAML_SUFFIXES = (".yaml", ".yml")
SPEC_SUFFIXES = (".json", *YAML_SUFFIXES)  # the files `check` reads as JSON or YAML documents
# The keys, one of which every spec's shape holds (see each kind's `matches`): a file with
# none of them, nor the export marker, is no spec, and is not parsed to find that out.
SPEC_KEYS = ("blocks", "panelGroups", "section", "__typename", "event", "triggeringCondition")
SPEC_MARKERS = (f'"{EXPORT_FORMAT}"', *(f'"{key}"' for key in SPEC_KEYS))
# The same keys as YAML writes them: plain or quoted, in block or flow style.
_YAML_KEYS = re.compile(rf"""(?:^|[\s{{,])["']?(?:{"|".join(SPEC_KEYS)})["']?[ \t]*:""", re.M)


class Unreadable(WbmigrateError):
    """A document's text that is not valid JSON or YAML: `problem` as `check` says it, at
    `offset` in the text; the message adds the line and column, when known."""

    def __init__(self, problem: str, offset: int = 0, line: int = 0, column: int = 0) -> None:
        super().__init__(f"{problem} (line {line}, column {column})" if line else problem)
        self.problem = problem
        self.offset = offset


def read_json(text: str) -> Any:
    """A JSON file's document."""
    try:
        return json_values.loads(text)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"not valid JSON: {exc.msg}", exc.pos, exc.lineno, exc.colno) from None
    except RecursionError:
        raise Unreadable("JSON nested too deeply to read") from None


def read_yaml(text: str) -> list[Located]:
    """A YAML file's documents (`---`), each with where its values are: the safe loader, with
    duplicate keys reported and aliases that expand without bound refused."""
    try:
        return load_located_all(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        at = (mark.index, mark.line + 1, mark.column + 1) if mark else (0, 0, 0)
        raise Unreadable(f"not valid YAML: {problem}", *at) from None
    except RecursionError:
        raise Unreadable("YAML nested too deeply to read") from None


def export_document(kind: str, entity: str, project: str, metadata: dict[str, Any]) -> str:
    """The text of an export file: the format, the object's kind and project, then its
    metadata (which ends with `spec`), pretty-printed in the order given."""
    document = {"wbmigrate": EXPORT_FORMAT, "kind": kind, "entity": entity, "project": project}
    return json.dumps({**document, **metadata}, indent=2, ensure_ascii=False) + "\n"


def spec_in(document: Any) -> tuple[tuple[str, ...], str] | None:
    """Where a document's spec sits and its kind: an export file's, or a raw spec's shape;
    None for a document that holds no spec (a config, a package.json)."""
    if _is_export(document):
        kind = document.get("kind")
        return (EXPORT_SPEC, kind) if kind in kinds.KINDS else None
    try:
        return (), kinds.detect(document)
    except kinds.UnknownKindError:
        return None


def spec_paths(target: Path, exclude: Iterable[str] = ()) -> list[Path]:
    """The spec files of a target: the file itself, or every JSON and YAML file `check` would
    read under the folder (`.gitignore`d paths, `exclude` patterns and symlinks skipped), in
    `check`'s order. A FIFO, socket or device is refused, never opened."""
    refused = refusal(target)
    if refused:
        raise WbmigrateError(f"{target}: {refused}")
    if target.is_file():
        return [target]
    if not target.is_dir():
        raise WbmigrateError(f"{target}: no such file or folder")
    return [path for path in find_files([target], exclude) if path.suffix in SPEC_SUFFIXES]


def read_sources(target: Path, exclude: Iterable[str] = ()) -> Iterator[Source]:
    """One Source per spec (a YAML file may hold several), read as asked for; one that cannot
    be read carries the reason instead. In a folder, a file that is no spec (a `package.json`,
    a CI workflow, a resolved config) is skipped without a word; a file named alone is always
    planned, and said to be no spec. The target is checked at once, so a bad one is refused
    before any output."""
    named = target.is_file()
    return (source for path in spec_paths(target, exclude) for source in read_source(path, named))


def plan_files(
    target: Path, exclude: Iterable[str], migration: Migration, options: Options
) -> Iterator[Planned]:
    """The plan of each spec file of a target, in order, made as the report asks for it (so
    one spec at a time is held)."""
    return (plan_one(source, migration, options) for source in read_sources(target, exclude))


def read_source(path: Path, named: bool) -> list[Source]:
    """The Sources of one spec file (none: a file found in a folder that is no spec)."""
    try:
        refused = too_big(path.stat().st_size)
        if refused:
            return [Source(name=path.stem, origin=str(path), error=f"not read: {refused}")]
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return [Source(name=path.stem, origin=str(path), error="not UTF-8 text")]
    except OSError as exc:
        return [Source(name=path.stem, origin=str(path), error=exc.strerror or str(exc))]
    if path.suffix in YAML_SUFFIXES:
        return _yaml_sources(path, text, named)
    found = _source(path, text, named)
    return [found] if found is not None else []


def _source(path: Path, text: str, named: bool) -> Source | None:
    """The Source of a JSON spec file's text. A file named alone is always planned: a raw
    spec, or an export file told by its first bytes (so a raw spec is parsed only once, when
    planned). A file found in a folder is planned only if it may be a spec: without any key a
    spec's shape needs it cannot be one, and is not parsed to find that out; valid JSON of
    another shape is no spec either. Text that does not parse is planned, so a broken spec is
    reported (and so is JSON nested too deeply to tell)."""
    unparsed = Source(name=path.stem, origin=str(path), text=text)
    if named and EXPORT_FORMAT not in text[:200]:
        return unparsed
    if not named and not any(marker in text for marker in SPEC_MARKERS):
        return None
    try:
        document = json.loads(text) if named else read_json(text)
    except (ValueError, RecursionError, Unreadable):
        return unparsed
    if named and not _is_export(document):
        return unparsed
    return _document_source(unparsed, document) or (unparsed if named else None)


def _yaml_sources(path: Path, text: str, named: bool) -> list[Source]:
    """The Sources of a YAML file's text: one per document that holds a spec, found as in a
    JSON file. A file named alone with no spec in it is planned, and said to be none."""
    unparsed = Source(name=path.stem, origin=str(path), text=text)
    if not named and EXPORT_FORMAT not in text and not _YAML_KEYS.search(text):
        return []
    try:
        documents = [located.data for located in read_yaml(text)]
    except Unreadable as exc:
        return [replace(unparsed, error=str(exc))]
    sources = []
    for i, document in enumerate(documents):
        one = replace(unparsed, name=f"{path.stem} ({i + 1})") if len(documents) > 1 else unparsed
        found = _document_source(one, document)
        sources += [found] if found is not None else []
    if sources or not named:
        return sources
    return [replace(unparsed, document=documents[0] if documents else None)]


def _document_source(unparsed: Source, document: Any) -> Source | None:
    """The Source of a parsed document that holds a spec, or of an export file whose kind
    wbmigrate does not know (an error: such a file is never skipped); None for another
    document."""
    found = spec_in(document)
    if found is None:
        if not _is_export(document):
            return None
        return replace(unparsed, error=f"an export file of unknown kind {document.get('kind')!r}")
    root, kind = found
    if root != EXPORT_SPEC:
        return replace(unparsed, kind=kind, document=document)
    name = document.get("displayName") or document.get("name") or unparsed.name
    return replace(unparsed, name=str(name), kind=kind, root=EXPORT_SPEC, document=document)


def _is_export(document: Any) -> bool:
    return isinstance(document, dict) and document.get("wbmigrate") == EXPORT_FORMAT
