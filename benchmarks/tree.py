"""check: `wbmigrate check TREE --format json` over a 5,000-file tree, one file in ten
with old names, against a process that walks the tree, reads every file and parses the JSON
ones. Interpreter start is in both."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

from benchmarks.data import report
from benchmarks.measure import Row, alternate, at_most, floor, run, wbmigrate

PYTHON = (
    '"""Training helpers."""\nimport wandb\n\n'
    'def log(run, value):\n    run.log({{"{key}": value}})\n'
)
TOML = "[orchestrator]\nbatch_size = 512\n{key} = 8\n"
SHELL = "#!/usr/bin/env bash\nuv run rl @ rl.toml {flag} 8\n"


def make_tree(root: Path, files: int, seed: int = 3) -> None:
    """JSON specs (half the files, 2-40 KB), Python, TOML, shell and Markdown; 10% hold old
    names."""
    rng = random.Random(seed)
    for i in range(files):
        folder = root / f"team{i % 20}" / f"part{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        old = rng.random() < 0.1
        kind = rng.choice(["json", "json", "json", "json", "json", "py", "py", "toml", "sh", "md"])
        if kind == "json":
            spec = report(rng, rng.randint(2_000, 40_000), old_share=0.1 if old else 0.0)
            (folder / f"report{i}.json").write_text(json.dumps(spec, indent=2))
        elif kind == "py":
            key = "off_policy/mean" if old else "train/loss"
            (folder / f"helpers{i}.py").write_text(PYTHON.format(key=key) * rng.randint(5, 40))
        elif kind == "toml":
            key = "max_off_policy_steps" if old else "max_steps"
            (folder / f"config{i}.toml").write_text(TOML.format(key=key))
        elif kind == "sh":
            flag = "--orchestrator.max-off-policy-steps" if old else "--orchestrator.batch-size"
            (folder / f"run{i}.sh").write_text(SHELL.format(flag=flag))
        else:
            (folder / f"notes{i}.md").write_text("# Notes\n\nNothing to see.\n" * 20)


def check_rows(files: int, rounds: int) -> list[Row]:
    """`check --format json` (exit 1: old names found, as they are) against the floor."""
    with tempfile.TemporaryDirectory() as folder:
        make_tree(Path(folder), files)
        timed = alternate(
            lambda: run(wbmigrate("check", folder, "--format", "json"), codes=(1,)),
            lambda: run(floor("check.py", folder)),
            rounds,
        )
    return [at_most(f"check {files:,} files (10% with old names), json, vs floor:", timed, 1.5)]
