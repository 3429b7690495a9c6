"""The one way wbmigrate writes a file: into a new temporary file beside it (a name no one can
predict, created exclusively), synced, then renamed over the target. A reader never sees half a
file, and a run that stops midway leaves the old file, or none, in place."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


DEFAULT_MODE = 0o666 & ~_umask()  # read once, while imports run on one thread
PRIVATE_MODE = 0o600


class SafeFile:
    """A file being written: `write` text, then `commit` (it takes its name) or `discard`."""

    def __init__(self, path: Path, mode: int | None = None) -> None:
        self.path = path
        self._mode = _mode_for(path) if mode is None else mode
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        self._temporary = Path(name)
        self._file: TextIO = os.fdopen(fd, "w", encoding="utf-8", newline="")

    def write(self, text: str) -> None:
        self._file.write(text)

    def commit(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())
        os.fchmod(self._file.fileno(), self._mode)
        self._file.close()
        os.replace(self._temporary, self.path)

    def discard(self) -> None:
        self._file.close()
        self._temporary.unlink(missing_ok=True)


@contextmanager
def safe_file(path: Path, mode: int | None = None) -> Iterator[SafeFile]:
    """A SafeFile committed when the block ends, discarded if it raises."""
    file = SafeFile(path, mode)
    try:
        yield file
    except BaseException:
        file.discard()
        raise
    file.commit()


def write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Write `text` to `path` safely; `mode` defaults to the file's own, or the umask's."""
    with safe_file(path, mode) as file:
        file.write(text)


def _mode_for(path: Path) -> int:
    """A replaced file keeps its permissions; a new one gets what the umask allows."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return DEFAULT_MODE
