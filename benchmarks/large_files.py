"""check of one large file, without latency: its time per byte at ten times a base size against
at the base size, each above an empty file's check (interpreter start, imports), the least of a
few rounds; linear is 1.0x. A Python module with an old name on every fifth line, and a report
spec in JSON and in YAML, a tenth of its panels naming old keys. This guards the checkers
against work that grows with the square of a file: two changes once made a 20,000-line module
take 36 s instead of 4 s, and a 95 KB YAML spec 8.4 s instead of 1.0 s."""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable
from pathlib import Path

import yaml

from benchmarks.data import report
from benchmarks.measure import Row, run, wbmigrate
from benchmarks.tree import PYTHON

LIMIT = 1.2


def _python(path: Path, size: int) -> None:
    path.write_text(PYTHON.format(key="off_policy/mean") * (size // len(PYTHON)))


def _json(path: Path, size: int) -> None:
    path.write_text(json.dumps(report(random.Random(1), size), indent=2))


def _yaml(path: Path, size: int) -> None:
    path.write_text(yaml.safe_dump(report(random.Random(1), size)))


# kind: (file name, writer, base size in the writer's terms; the large file is ten times it)
KINDS: dict[str, tuple[str, Callable[[Path, int], None], int]] = {
    "Python module": ("helpers.py", _python, 40_000),
    "JSON spec": ("report.json", _json, 100_000),
    "YAML spec": ("report.yaml", _yaml, 40_000),
}


def rows(rounds: int, quick: bool) -> list[Row]:
    scale = 0.05 if quick else 1.0
    with tempfile.TemporaryDirectory() as folder:
        empty = Path(folder) / "empty.py"
        empty.write_text("")
        start = _least(empty, rounds)
        return [_row(kind, Path(folder), scale, start, rounds) for kind in KINDS]


def _row(kind: str, folder: Path, scale: float, start: float, rounds: int) -> Row:
    name, write, base = KINDS[kind]
    files = [folder / f"{size}-{name}" for size in ("base", "large")]
    for path, size in zip(files, (base, 10 * base), strict=True):
        write(path, int(size * scale))
    small, large = (max(_least(path, rounds) - start, 1e-3) for path in files)
    sizes = [path.stat().st_size for path in files]
    ratio = (large / sizes[1]) / (small / sizes[0])
    return Row(
        f"0 ms: check time per byte, one {kind} of {_kb(sizes[1])} vs {_kb(sizes[0])}: <= {LIMIT}x",
        f"{ratio:.2f}x ({large:.2f} s vs {small:.2f} s above an empty file's {start:.2f} s)",
        ratio <= LIMIT,
    )


def _least(path: Path, rounds: int) -> float:
    """The least seconds of `check PATH --format json` (exit 1: old names found) of `rounds`."""
    codes = (0, 1)  # an empty file has none
    return min(
        run(wbmigrate("check", str(path), "--format", "json"), codes=codes) for _ in range(rounds)
    )


def _kb(size: int) -> str:
    return f"{size / 1000:,.0f} KB"
