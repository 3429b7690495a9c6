"""Dashboards as code on disk: the export-file format, and finding and reading spec files.

An export file (`wbmigrate export`) is a JSON document of the object's metadata with its
parsed spec under `spec`; a raw spec file is the spec alone, its kind told by its shape. Both
`plan DIR` and `check` read them through `spec_in`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wbmigrate import kinds
from wbmigrate.errors import WbmigrateError
from wbmigrate.plan import Source
from wbmigrate.rewrite import too_big

EXPORT_FORMAT = "wbmigrate-export/1"
EXPORT_SPEC = ("spec",)  # where an export document holds the spec
SPEC_SUFFIXES = (".json",)


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


def spec_paths(target: Path) -> list[Path]:
    """The spec files of a target: the file itself, or every JSON file under the folder
    (hidden folders such as .git skipped), in a stable order."""
    if target.is_file():
        return [target]
    if not target.is_dir():
        raise WbmigrateError(f"{target}: no such file or folder")
    return sorted(
        path
        for path in target.rglob("*")
        if path.suffix in SPEC_SUFFIXES
        and path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(target).parts)
    )


def read_sources(target: Path) -> Iterator[Source]:
    """One Source per spec file; one that cannot be read carries the reason instead."""
    for path in spec_paths(target):
        try:
            refused = too_big(path.stat().st_size)
            if refused:
                yield Source(name=path.stem, origin=str(path), error=f"not read: {refused}")
                continue
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            yield Source(name=path.stem, origin=str(path), error="not UTF-8 text")
        except OSError as exc:
            yield Source(name=path.stem, origin=str(path), error=exc.strerror or str(exc))
        else:
            yield _source(path, text)


def _source(path: Path, text: str) -> Source:
    """A raw spec file, or an export file (told by its first bytes, so a raw spec is parsed
    only once, when it is planned)."""
    if EXPORT_FORMAT in text[:200]:
        try:
            document = json.loads(text)
        except ValueError:
            document = None
        found = spec_in(document)
        if found is not None and found[0] == EXPORT_SPEC:
            name = document.get("displayName") or document.get("name") or path.stem
            return Source(
                name=str(name), origin=str(path), text=text, kind=found[1], root=EXPORT_SPEC
            )
    return Source(name=path.stem, origin=str(path), text=text)
