"""Which files a command reads, for `check` and `plan DIR` alike: the paths given, folders walked
without following symlinks, `.git` and `.gitignore`d paths and configured excludes skipped.

Only regular files are ever opened. Found by walking, a symlink, FIFO, socket or device is
skipped without a word (opening a FIFO would wait forever for a writer). Named on the command
line, a FIFO, socket or device is refused, and so is a symlink whose target lies outside the
tree of the paths given (a fix would otherwise write outside it): one line on stderr says
it was skipped. A symlink whose target is inside that
tree is read, and fixed, at its target, so the link stays a link.

`.gitignore` files are obeyed as git obeys them (`wbmigrate.gitignore`): the deepest one with
a pattern matching a path decides, and a folder git ignores is never entered, so nothing
under it is re-included.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from wbmigrate.gitignore import GitIgnore
from wbmigrate.safe_write import kind, read_file

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

IGNORE_LIMIT = 8 * 1024 * 1024  # a .gitignore bigger than that is not read (it ignores nothing)
SKIPPED_FOLDERS = {
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
}
Ignores = list[tuple[Path, GitIgnore]]  # (the folder of a .gitignore, resolved; its rules)
_Ignored = Callable[[Path, Path, Ignores, str], bool]


def find_files(
    paths: Iterable[Path], exclude: Iterable[str] = (), *, force_exclude: bool = False
) -> Iterator[Path]:
    """Every file to read, each once, in a stable order: each path in the order given, a
    folder's files before its subfolders, both by name.

    A file named on the command line is read even if ignored (as linters do), unless
    `force_exclude`: then the configured excludes (not `.gitignore`) apply to it too, as ruff's
    `--force-exclude` does, so a pre-commit hook that passes every staged file agrees with
    `check .`. Files found by walking always obey both."""
    given = list(paths)
    excluded = _spec(list(exclude))
    project = Path.cwd().resolve()
    tree = _tree(given)
    seen: set[str] = set()
    for path in given:
        if force_exclude and _named_excluded(path, excluded, project):
            continue
        for file in _files_of(path, excluded, project, tree):
            key = os.path.normpath(file)
            if key not in seen:
                seen.add(key)
                yield file


def _files_of(
    path: Path, excluded: GitIgnoreSpec | None, project: Path, tree: Path
) -> Iterator[Path]:
    """The files of one path given on the command line."""
    try:
        mode = path.stat().st_mode
    except OSError:  # gone, a dangling link, no permission: reading it says why, as a finding
        yield path
        return
    if stat.S_ISDIR(mode):
        yield from _walk(path, excluded, project)
    elif not stat.S_ISREG(mode):
        _refuse(path, f"{kind(mode)} is not a regular file; not read")
    elif path.is_symlink():
        target = path.resolve()
        if target.is_relative_to(tree):  # shown as the user would write it
            yield target.relative_to(project) if target.is_relative_to(project) else target
        else:
            reason = f"a symlink to {target}, outside {tree}; not read, never fixed through it"
            _refuse(path, reason)
    else:
        yield path


def _refuse(path: Path, reason: str) -> None:
    """A path named on the command line that is not read: one line on stderr, and the run
    goes on."""
    sys.stderr.write(f"wbmigrate: {path}: skipped: {reason}\n")


def refusal(path: Path) -> str | None:
    """Why a path named on the command line must not be opened (a FIFO, socket or device), or
    None for a regular file, a folder or a path that cannot be looked at."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return None
    return f"{kind(mode)} is not a regular file"


def _tree(given: list[Path]) -> Path:
    """The deepest folder holding every path given (a file stands for its folder), resolved:
    a named symlink may lead anywhere inside it, and nowhere else."""
    folders = []
    for path in given:
        try:
            is_dir = path.is_dir() and not path.is_symlink()
        except OSError:
            is_dir = False
        folder = path if is_dir else path.absolute().parent
        folders.append(str(folder.resolve()))
    return Path(os.path.commonpath(folders)) if folders else Path.cwd().resolve()


def _named_excluded(path: Path, excluded: GitIgnoreSpec | None, project: Path) -> bool:
    """Whether `--force-exclude` drops a path named on the command line: a configured exclude
    matches it or a folder above it, or it lies in a folder that is never read (`.git`)."""
    real = path.absolute()
    inside = real.relative_to(project) if real.is_relative_to(project) else Path(path.name)
    folder = path.is_dir()
    if any(part in SKIPPED_FOLDERS for part in inside.parts[: None if folder else -1]):
        return True
    if excluded is None or not excluded.patterns:
        return False
    return excluded.match_file(inside.as_posix() + ("/" if folder else ""))


