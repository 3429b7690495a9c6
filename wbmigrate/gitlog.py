"""A git repository read through `git` itself, for `mappings infer`: the main line's commits, the
files each one changed, and files' text at a commit. Plumbing only (`log`, `cat-file`, `grep`):
no checkout, no change to the working tree or the index, every answer bounded in size and time.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import os
import re
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from wbmigrate.errors import WbmigrateError

MAX_OUTPUT = 256 * 1024 * 1024  # one git answer; a larger one is refused, never read whole
MAX_FILE = 2 * 1024 * 1024  # a larger source file is skipped (generated code, data)
TIMEOUT = 600.0  # seconds one git command may take
_PULL = re.compile(r"\(#(\d+)\)\s*$")


class GitError(WbmigrateError):
    """git is missing, a revision is unknown, or an answer was too large."""


@dataclass(frozen=True)
class Commit:
    """One commit of the main line: its first parent, the day it was committed (for a squash
    or merge commit, the day the pull request merged) and the files it changed."""

    rev: str
    parent: str | None
    date: dt.date
    subject: str
    files: tuple[str, ...]

    @property
    def pull(self) -> int | None:
        """The pull request from `(#1234)` at the end of the subject, GitHub's merge style."""
        found = _PULL.search(self.subject)
        return int(found[1]) if found else None


def git(repo: Path, *args: str, stdin: bytes = b"", ok: tuple[int, ...] = (0,)) -> bytes:
    """The output of `git -C repo ARGS`; GitError with git's own first line when it exits with
    a code not in `ok`."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
    command = ["git", "-C", str(repo), *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:  # to files, not pipes: the size is checked without reading it all into memory
            done = subprocess.run(
                command, input=stdin, stdout=out, stderr=err, env=env, timeout=TIMEOUT
            )
        except FileNotFoundError:
            raise GitError("git is not installed or not on PATH") from None
        except subprocess.TimeoutExpired:
            raise GitError(f"git {args[0]} took longer than {TIMEOUT:.0f} s") from None
        if done.returncode not in ok:
            err.seek(0)
            first = err.read(2000).decode("utf-8", "replace").strip().splitlines()
            raise GitError(f"git {args[0]} failed: {first[0] if first else 'no message'}")
        if out.tell() > MAX_OUTPUT:
            raise GitError(f"git {args[0]} answered more than {MAX_OUTPUT} bytes")
        out.seek(0)
        return out.read()


def resolve(repo: Path, rev: str) -> str:
    """The full hash of a revision; GitError naming it if the repository has no such commit."""
    if not Path(repo).is_dir():
        raise GitError(f"{repo} is not a folder")
    if rev.startswith("-"):
        raise GitError(f"not a revision: {rev!r}")
    found = git(Path(repo), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", ok=(0, 1))
    if not found.strip():  # not a repository is exit 128, with git's own message
        raise GitError(f"{repo} has no commit {rev!r}")
    return found.decode().strip()


def main_line(repo: Path, start: str, to: str) -> list[Commit]:
    """The commits from `start` (included) to `to` along `to`'s first parents, oldest first."""
    first, last = resolve(repo, start), resolve(repo, to)
    line = ["--first-parent", "--reverse", "--diff-merges=first-parent", "--name-only"]
    # --no-renames: a rename is a file removed and one added; detecting it reads blobs
    listing = ["--no-renames", "-z", "--format=%x01%H %P%x1f%cs%x1f%s"]
    raw = git(repo, "log", *line, *listing, last, "--not", f"{first}^@", "--")
    # each commit starts at \x01 and its hash: a subject or a file name may hold \x01 too
    chunks = re.split(r"\x01(?=[0-9a-f]{40})", raw.decode("utf-8", "replace"))
    commits = [_commit(chunk) for chunk in chunks[1:]]
    if not commits or commits[0].rev != first:
        raise GitError(f"{start} is not on the first-parent line of {to}")
    return commits


def _commit(chunk: str) -> Commit:
    header, _, names = chunk.partition("\0\n")  # -z: the header ends with NUL, newline
    revs, date, subject = header.split("\x1f", 2)
    rev, *parents = revs.split()
    files = tuple(name for name in names.split("\0") if name)
    return Commit(rev, parents[0] if parents else None, dt.date.fromisoformat(date), subject, files)


def read_files(repo: Path, wanted: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The UTF-8 text of each (rev, path) that exists; missing, binary or larger than MAX_FILE
    ones are left out. One `git cat-file --batch` for all of them."""
    asked = [(rev, path) for rev, path in wanted if "\n" not in path]
    if not asked:
        return {}
    stdin = "".join(f"{rev}:{path}\n" for rev, path in asked).encode()
    answer = io.BytesIO(git(repo, "cat-file", "--batch", stdin=stdin))
    found: dict[tuple[str, str], str] = {}
    for key in asked:
        # `<oid> <type> <size>`, or `<name> missing` (a name may hold spaces)
        *_, kind, size = answer.readline().split()
        if not size.isdigit():
            continue
        body = answer.read(int(size) + 1)[:-1]  # and the newline after it
        if kind == b"blob" and len(body) <= MAX_FILE:
            with contextlib.suppress(UnicodeDecodeError):
                found[key] = body.decode("utf-8")
    return found


def mentioned(repo: Path, rev: str, words: Iterable[str]) -> set[str]:
    """Which of `words` occur quoted (`"word"` or `'word'`) in any Python file at `rev`. The
    patterns go on stdin: as arguments, many of them would pass the system's limit."""
    patterns = "".join(f"{q}{word}{q}\n" for word in words for q in "\"'")
    if not patterns:
        return set()
    grep = ["grep", "-F", "-h", "-o", "-I", "-f", "-", rev, "--", "*.py"]
    raw = git(repo, *grep, stdin=patterns.encode(), ok=(0, 1))
    return {line[1:-1] for line in raw.decode("utf-8", "replace").splitlines()}
