"""The rewrite engine over named before/after cases in fixtures/cases/<kind>/<case>/.

Each case has `before.json` and, unless nothing may change, `after.json` (exact bytes) and
`changes.txt` (every change and note, one per line); `case.yaml` holds options and what the
case is about. Every case also runs twice (the second run must change nothing) and compact
(whitespace-free text must give the same spec).

To record new expectations after a deliberate change, run
`WBMIGRATE_UPDATE_FIXTURES=1 pytest tests/test_cases.py` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from helpers import FIXTURES

from wbmigrate import find_mapping
from wbmigrate.engine.model import Mode, Options, Rewrite
from wbmigrate.rewrite import rewrite_text

CASES = sorted(p.parent for p in (FIXTURES / "cases").glob("*/*/before.json"))
MIGRATION = find_mapping("prime-rl").migration()
UPDATE = os.environ.get("WBMIGRATE_UPDATE_FIXTURES") == "1"


@pytest.fixture(autouse=True)
def catastrophic_under_the_engines_budget(request):
    if "catastrophic" in request.node.name:
        request.getfixturevalue("engine_match_budget")


def case_options(case: Path) -> Options:
    config = (
        yaml.safe_load((case / "case.yaml").read_text()) if (case / "case.yaml").exists() else {}
    )
    return Options(
        mode=Mode(config.get("mode", "dual")),
        annotate=config.get("annotate", False),
        rewrite_text=config.get("rewrite_text", False),
        project_keys=frozenset(config.get("project_keys", [])),
    )


def run_case(case: Path, text: str | None = None) -> tuple[Rewrite, str]:
    text = text if text is not None else (case / "before.json").read_text()
    return rewrite_text(
        text, MIGRATION, kind=case.parent.name, name=case.name, options=case_options(case)
    )


def _brief(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(list(value)[:3]) + (", …}" if len(value) > 3 else "}")
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 90 else text[:87] + "…"


def describe(result: Rewrite) -> str:
    lines = [
        f"{c.action.value:<9} {c.pointer}  {_brief(c.old)} -> {_brief(c.new)}"
        f"  [{c.label(result.title)}]"
        for c in result.changes
    ]
    lines += [
        f"{n.kind.value:<9} {n.pointer}  {n.message}  [{n.label(result.title)}]"
        for n in result.notes
    ]
    return "\n".join(lines) + "\n" if lines else ""


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case(case):
    result, new_text = run_case(case)
    after, changes = case / "after.json", case / "changes.txt"
    if UPDATE:
        if result.edits:
            after.write_text(new_text)
        else:
            after.unlink(missing_ok=True)
        changes.write_text(describe(result)) if describe(result) else changes.unlink(
            missing_ok=True
        )
    expected = after.read_text() if after.exists() else (case / "before.json").read_text()
    assert new_text == expected
    assert describe(result) == (changes.read_text() if changes.exists() else "")
    assert json.loads(new_text) == result.spec


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case_second_run_changes_nothing(case):
    _, new_text = run_case(case)
    again, again_text = run_case(case, new_text)
    assert again.changes == ()
    assert again_text == new_text


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case_compact_spec_gives_the_same_result(case):
    result, _ = run_case(case)
    compact = json.dumps(
        json.loads((case / "before.json").read_text()), separators=(",", ":"), ensure_ascii=False
    )
    compact_result, compact_text = run_case(case, compact)
    assert json.loads(compact_text) == result.spec
    assert "\n" not in compact_text
    assert [c.pointer for c in compact_result.changes] == [c.pointer for c in result.changes]


def test_every_case_says_what_it_is_about():
    for case in CASES:
        assert (case / "case.yaml").exists(), case
        assert yaml.safe_load((case / "case.yaml").read_text()).get("about"), case


def test_every_kind_has_cases():
    assert {case.parent.name for case in CASES} == {"report", "workspace", "automation"}
