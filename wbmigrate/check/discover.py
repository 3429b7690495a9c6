"""Which files `check` reads: the paths given, folders walked without following symlinks,
`.git` and `.gitignore`d paths and configured excludes skipped."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
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
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        spec = here / ".gitignore"
        if spec.is_file():
            ignores = [*ignores, (here, _read_spec(spec))]
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in SKIPPED_FOLDERS
            and not _ignored(here / d, ignores, excluded, root, is_dir=True)
        )
        for name in sorted(files):
            path = here / name
            if not path.is_symlink() and not _ignored(path, ignores, excluded, root):
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


def _ignored(
    path: Path,
    ignores: list[tuple[Path, GitIgnoreSpec]],
    excluded: GitIgnoreSpec,
    root: Path,
    is_dir: bool = False,
) -> bool:
    suffix = "/" if is_dir else ""
    if excluded.match_file(_from_project(path, root) + suffix):
        return True
    resolved = path.resolve() if is_dir else path.parent.resolve() / path.name
    for base, spec in ignores:
        try:
            inside = resolved.relative_to(base.resolve()).as_posix() + suffix
        except ValueError:
            continue
        if spec.match_file(inside):
            return True
    return False


def _from_project(path: Path, root: Path) -> str:
    """The path as excludes see it: relative to the current folder (the project) when inside
    it, else to the folder being walked."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.relative_to(root).as_posix()


def is_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB, as git decides."""
    return b"\0" in data[:8192]
