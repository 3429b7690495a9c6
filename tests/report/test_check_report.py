"""The `check` report: text, JSON, SARIF, GitHub annotations and Markdown."""

from __future__ import annotations

import json

import pytest

from wbmigrate import __version__
from wbmigrate.check.model import FileReport, Finding, Lines, Replacement, Rule
from wbmigrate.report import check as report

TEXT = "a: off_policy/mean\nb: 1\n  c: off_policy/max\n"
LINES = Lines(TEXT)
RENAMED = LINES.finding(
    "cfg.yaml", 3, 18, Rule.RENAMED_METRIC, "off_policy/mean -> staleness/rollout/mean",
    (Replacement(3, 18, "staleness/rollout/mean"),),
)  # fmt: skip
REVIEW = LINES.finding("cfg.yaml", 30, 44, Rule.NEEDS_REVIEW, "a | b <maybe> off_policy/max")
CFG = FileReport("cfg.yaml", (RENAMED, REVIEW), TEXT)
CLEAN = FileReport("clean.py", (), "x = 1\n")
ALL_CLEAR = "All clear: no old metric names or config keys in"
BROKEN = FileReport("bad.json", (Finding("bad.json", 12, 10, 12, 10, Rule.PARSE_ERROR, "oops"),))


def errors(count: int, rule: Rule = Rule.REMOVED_METRIC) -> tuple[Finding, ...]:
    return tuple(Finding("f.py", n, 1, n, 5, rule, f"gone {n}") for n in range(1, count + 1))


@pytest.mark.parametrize(
    ("reports", "fixed", "expected"),
    [
        ([], 0, f"{ALL_CLEAR} 0 files."),
        ([CLEAN], 0, f"{ALL_CLEAR} 1 file."),
        ([CLEAN, CLEAN], 3, f"Fixed 3 findings. {ALL_CLEAR} 2 files."),
        ([CFG, CLEAN], 0, "Found 2 findings in 1 file (1 fixable with --fix)."),
        ([BROKEN], 0, "Found 1 finding in 1 file."),
        ([CFG, BROKEN], 1, "Fixed 1 finding. Found 3 findings in 2 files (1 fixable with --fix)."),
    ],
    ids=["nothing", "all-clear", "fixed-all", "found", "unfixable", "fixed-some"],
)  # fmt: skip
def test_summary(reports, fixed, expected):
    assert report.summary(reports, fixed) == expected


def test_text_groups_findings_by_file_and_marks_fixable_ones():
    assert report.to_text([CFG, CLEAN, BROKEN]).splitlines() == [
        "cfg.yaml",
        "  1:4  renamed-metric      off_policy/mean -> staleness/rollout/mean  [*]",
        "  3:7  needs-review        a | b <maybe> off_policy/max",
        "",
        "bad.json",
        "  12:10  parse-error         oops",
        "",
        "Found 3 findings in 2 files (1 fixable with --fix).",
    ]


def test_text_aligns_positions_within_a_file():
    findings = (*errors(1), Finding("f.py", 10, 12, 10, 20, Rule.RENAMED_METRIC, "x"))
    lines = report.to_text([FileReport("f.py", findings)]).splitlines()
    assert lines[1:3] == ["  1:1    removed-metric      gone 1", "  10:12  renamed-metric      x"]


def test_text_all_clear():
    assert report.to_text([CLEAN]) == ("All clear: no old metric names or config keys in 1 file.\n")


def test_json_findings_and_fix_regions():
    data = json.loads(report.to_json([CFG, CLEAN]))
    first, second = data["findings"]
    assert first == {
        "path": "cfg.yaml", "line": 1, "column": 4, "end_line": 1, "end_column": 19,
        "rule": "renamed-metric", "level": "error",
        "message": "off_policy/mean -> staleness/rollout/mean", "fixable": True,
        "fix": [{"start_line": 1, "start_column": 4, "end_line": 1, "end_column": 19,
                 "text": "staleness/rollout/mean"}],
    }  # fmt: skip
    assert (second["level"], second["fixable"], second["fix"]) == ("warning", False, [])
    assert (second["end_line"], second["end_column"]) == (4, 1)
    assert data["summary"] == {
        "files": 2, "findings": 2, "fixable": 1,
        "rules": {"renamed-metric": 1, "needs-review": 1},
    }  # fmt: skip


def test_json_region_of_a_fix_across_lines():
    across = Finding("cfg.yaml", 1, 4, 3, 19, Rule.RENAMED_METRIC, "m", (Replacement(3, 40, "z"),))
    (finding,) = json.loads(report.to_json([FileReport("cfg.yaml", (across,), TEXT)]))["findings"]
    assert finding["fix"] == [
        {"start_line": 1, "start_column": 4, "end_line": 3, "end_column": 17, "text": "z"}
    ]


