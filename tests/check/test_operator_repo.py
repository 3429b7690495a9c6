"""`check` on an operator's repository (fixtures/operator-repo): configs, launch scripts with
both flag spellings, Kubernetes, a sweep, a notebook, docs with fenced blocks, dashboards as
YAML exports with wrappers, alerts, and analysis code that reads history.

Nothing passes silently (every line that names an old key has a result), and `--fix` never
breaks a file: Python still compiles with the same identifiers (but prime-rl config keywords),
every data file still parses, a second `--fix` changes no byte, and what is left are the
warnings a person must decide.
"""

from __future__ import annotations

import io
import json
import shutil
import tokenize
import tomllib
from pathlib import Path

import pytest
import yaml
from helpers import FIXTURES

from wbmigrate import find_mapping
from wbmigrate.check.residual import occurrences
from wbmigrate.check.targets import Targets
from wbmigrate.engine.model import Options

REPO = FIXTURES / "operator-repo"
TARGETS = Targets(find_mapping("prime-rl").migration(), Options())
# What a person must still decide after `--fix`: code that reads history, identifiers, keys
# built from parts, a removed gauge that nothing replaces. (path, line) of each warning.
LEFT_AFTER_FIX = {
    ("analysis/compare.py", 6),  # KEYS is read with run.history: old runs keep the old keys
    ("analysis/compare.py", 11),  # attributes are identifiers: never renamed
    ("analysis/compare.py", 18),  # scan_history
    ("analysis/compare.py", 19),  # run.config[...]
    ("analysis/compare.py", 20),  # run.summary.get(...)
    ("analysis/compare.py", 21),  # Api().runs(filters=...)
    ("analysis/compare.py", 28),  # "off_policy/" "max": a key built from parts
    ("configs/rl.toml", 9),  # [orchestrator.sampling], moved under [orchestrator.train] by #2193
    ("notebooks/staleness.ipynb", 45),  # run.history(keys=[...]) in a cell
}


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _check(run, *args: str) -> tuple[int, list[dict]]:
    result = run("check", ".", "--format", "json", *args)
    return result.exit_code, json.loads(result.stdout)["findings"] if result.stdout else []


@pytest.fixture
def repo(tmp_path, monkeypatch):
    copy = tmp_path / "operator-repo"
    shutil.copytree(REPO, copy)
    monkeypatch.chdir(copy)
    return copy


def test_every_line_that_names_an_old_key_has_a_result(run, repo):
    _, found = _check(run)
    reported = {(f["path"], f["line"]) for f in found}
    missing = []
    for path in _files(repo):
        text = path.read_text(encoding="utf-8")
        starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        for start, _, name in occurrences(text, TARGETS):
            line = sum(1 for s in starts if s <= start)
            where = (path.relative_to(repo).as_posix(), line)
            if where not in reported:
                missing.append((*where, name))
    assert missing == []


def _identifiers(text: str) -> list[str]:
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return [t.string for t in tokens if t.type == tokenize.NAME]


def _parses(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        compile(text, str(path), "exec")  # what compileall checks, without writing .pyc files
    elif path.suffix == ".toml":
        tomllib.loads(text)
    elif path.suffix in (".yaml", ".yml"):
        list(yaml.safe_load_all(text))
    elif path.suffix in (".json", ".ipynb"):
        json.loads(text)


def test_fix_never_breaks_a_file_and_a_second_fix_changes_nothing(run, repo):
    before = {p: p.read_bytes() for p in _files(repo)}
    run("check", ".", "--fix")
    once = {p: p.read_bytes() for p in _files(repo)}
    assert once != before
    for path, data in once.items():
        _parses(path)
        if path.suffix == ".py":
            renamed = {
                (b, a)
                for b, a in zip(
                    _identifiers(before[path].decode()), _identifiers(data.decode()), strict=True
                )
                if b != a
            }
            assert renamed <= {("max_off_policy_steps", "max_staleness")}, path
    notebook = json.loads(once[repo / "notebooks/staleness.ipynb"])
    original = json.loads(before[repo / "notebooks/staleness.ipynb"])
    assert [c.get("outputs") for c in notebook["cells"]] == [
        c.get("outputs") for c in original["cells"]
    ]
    run("check", ".", "--fix")
    assert {p: p.read_bytes() for p in _files(repo)} == once


def test_after_fix_only_the_documented_warnings_are_left(run, repo):
    run("check", ".", "--fix")
    code, found = _check(run)
    assert not [f for f in found if f["level"] == "error"]
    warnings = {(f["path"], f["line"]) for f in found if f["level"] == "warning"}
    assert warnings == LEFT_AFTER_FIX
    assert code == 1
    assert _check(run, "--exit-zero")[0] == 0
