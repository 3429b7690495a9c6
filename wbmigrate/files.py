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
from wbmigrate.edit import edits
from wbmigrate.edit.located_yaml import Located, load_located_all
from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError
from wbmigrate.mapping import Migration
from wbmigrate.plan import Planned, Source, plan_one
from wbmigrate.rewrite import MAX_SPEC_BYTES
from wbmigrate.safe_write import TooBig, read_file

EXPORT_FORMAT = "wbmigrate-export/1"
EXPORT_SPEC = ("spec",)  # where an export document holds the spec
YAML_SUFFIXES = (".yaml", ".yml")
SPEC_SUFFIXES = (".json", *YAML_SUFFIXES)  # the files `check` reads as JSON or YAML documents
# The keys, one of which every spec's shape holds (see each kind's `matches`): a file with
# none of them, nor the export marker, is no spec, and is not parsed to find that out.
SPEC_KEYS = ("blocks", "panelGroups", "section", "__typename", "event", "triggeringCondition")
SPEC_MARKERS = (f'"{EXPORT_FORMAT}"', *(f'"{key}"' for key in SPEC_KEYS))
_JSON_TEXT = re.compile(r"\s*[\[{]")  # what a string holding a spec as JSON text starts with
# The same keys as YAML writes them: plain or quoted, in block or flow style, or in a string
# that holds a spec as JSON text (its quotes escaped).
_YAML_KEYS = re.compile(rf"""\b(?:{"|".join(SPEC_KEYS)})\\?["']?[ \t]*:""")


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
        text = read_file(path, MAX_SPEC_BYTES)[0].decode("utf-8")
    except UnicodeDecodeError:
        return [Source(name=path.stem, origin=str(path), error="not UTF-8 text")]
    except TooBig as exc:
        return [Source(name=path.stem, origin=str(path), error=f"not read: {exc}")]
    except OSError as exc:
        return [Source(name=path.stem, origin=str(path), error=exc.strerror or str(exc))]
    return _sources(path, text, named)


def _sources(path: Path, text: str, named: bool) -> list[Source]:
    """The Sources of a spec file's text: one per spec in it, found where `check` finds them
    (`specs_in`). A file found in a folder is read only if it may hold a spec: without any
    key a spec's shape needs it holds none, and is not parsed to find that out; one that holds
    no spec is skipped. A file named alone is always planned (said to be no spec, if it holds
    none), and so is text that does not parse, so a broken spec is reported."""
    unparsed = Source(name=path.stem, origin=str(path), text=text)
    yaml_file = path.suffix in YAML_SUFFIXES
    if not named and not _may_hold_spec(text, yaml_file):
        return []
    try:
        documents = [d.data for d in read_yaml(text)] if yaml_file else [read_json(text)]
    except Unreadable as exc:
        return [replace(unparsed, error=str(exc))]
    sources = []
    for i, document in enumerate(documents):
        one = replace(unparsed, name=f"{path.stem} ({i + 1})") if len(documents) > 1 else unparsed
        sources += [_source(one, at, node) for at, node in specs_in(document)]
    if sources or not named:
        return sources
    return [replace(unparsed, document=documents[0] if documents else None)]


def _may_hold_spec(text: str, yaml_file: bool) -> bool:
    if yaml_file:
        return EXPORT_FORMAT in text or _YAML_KEYS.search(text) is not None
    return any(marker in text for marker in SPEC_MARKERS)


def specs_in(document: Any) -> Iterator[tuple[edits.Path, Any]]:
    """Every spec in a parsed document and where it is, outermost first, as `check` finds
    them: the document itself, an export file, or any value inside (a list of triggers, a
    saved view's wrapper), also one kept as JSON text in a string (its path: the string's; text
    that looks like one and does not parse: why, an `Unreadable`). An export file is listed
    whatever its kind (one of a kind wbmigrate does not know is an error, never skipped). A
    stack, not recursion: any depth."""
    stack: list[tuple[edits.Path, Any]] = [((), document)]
    while stack:
        at, node = stack.pop()
        if isinstance(node, dict):
            if _is_export(node) or any(kind.matches(node) for kind in kinds.KINDS.values()):
                yield at, node
                continue
            stack += reversed([((*at, key), value) for key, value in node.items()])
        elif isinstance(node, list):
            stack += reversed([((*at, i), value) for i, value in enumerate(node)])
        elif isinstance(node, str) and at and _json_text(node):
            try:
                stack.append((at, read_json(node)))
            except Unreadable as exc:
                yield at, exc


def _json_text(text: str) -> bool:
    """Whether a string may be a spec kept as JSON text (a cheap test: none is parsed
    unless it looks like one)."""
    return _JSON_TEXT.match(text) is not None and any(marker in text for marker in SPEC_MARKERS)


def _source(unparsed: Source, at: edits.Path, node: Any) -> Source:
    """The Source of a spec found at `at` in a document (named by its place, unless it is
    the document itself)."""
    one = replace(unparsed, name=f"{unparsed.name} {edits.pointer(at)}") if at else unparsed
    if isinstance(node, Unreadable):
        return replace(one, error=f"a spec kept as JSON text cannot be read: {node}")
    found = spec_in(node)
    if found is None:
        return replace(one, error=f"an export file of unknown kind {node.get('kind')!r}")
    root, kind = found
    if root != EXPORT_SPEC:
        return replace(one, kind=kind, document=node)
    name = node.get("displayName") or node.get("name") or one.name
    return replace(one, name=str(name), kind=kind, root=EXPORT_SPEC, document=node)


def _is_export(document: Any) -> bool:
    return isinstance(document, dict) and document.get("wbmigrate") == EXPORT_FORMAT