def test_sarif():
    sarif = json.loads(report.to_sarif([CFG, CLEAN, BROKEN]))
    assert sarif["version"] == "2.1.0"
    assert sarif["$schema"].endswith("sarif-2.1.0.json")
    (run,) = sarif["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("wbmigrate", __version__)
    assert [rule["id"] for rule in driver["rules"]] == [rule.value for rule in Rule]
    levels = {rule["id"]: rule["defaultConfiguration"]["level"] for rule in driver["rules"]}
    assert levels == {rule.value: rule.level for rule in Rule}
    results = run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("renamed-metric", "error"), ("needs-review", "warning"), ("parse-error", "error"),
    ]  # fmt: skip
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    location = results[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "cfg.yaml"}
    assert location["region"] == {"startLine": 1, "startColumn": 4, "endLine": 1, "endColumn": 19}
    assert results[0]["message"] == {"text": "off_policy/mean -> staleness/rollout/mean"}
    (fix,) = results[0]["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "cfg.yaml"}
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 1, "startColumn": 4, "endLine": 1, "endColumn": 19},
            "insertedContent": {"text": "staleness/rollout/mean"},
        }
    ]
    assert "fixes" not in results[1]
    assert "fixes" not in results[2]


def test_sarif_region_across_lines_keeps_its_end_column():
    (result,) = json.loads(report.to_sarif([FileReport("cfg.yaml", (REVIEW,), TEXT)]))["runs"][0][
        "results"
    ]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 3, "startColumn": 7, "endLine": 4, "endColumn": 1}


def test_github_annotations():
    lines = report.to_github([CFG, CLEAN]).splitlines()
    assert lines == [
        "::error file=cfg.yaml,line=1,col=4,endLine=1,endColumn=19,"
        "title=wbmigrate renamed-metric::off_policy/mean -> staleness/rollout/mean",
        "::warning file=cfg.yaml,line=3,col=7,endLine=4,endColumn=1,"
        "title=wbmigrate needs-review::a | b <maybe> off_policy/max",
        "Found 2 findings in 1 file (1 fixable with --fix).",
    ]


def test_github_escapes_data_and_properties():
    finding = Finding("a,b:c%.md", 2, 3, 2, 4, Rule.NEEDS_REVIEW, "50%: a, b\r\nnext")
    (line, _) = report.to_github([FileReport("a,b:c%.md", (finding,))]).splitlines()
    assert line.startswith("::warning file=a%2Cb%3Ac%25.md,line=2,col=3,endLine=2,endColumn=4,")
    assert line.endswith("::50%25: a, b%0D%0Anext")


@pytest.mark.parametrize("cap", [1, 10], ids=["cap-1", "default-cap"])
def test_github_caps_annotations_per_level(cap):
    reports = [FileReport("f.py", (*errors(12), *errors(2, Rule.NEEDS_REVIEW)))]
    lines = report.to_github(reports, cap=cap).splitlines()
    assert sum(line.startswith("::error ") for line in lines) == min(cap, 12)
    assert sum(line.startswith("::warning ") for line in lines) == min(cap, 2)
    hidden = 14 - min(cap, 12) - min(cap, 2)
    assert lines[-2] == (
        f"::notice title=wbmigrate::{hidden} more findings are not annotated "
        f"(GitHub shows {cap} per level); see the job log or upload SARIF"
    )
    assert lines[-1] == "Found 14 findings in 1 file."


def test_github_adds_no_notice_under_the_cap():
    lines = report.to_github([FileReport("f.py", errors(10))]).splitlines()
    assert len(lines) == 11
    assert not any(line.startswith("::notice") for line in lines)


def test_github_notice_for_one_hidden_finding_is_singular():
    out = report.to_github([FileReport("f.py", errors(2))], cap=1)
    assert "::notice title=wbmigrate::1 more finding " in out


def test_markdown():
    assert report.to_markdown([CFG, CLEAN]).splitlines() == [
        "### wbmigrate check",
        "",
        "Found 2 findings in 1 file (1 fixable with --fix).",
        "",
        "**`cfg.yaml`**",
        "",
        "| Line | Rule | Finding | Fix |",
        "|---|---|---|---|",
        "| 1:4 | `renamed-metric` | off_policy/mean -> staleness/rollout/mean | yes |",
        "| 3:7 | `needs-review` | a \\| b &lt;maybe> off_policy/max |  |",
        "",
    ]


def test_markdown_all_clear():
    assert report.to_markdown([CLEAN], fixed=2) == (
        "### wbmigrate check\n\n"
        "Fixed 2 findings. All clear: no old metric names or config keys in 1 file.\n\n"
    )
