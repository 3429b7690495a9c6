"""`check` over named cases in fixtures/check-cases/<file kind>/<case>/.

Each case holds one input file: `input.<ext>`, whose extension decides how `check` reads it, or
a file `check` knows by its name (`Makefile`). `case.yaml` says what the case is about
(`about:`) and may set `mode: replace`, and `mapping:` (a mapping file under fixtures/, instead
of the bundled prime-rl mapping). `findings.txt` holds every finding, one a line
(`LINE:COL RULE MESSAGE`, then ` [*]` when `--fix` changes it; empty: none), and `fixed.<ext>`
(`fixed.Makefile`) the file after `--fix`, absent when nothing is fixable. Every fixed file is
also checked again (no fixable finding is left, the findings left are the unfixable ones, and a
second fix changes no byte), and a fixed Python, JSON, YAML, TOML or notebook file must still
parse (a notebook with the same cells and outputs).

A case whose right output `check` does not give yet has `xfail: <the bug>` in case.yaml and
expectations written by hand: its `test_case` is expected to fail (strictly), its other tests
still run.

To record new expectations after a deliberate change, run
`WBMIGRATE_UPDATE_FIXTURES=1 pytest tests/check/test_check_cases.py` and review the diff (cases
marked `xfail` are left as they are).
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest
import yaml
from helpers import FIXTURES

from wbmigrate import find_mapping
from wbmigrate.check.model import FileReport, Finding
from wbmigrate.check.run import check_file
from wbmigrate.check.suppress import Ignores
from wbmigrate.check.targets import Targets, targets_for
from wbmigrate.engine.model import Mode, Options
from wbmigrate.mapping.load import load_mapping

ROOT = FIXTURES / "check-cases"
META = ("case.yaml", "findings.txt")
CASES = sorted(p for p in ROOT.glob("*/*") if p.is_dir())
MIGRATION = find_mapping("prime-rl").migration()
UPDATE = os.environ.get("WBMIGRATE_UPDATE_FIXTURES") == "1"
KINDS = {
    "ci",
    "dockerfile",
    "json",
    "k8s",
    "makefile",
    "markdown",
    "notebook",
    "python",
    "sbatch",
    "shell",
    "suppression",
    "sweep",
    "toml",
    "yaml",
}


def config(case: Path) -> dict[str, str]:
    path = case / "case.yaml"
    found = yaml.safe_load(path.read_text()) if path.exists() else None
    return found if isinstance(found, dict) else {}


def input_file(case: Path) -> Path:
    """The one file of a case that is neither its settings nor an expectation."""
    found = [
        p
        for p in case.iterdir()
        if p.is_file() and p.name not in META and not p.name.startswith("fixed.")
    ]
    assert len(found) == 1, f"{case}: one input file expected, not {sorted(p.name for p in found)}"
    return found[0]


def fixed_file(case: Path) -> Path:
    source = input_file(case)
    return case / ("fixed" + source.suffix if source.stem == "input" else f"fixed.{source.name}")


def targets(case: Path) -> Targets:
    mapping = config(case).get("mapping")
    migration = load_mapping(FIXTURES / mapping).migration() if mapping else MIGRATION
    return targets_for(migration, Options(mode=Mode(config(case).get("mode", "dual"))))


def check(case: Path, data: bytes | str, folder: Path) -> FileReport:
    """Check `data` (the file's bytes, or a text to write as UTF-8) as the case's input, named
    by its bare file name (the current folder is `folder`, so findings carry no temporary
    path)."""
    name = Path(input_file(case).name)
    (folder / name).write_bytes(data.encode() if isinstance(data, str) else data)
    report = check_file(name, targets(case), Ignores(), fixes=True)
    assert report is not None, f"check does not read {name}"
    return report


def describe(findings: tuple[Finding, ...]) -> str:
    return "".join(
        f"{f.line}:{f.column} {f.rule.value} {f.message}{' [*]' if f.fixable else ''}\n"
        for f in findings
    )


def case_id(case: Path) -> str:
    return f"{case.parent.name}/{case.name}"


def _expected(case: Path) -> object:
    """A case; one whose expectations a known bug breaks is marked xfail (strict)."""
    reason = config(case).get("xfail")
    marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)] if reason else []
    return pytest.param(case, marks=marks, id=case_id(case))


EXPECTED = [_expected(case) for case in CASES]
FIXED = [case for case in CASES if fixed_file(case).exists()]


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def expected_fixed(case: Path) -> str | None:
    path = fixed_file(case)
    return path.read_text() if path.exists() else None


@pytest.mark.parametrize("case", EXPECTED)
def test_case(case, here):
    source = input_file(case)
    report = check(case, source.read_bytes(), here)
    findings, fixed = case / "findings.txt", fixed_file(case)
    if UPDATE and not config(case).get("xfail"):
        findings.write_text(describe(report.findings))
        if report.fixed is not None:
            fixed.write_text(report.fixed)
        else:
            fixed.unlink(missing_ok=True)
    assert describe(report.findings) == findings.read_text()
    assert report.fixed == expected_fixed(case)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_case_fixed_text_is_stable(case, here):
    first = check(case, input_file(case).read_bytes(), here)
    if first.fixed is None:
        assert not any(f.fixable for f in first.findings)
        return
    again = check(case, first.fixed, here)
    assert [f for f in again.findings if f.fixable] == []
    assert again.fixed is None  # a second fix changes no byte
    left = sorted((f.rule.value, f.message) for f in first.findings if not f.fixable)
    assert sorted((f.rule.value, f.message) for f in again.findings) == left


@pytest.mark.parametrize("case", FIXED, ids=case_id)
def test_case_fixed_text_still_parses(case, here):
    """What --fix writes (and what the case expects) is still valid Python, JSON, YAML, TOML."""
    made = check(case, input_file(case).read_bytes(), here).fixed
    suffix = input_file(case).suffix
    for text in {made, fixed_file(case).read_text()} - {None}:
        if suffix == ".py":
            compile(text, input_file(case).name, "exec")
        elif suffix == ".json":
            json.loads(text)
        elif suffix == ".ipynb":
            cells = json.loads(input_file(case).read_text())["cells"]
            after = json.loads(text)["cells"]
            assert [c.get("outputs") for c in after] == [c.get("outputs") for c in cells]
        elif suffix in (".yaml", ".yml"):
            list(yaml.safe_load_all(text))  # multi-document files too
        elif suffix == ".toml":
            tomllib.loads(text)


def test_every_case_says_what_it_is_about():
    for case in CASES:
        assert (case / "case.yaml").exists(), case
        about = config(case).get("about")
        assert isinstance(about, str), case
        assert about.strip(), case


def test_every_case_has_one_input_and_its_expectations():
    for case in CASES:
        source = input_file(case)
        assert source.stem == "input" or source.name == "Makefile", case
        assert (case / "findings.txt").exists(), case
        extra = {p.name for p in case.iterdir()} - {*META, source.name, fixed_file(case).name}
        assert not extra, (case, extra)


def test_every_file_kind_has_cases():
    assert {case.parent.name for case in CASES} == KINDS