# --- walking ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Folder:
    path: Path  # as walked
    real: Path  # resolved once per folder: resolving is a system call per part
    ignores: Ignores  # the .gitignore files that apply inside it


def _walk(root: Path, excluded: GitIgnoreSpec | None, project: Path) -> Iterator[Path]:
    """Regular files under `root`, depth first; symlinks and special files are skipped, read
    from their directory entries alone (no file is opened to find out what it is)."""
    ignored = _ignoring(root, project, excluded)
    real, above = root.resolve(), _ignores_above(root)
    stack = [] if _in_ignored_folder(real, above) else [_Folder(root, real, above)]
    while stack:
        folder = stack.pop()
        entries = _entries(folder.path)
        ignores = folder.ignores
        gitignore = entries.get(".gitignore")
        if gitignore is not None and gitignore.is_file(follow_symlinks=False):
            rules = _read_rules(Path(gitignore.path))
            ignores = [*ignores, (folder.real, rules)] if rules is not None else ignores
        filtered = bool(ignores) or excluded is not None  # else no path needs resolving
        subfolders = []
        for name in sorted(entries):
            entry, path = entries[name], folder.path / name
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                real = folder.real / name
                if name not in SKIPPED_FOLDERS and not ignored(path, real, ignores, "/"):
                    subfolders.append(_Folder(path, real, ignores))
            elif entry.is_file(follow_symlinks=False) and not (
                filtered and ignored(path, folder.real / name, ignores, "")
            ):
                yield path
        stack.extend(reversed(subfolders))


def _entries(folder: Path) -> dict[str, os.DirEntry[str]]:
    """A folder's entries by name; none if it cannot be listed (as `os.walk` skips it)."""
    try:
        with os.scandir(folder) as found:
            return {entry.name: entry for entry in found}
    except OSError:
        return {}


def _ignores_above(root: Path) -> Ignores:
    """`.gitignore` files of the folders above `root`, up to the repository root."""
    found = []
    folder = root.resolve()
    for parent in [folder, *folder.parents]:
        spec = parent / ".gitignore"
        if parent != folder and spec.is_file() and not spec.is_symlink():
            rules = _read_rules(spec)
            if rules is not None:
                found.append((parent, rules))
        if (parent / ".git").exists():
            break
    return list(reversed(found))


def _read_rules(path: Path) -> GitIgnore | None:
    try:
        return GitIgnore.parse(read_file(path, IGNORE_LIMIT, follow=False)[0])
    except OSError:  # an unreadable .gitignore ignores nothing
        return None


def _spec(lines: list[str]) -> GitIgnoreSpec | None:
    """The rules of gitignore-style lines; None for none (pathspec is imported only for some)."""
    if not lines:
        return None
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines(lines)


def _ignoring(root: Path, project: Path, excluded: GitIgnoreSpec | None) -> _Ignored:
    """Whether a configured exclude or a `.gitignore` ignores a path met walking `root`:
    `path` as walked, `real` in its real folder; `suffix` is "/" for a folder. Excludes see the
    path relative to the project when it is inside, else to the folder walked; a `.gitignore`,
    relative to its own folder (resolved)."""

    def ignored(path: Path, real: Path, ignores: Ignores, suffix: str) -> bool:
        if excluded is not None and excluded.patterns:
            inside = path.relative_to(root)  # (a path walked from `root`)
            if real.is_relative_to(project):
                inside = real.relative_to(project)
            if excluded.match_file(inside.as_posix() + suffix):
                return True
        return _git_ignored(real, ignores, suffix == "/")

    return ignored


def _in_ignored_folder(real: Path, ignores: Ignores) -> bool:
    """Whether git ignores the folder `real` or a folder above it (git never looks inside one,
    so neither does a walk that starts there)."""
    if not ignores:
        return False
    top = ignores[0][0]
    chain = [f for f in [*reversed(real.parents), real] if f != top and f.is_relative_to(top)]
    return any(_git_ignored(f, [(b, r) for b, r in ignores if b in f.parents], True) for f in chain)


def _git_ignored(real: Path, ignores: Ignores, folder: bool) -> bool:
    """Git's verdict on a path: the deepest .gitignore with a pattern matching it decides."""
    for base, rules in reversed(ignores):
        if real.is_relative_to(base):
            relative = os.fsencode(real.relative_to(base)).decode("latin-1")
            verdict = rules.verdict(relative, folder)
            if verdict is not None:
                return verdict
    return False


def is_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB, as git decides."""
    return b"\0" in data[:8192]
