"""Which files `check` reads: the paths given, folders walked without following symlinks,
`.git` and `.gitignore`d paths and configured excludes skipped."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

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


def find_files(paths: Iterable[Path], exclude: Iterable[str] = ()) -> Iterator[Path]:
    """Every file to check, each once, in a stable order. A file named on the command line is
    checked even if ignored (as linters do); files found by walking obey ignores."""
    excluded = GitIgnoreSpec.from_lines(list(exclude))
    seen: set[Path] = set()
    for path in paths:
        for file in _walk(path, excluded) if path.is_dir() else [path]:
            key = Path(os.path.normpath(file))
            if key not in seen:
                seen.add(key)
                yield file


def _walk(root: Path, excluded: GitIgnoreSpec) -> Iterator[Path]:
    ignores = _ignores_above(root)
    project = Path.cwd().resolve()
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        real = here.resolve()  # once per folder: resolving is a system call per part
        spec = here / ".gitignore"
        if spec.is_file():
            ignores = [*ignores, (real, _read_spec(spec))]

        dirs[:] = sorted(
            d
            for d in dirs
            if d not in SKIPPED_FOLDERS
            and not _ignored(_Where(here / d, real / d, root, project), ignores, excluded, "/")
        )
        for name in sorted(files):
            path = here / name
            where = _Where(path, real / name, root, project)
            if not path.is_symlink() and not _ignored(where, ignores, excluded, ""):
                yield path


def _ignores_above(root: Path) -> list[tuple[Path, GitIgnoreSpec]]:
    """`.gitignore` files of the folders above `root`, up to the repository root."""
    found = []
    folder = root.resolve()
    for parent in [folder, *folder.parents]:
        if parent != folder and (parent / ".gitignore").is_file():
            found.append((parent, _read_spec(parent / ".gitignore")))
        if (parent / ".git").exists():
            break
    return list(reversed(found))


def _read_spec(path: Path) -> GitIgnoreSpec:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    return GitIgnoreSpec.from_lines(lines)


@dataclass(frozen=True)
class _Where:
    path: Path  # as walked
    real: Path  # in its real folder
    root: Path  # the folder being walked
    project: Path  # the current folder, resolved


def _ignored(
    where: _Where, ignores: list[tuple[Path, GitIgnoreSpec]], excluded: GitIgnoreSpec, suffix: str
) -> bool:
    """Whether a configured exclude or a `.gitignore` (`base`, resolved, and its patterns)
    ignores the path; `suffix` is "/" for a folder."""
    if excluded.patterns and excluded.match_file(_from_project(where) + suffix):
        return True
    for base, spec in ignores:
        if where.real.is_relative_to(base):
            inside = where.real.relative_to(base).as_posix() + suffix
            if spec.match_file(inside):
                return True
    return False


def _from_project(where: _Where) -> str:
    """The path as excludes see it: relative to the current folder (the project) when inside
    it, else to the folder being walked."""
    if where.real.is_relative_to(where.project):
        return where.real.relative_to(where.project).as_posix()
    return where.path.relative_to(where.root).as_posix()


def is_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB, as git decides."""
    return b"\0" in data[:8192]
