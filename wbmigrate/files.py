"""Dashboards as code on disk: the export-file format, and finding and reading spec files.

An export file (`wbmigrate export`) is a document of the object's metadata with its parsed
spec under `spec`; a raw spec file is the spec alone, its kind told by its shape. Both are JSON
or YAML (each `---` document of a YAML file on its own). `plan DIR` and `check` find them with
the same discovery (`wbmigrate.discover`), parse them with the same readers (`read_json`,
`read_yaml`) and find the specs in a document with the same `find`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
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
# Deeper documents are refused: no real spec comes near, and the engine walks recursively.
MAX_DEPTH = 500
SWEEP, TEXT = "sweep", "text"  # what `find` calls a sweep config, a string that may hold a spec
# The same keys as YAML writes them: plain or quoted, in block or flow style, or in a string
# that holds a spec as JSON text (its quotes escaped).
_YAML_KEYS = re.compile(rf"""\b(?:{"|".join(SPEC_KEYS)})\\?["']?[ \t]*:""")
# The markers as JSON writes them: quoted, or in a string that holds a spec as JSON text (its
# quotes escaped, once or more).
_JSON_MARKERS = re.compile(rf'"(?:{"|".join(map(re.escape, (EXPORT_FORMAT, *SPEC_KEYS)))})\\*"')


class TooDeep(Exception):
    """A document nested deeper than MAX_DEPTH."""


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
        return (EXPORT_SPEC, kind) if isinstance(kind, str) and kind in kinds.KINDS else None
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
    (`find`). A file found in a folder is read only if it may hold a spec: without any
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
        sources += _found(one, document)
    if sources or not named:
        return sources
    return [replace(unparsed, document=documents[0] if documents else None)]


def _may_hold_spec(text: str, yaml_file: bool) -> bool:
    if yaml_file:
        return EXPORT_FORMAT in text or _YAML_KEYS.search(text) is not None
    return _JSON_MARKERS.search(text) is not None


def find(
    document: Any, may_embed: Callable[[str], bool] | None = None
) -> list[tuple[edits.Path, str]]:
    """Every spec (with its kind), W&B sweep config (SWEEP) and string that may hold a spec as
    JSON text (TEXT, when `may_embed` says so) in a parsed document, with its path, outermost
    first, as `plan DIR` and `check` both find them: nothing inside a spec or sweep is looked
    at again; an export file's spec sits under `spec`, its metadata walked apart. A stack, not
    recursion: any depth short of MAX_DEPTH."""
    found: list[tuple[edits.Path, str]] = []
    stack: list[tuple[edits.Path, Any]] = [((), document)]
    while stack:
        path, node = stack.pop()
        if len(path) > MAX_DEPTH:
            raise TooDeep(f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(node, dict):
            what, root = _what(node)
            if what is not None:
                found.append(((*path, *root), what))
            if what is None or root:
                stack += reversed([((*path, k), v) for k, v in node.items() if (k,) != root])
        elif isinstance(node, list):
            stack += reversed([((*path, i), item) for i, item in enumerate(node)])
        elif isinstance(node, str) and may_embed is not None and may_embed(node):
            found.append((path, TEXT))
    return found


def _what(node: dict[Any, Any]) -> tuple[str | None, edits.Path]:
    """What a mapping is (a kind's name, SWEEP, or None) and where in it that sits."""
    declared = spec_in(node) if _is_export(node) and isinstance(node.get("spec"), dict) else None
    if declared is not None:
        return declared[1], declared[0]
    # the kind `kinds.detect` tells from a shape, without the cost of its error for the many
    # subtrees that are no spec
    kind = next((name for name, known in kinds.KINDS.items() if known.matches(node)), None)
    # a W&B sweep config: a search `method` over `parameters` (its `metric` is optional)
    if kind is None and isinstance(node.get("method"), str):
        kind = SWEEP if isinstance(node.get("parameters"), dict) else None
    return kind, ()


def spec_text(text: str) -> bool:
    """Whether a string may be a spec kept as JSON text (a cheap test: none is parsed
    unless it looks like one)."""
    return _JSON_TEXT.match(text) is not None and any(marker in text for marker in SPEC_MARKERS)


def at(document: Any, path: edits.Path) -> Any:
    for part in path:
        document = document[part]
    return document


def _found(unparsed: Source, document: Any, within: edits.Path = ()) -> list[Source]:
    """The Sources of the specs in a parsed document (`within` a string of another one that
    keeps it as JSON text), found where `check` finds them; such text that does not parse is
    an object that cannot be read. An export file is its one spec, whatever its kind (one of a
    kind wbmigrate does not know is an error, never skipped)."""
    if _is_export(document):
        one, found = _named(unparsed, within), spec_in(document)
        if found is None:
            return [replace(one, error=f"an export file of unknown kind {document.get('kind')!r}")]
        name = str(document.get("displayName") or document.get("name") or one.name)
        return [replace(one, name=name, kind=found[1], root=EXPORT_SPEC, document=document)]
    try:
        found_in = find(document, spec_text)
    except TooDeep as exc:
        return [replace(_named(unparsed, within), error=str(exc))]
    sources = []
    for path, what in found_in:
        node, where = at(document, path), (*within, *path)
        if what == TEXT:
            try:
                sources += _found(unparsed, read_json(node), where)
            except Unreadable as exc:
                error = f"a spec kept as JSON text cannot be read: {exc}"
                sources.append(replace(_named(unparsed, where), error=error))
        elif path[-1:] == EXPORT_SPEC and _is_export(holder := at(document, path[:-1])):
            sources += _found(unparsed, holder, (*within, *path[:-1]))  # an export inside
        elif what != SWEEP:
            sources.append(replace(_named(unparsed, where), kind=what, document=node))
    return sources


def _named(unparsed: Source, where: edits.Path) -> Source:
    """What is found at `where` in a document, named by its place (unless it is the document)."""
    return replace(unparsed, name=f"{unparsed.name} {edits.pointer(where)}") if where else unparsed


def _is_export(document: Any) -> bool:
    return isinstance(document, dict) and document.get("wbmigrate") == EXPORT_FORMAT
