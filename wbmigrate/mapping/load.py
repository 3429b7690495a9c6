"""Mapping files by id or path: the bundled ones, and one file read and validated."""

from __future__ import annotations

import errno
import functools
import os
import stat
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from wbmigrate.errors import WbmigrateError
from wbmigrate.mapping import MappingError, Problem

if TYPE_CHECKING:
    from wbmigrate.mapping.file import Mapping


def load_mapping(path: str | Path) -> Mapping:
    """Load and validate one mapping file; raise MappingError with every located error."""
    path = Path(path)
    try:
        raw = _read(path)
    except OSError as exc:
        raise WbmigrateError(f"cannot read mapping {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise MappingError(
            [Problem((), "encoding", "mapping is not UTF-8 text").at(str(path), 1)]
        ) from None
    return _parsed(text, str(path))


def _read(path: Path) -> bytes:
    """The file's bytes. Opened without blocking and checked on the open file: a FIFO or a
    device where a mapping file should be is refused, never waited on (`safe_write.read_file`
    does the same for every other file; the core does not import it)."""
    with open(path, "rb", opener=lambda name, flags: os.open(name, flags | os.O_NONBLOCK)) as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        return file.read()


# A Mapping is a pure function of its text, and frozen: one process parsing the same file again
# (the test suite runs some 2,000 commands in one process) reuses it, and with it every
# Migration it composed. Parsing and composing the whole-history prime-rl mapping takes about
# 0.1 s a command; with `check.targets.targets_for` this took the suite from 293 s
# to 200 s on 2 cores.
@functools.lru_cache(maxsize=8)
def _parsed(text: str, file: str) -> Mapping:
    from wbmigrate.mapping.parse import parse_mapping

    return parse_mapping(text, file)


def bundled_dir() -> Path:
    """The folder of mappings shipped with wbmigrate.

    An installed wheel carries them inside the package; a source checkout (or an editable
    install) has them at the repository root.
    """
    packaged = Path(str(resources.files("wbmigrate"))) / "data" / "mappings"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "mappings"


def is_bundled(mapping: Mapping) -> bool:
    """Whether `mapping` is one wbmigrate ships: its warnings were reviewed when it was bundled
    (tests pin them), so they are not repeated to every user of it."""
    return mapping.path is not None and mapping.path.parent == bundled_dir()


def bundled_ids() -> list[str]:
    return sorted(path.stem for path in bundled_dir().glob("*.yaml"))


def find_mapping(id_or_path: str | Path) -> Mapping:
    """A bundled mapping by id, or a mapping file by path."""
    as_path = Path(id_or_path)
    if as_path.is_file():
        return load_mapping(as_path)
    if str(id_or_path) in bundled_ids():
        return load_mapping(bundled_dir() / f"{id_or_path}.yaml")
    known = ", ".join(bundled_ids()) or "none"
    raise WbmigrateError(
        f"unknown mapping {str(id_or_path)!r}: not a file, and not a bundled mapping "
        f"(bundled: {known})"
    )
