"""Dashboards as code on disk: find spec files under a folder and read them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from wbmigrate.errors import WbmigrateError
from wbmigrate.live.export import FORMAT as EXPORT_FORMAT
from wbmigrate.plan import Source
from wbmigrate.rewrite import too_big

SPEC_SUFFIXES = (".json",)


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
    """A raw spec file, or a `wbmigrate export` file (metadata around the spec)."""
    if EXPORT_FORMAT in text[:200]:
        try:
            document = json.loads(text)
        except ValueError:
            document = None
        if isinstance(document, dict) and document.get("wbmigrate") == EXPORT_FORMAT:
            name = document.get("displayName") or document.get("name") or path.stem
            return Source(
                name=str(name),
                origin=str(path),
                text=text,
                kind=document.get("kind"),
                root=("spec",),
            )
    return Source(name=path.stem, origin=str(path), text=text)
