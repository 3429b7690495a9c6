"""The one way wbmigrate writes a file: into a new temporary file beside it (a name no one can
predict, created exclusively), synced, then renamed over the target. A reader never sees half a
file, and a run that stops midway leaves the old file, or none, in place. (A cache, which a
reader takes as empty when it is damaged, is not synced: after a power cut it may be lost.)

A symbolic link is never written through or replaced, and a file that changed since it was read
(its size, time or content) is not overwritten: both are refused with `UnsafeWrite`, for that
file alone. Everything written passes through the redactor.

Every file wbmigrate reads (a file `check` reads, the census cache, a saved plan, a backup) is
read by `read_file`: opened without blocking, read only if it is a regular file, and only up
to a size bound, so a FIFO or device put in a file's place is refused, never waited on.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from wbmigrate.errors import WbmigrateError
from wbmigrate.redact import redact


class UnsafeWrite(WbmigrateError):
    """A write refused: the target is a link, or it changed since it was read."""


class NotRead(OSError):
    """A file refused by `read_file`; `strerror` says why, and so does the message."""

    def __str__(self) -> str:
        return str(self.strerror)


class TooBig(NotRead):
    """A file over the size bound of `read_file`."""


READ_LIMIT = 256 * 1024 * 1024  # wbmigrate's own files (plans, backups) never come near it
MB = 1024 * 1024
KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
}


def kind(mode: int) -> str:
    """What a file that is not a regular file is, as a message says it."""
    return KINDS.get(stat.S_IFMT(mode), "a special file")


def read_file(
    path: Path, limit: int = READ_LIMIT, follow: bool = True
) -> tuple[bytes, os.stat_result]:
    """A regular file's bytes and its status. Opened without blocking (a FIFO never waits
    for a writer) and checked on the open file, so what is read is what was checked; with
    `follow=False` a symbolic link is refused too. `NotRead` (an OSError) for anything but a
    regular file of at most `limit` bytes, which is all that is ever read."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise NotRead(errno.ELOOP, "a symbolic link; not followed", str(path)) from None
        raise
    with os.fdopen(fd, "rb") as file:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            reason = f"{kind(status.st_mode)} is not a regular file"
            raise NotRead(errno.EINVAL, reason, str(path))
        # as much as it holds, not `limit` at once: a buffer of `limit` bytes for each file
        # was two thirds of reading the check benchmark's 5,000 files (0.28 s of CPU; 0.09 s now)
        data = file.read(status.st_size + 1) if status.st_size <= limit else b""
        if len(data) > status.st_size:  # it grew since: read on, as far as `limit` allows
            data += file.read(limit + 1 - len(data))
    size = max(status.st_size, len(data))
    if size > limit:  # said as `rewrite.too_big` says it
        reason = f"{size / MB:.1f} MB, over the {limit // MB} MB wbmigrate reads"
        raise TooBig(errno.EFBIG, reason, str(path))
    return data, status


@dataclass(frozen=True)
class Stamp:
    """What a file was when it was read: a write over it checks it still is."""

    size: int
    mtime_ns: int
    sha256: str

    @classmethod
    def of(cls, data: bytes, mtime_ns: int) -> Stamp:
        return cls(len(data), mtime_ns, hashlib.sha256(data).hexdigest())

    def holds(self, path: Path) -> bool:
        try:
            status = path.stat()
            if (status.st_size, status.st_mtime_ns) == (self.size, self.mtime_ns):
                return True  # unchanged by size and time; the hash settles a touched file
            return hashlib.sha256(read_file(path)[0]).hexdigest() == self.sha256
        except OSError:
            return False


# The umask is read by setting it, so once, while imports run on one thread.
_UMASK = os.umask(0o022)
os.umask(_UMASK)
DEFAULT_MODE = 0o666 & ~_UMASK
PRIVATE_MODE = 0o600


class SafeFile:
    """A file being written: `write` text, then `commit` (it takes its name) or `discard`; as
    a context manager, committed when the block ends, discarded if it raises."""

    def __init__(
        self, path: Path, mode: int | None = None, read: Stamp | None = None, sync: bool = True
    ) -> None:
        self.path = path
        self._read = read
        self._sync = sync
        _refuse_link(path)
        self._mode = _mode_for(path) if mode is None else mode
        try:
            fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        except OSError as exc:  # no such folder, no permission: one line, for this file
            raise UnsafeWrite(f"{path}: cannot write there ({exc.strerror or exc})") from None
        self._temporary = Path(name)
        self._file: TextIO = os.fdopen(fd, "w", encoding="utf-8", newline="")

    def write(self, text: str) -> None:
        self._file.write(redact(text))

    def commit(self) -> None:
        self._file.flush()
        if self._sync:
            os.fsync(self._file.fileno())
        os.fchmod(self._file.fileno(), self._mode)
        self._file.close()
        try:
            _refuse_link(self.path)
            if self._read is not None and not self._read.holds(self.path):
                raise UnsafeWrite(f"{self.path}: changed since wbmigrate read it; not overwritten")
        except UnsafeWrite:
            self._temporary.unlink(missing_ok=True)
            raise
        os.replace(self._temporary, self.path)

    def discard(self) -> None:
        self._file.close()
        self._temporary.unlink(missing_ok=True)

    def __enter__(self) -> SafeFile:
        return self

    def __exit__(self, error: type[BaseException] | None, *_: object) -> None:
        if error is None:
            self.commit()
        else:
            self.discard()


def write_text(
    path: Path, text: str, mode: int | None = None, read: Stamp | None = None, sync: bool = True
) -> None:
    """Write `text` to `path` safely; `mode` defaults to the file's own, or the umask's; with
    `read`, only if the file is still as it was read; `sync=False` for a cache only."""
    with SafeFile(path, mode, read, sync) as file:
        file.write(text)


def _refuse_link(path: Path) -> None:
    if path.is_symlink():
        raise UnsafeWrite(f"{path}: a symbolic link; wbmigrate never writes through one")


def _mode_for(path: Path) -> int:
    """A replaced file keeps its permissions; a new one gets what the umask allows."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return DEFAULT_MODE
