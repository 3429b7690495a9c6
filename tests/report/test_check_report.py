"""The `check` report: text, statistics, JSON (against its schema), SARIF, GitHub annotations
and Markdown, each carrying the finding's level."""

from __future__ import annotations

import json

import jsonschema
import pytest
from helpers import REPO, rendered_markdown

from wbmigrate import __version__
from wbmigrate.check.model import FileReport, Finding, Level, Lines, Replacement, Rule
from wbmigrate.report import check as report
from wbmigrate.report import ci

SCHEMA = json.loads((REPO / "schemas" / "check-report.schema.json").read_text())
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
MENTION = Finding("notes.md", 2, 5, 2, 20, Rule.MENTION, "off_policy/mean is mentioned in prose")
NOTES = FileReport("notes.md", (MENTION,), "# Notes\n\nThe off_policy/mean plot.\n")
CRASH = Finding("x.py", 1, 1, 1, 1, Rule.INTERNAL_ERROR, "wbmigrate failed; please report it")
CRASHED = FileReport("x.py", (CRASH,))


def errors(count: int, rule: Rule = Rule.REMOVED_METRIC, level: Level = Level.ERROR):
    """`count` findings of `rule` at `level` (an error has a fix, as the model requires)."""
    fix = (Replacement(0, 1, "x"),) if level is Level.ERROR else ()
    return tuple(Finding("f.py", n, 1, n, 5, rule, f"gone {n}", fix) for n in range(1, count + 1))


def test_findings_used_here_have_the_levels_they_stand_for():
    levels = [f.level for f in (RENAMED, REVIEW, *BROKEN.findings, MENTION, CRASH)]
    assert levels == [Level.ERROR, Level.WARNING, Level.WARNING, Level.NOTE, Level.ERROR]


# --- summary ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reports", "fixed", "expected"),
    [
        ([], 0, f"{ALL_CLEAR} 0 files."),
        ([CLEAN], 0, f"{ALL_CLEAR} 1 file."),
        ([CLEAN, CLEAN], 3, f"Fixed 3 findings. {ALL_CLEAR} 2 files."),
        ([CFG, CLEAN], 0, "Found 1 error and 1 warning in 1 file (1 fixable with --fix)."),
        ([BROKEN], 0, "Found 1 warning in 1 file."),
        ([CFG, BROKEN], 1,
         "Fixed 1 finding. Found 1 error and 2 warnings in 2 files (1 fixable with --fix)."),
        ([NOTES, CLEAN], 0, "All clear: nothing to fix or review in 2 files (1 note)."),
        ([NOTES, NOTES], 2, "Fixed 2 findings. All clear: nothing to fix or review in 2 files "
                            "(2 notes)."),
        ([CFG, NOTES], 0,
         "Found 1 error, 1 warning and 1 note in 2 files (1 fixable with --fix)."),
        ([FileReport("f.py", errors(3))], 0, "Found 3 errors in 1 file (3 fixable with --fix)."),
    ],
    ids=["nothing", "all-clear", "fixed-all", "found", "unfixable", "fixed-some", "notes-only",
         "fixed-notes-left", "every-level", "errors-only"],
)  # fmt: skip
def test_summary(reports, fixed, expected):
    assert report.summary(reports, fixed) == expected


# --- text -------------------------------------------------------------------------------------


def test_text_groups_findings_by_file_with_level_and_marks_fixable_ones():
    assert report.to_text([CFG, CLEAN, BROKEN, NOTES]).splitlines() == [
        "cfg.yaml",
        "  1:4  error    renamed-metric      off_policy/mean -> staleness/rollout/mean  [*]",
        "  3:7  warning  needs-review        a | b <maybe> off_policy/max",
        "",
        "bad.json",
        "  12:10  warning  parse-error         oops",
        "",
        "notes.md",
        "  2:5  note     mention             off_policy/mean is mentioned in prose",
        "",
        "Found 1 error, 2 warnings and 1 note in 3 files (1 fixable with --fix).",
    ]


def test_text_aligns_positions_within_a_file():
    findings = (*errors(1), Finding("f.py", 10, 12, 10, 20, Rule.NEEDS_REVIEW, "x"))
    lines = report.to_text([FileReport("f.py", findings)]).splitlines()
    assert lines[1:3] == [
        "  1:1    error    removed-metric      gone 1  [*]",
        "  10:12  warning  needs-review        x",
    ]


def test_text_all_clear():
    assert report.to_text([CLEAN]) == ("All clear: no old metric names or config keys in 1 file.\n")


def test_text_quiet_prints_only_what_fails_without_a_summary():
    assert report.to_text([CFG, NOTES, BROKEN], quiet=True).splitlines() == [
        "cfg.yaml",
        "  1:4  error    renamed-metric      off_policy/mean -> staleness/rollout/mean  [*]",
        "  3:7  warning  needs-review        a | b <maybe> off_policy/max",
        "",
        "bad.json",
        "  12:10  warning  parse-error         oops",
    ]


@pytest.mark.parametrize("reports", [[], [CLEAN], [NOTES, CLEAN]], ids=["none", "clean", "notes"])
def test_text_quiet_prints_nothing_when_nothing_fails(reports):
    assert report.to_text(reports, fixed=2, quiet=True) == ""


# --- statistics -------------------------------------------------------------------------------


def test_statistics_count_per_rule_and_level_most_frequent_first():
    findings = (
        *errors(1, Rule.RENAMED_CONFIG_KEY),
        *errors(12, Rule.RENAMED_METRIC),
        *errors(2, Rule.RENAMED_METRIC, Level.WARNING),
        *errors(2, Rule.NEEDS_REVIEW, Level.WARNING),
    )
    assert report.to_statistics([FileReport("f.py", findings), NOTES]).splitlines() == [
        "12  error    renamed-metric      [*]",
        " 2  warning  renamed-metric",
        " 2  warning  needs-review",
        " 1  error    renamed-config-key  [*]",
        " 1  note     mention",
        "Found 13 errors, 4 warnings and 1 note in 2 files (13 fixable with --fix).",
    ]


def test_statistics_quiet_and_clean():
    assert report.to_statistics([BROKEN], quiet=True) == "1  warning  parse-error\n"
    assert report.to_statistics([CLEAN], fixed=1) == (
        f"Fixed 1 finding. {ALL_CLEAR} 1 file.\n"
    )  # fmt: skip
    assert report.to_statistics([CLEAN], quiet=True) == ""


# --- JSON -------------------------------------------------------------------------------------


def test_json_findings_and_fix_regions():
    data = json.loads(report.to_json([CFG, CLEAN]))
    assert data["version"] == 1
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
        "levels": {"error": 1, "warning": 1, "note": 0},
        "rules": {"renamed-metric": 1, "needs-review": 1},
    }  # fmt: skip


def test_json_counts_every_level():
    data = json.loads(report.to_json([CFG, NOTES, BROKEN, CRASHED]))
    assert [f["level"] for f in data["findings"]] == [
        "error",
        "warning",
        "note",
        "warning",
        "error",
    ]
    assert data["summary"]["levels"] == {"error": 2, "warning": 2, "note": 1}


def test_json_region_of_a_fix_across_lines():
    across = Finding("cfg.yaml", 1, 4, 3, 19, Rule.RENAMED_METRIC, "m", (Replacement(3, 40, "z"),))
    (finding,) = json.loads(report.to_json([FileReport("cfg.yaml", (across,), TEXT)]))["findings"]
    assert finding["fix"] == [
        {"start_line": 1, "start_column": 4, "end_line": 3, "end_column": 17, "text": "z"}
    ]


@pytest.mark.parametrize(
    "reports",
    [[], [CLEAN], [CFG, CLEAN, BROKEN, NOTES, CRASHED]],
    ids=["no-files", "clean", "every-rule-kind"],
)
def test_json_matches_its_schema(reports):
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(json.loads(report.to_json(reports)), SCHEMA)


def test_schema_knows_every_rule_and_level_and_the_version():
    definitions = SCHEMA["$defs"]
    assert definitions["rule"]["enum"] == [rule.value for rule in Rule]
    assert definitions["level"]["enum"] == [level.value for level in Level]
    assert SCHEMA["properties"]["version"]["const"] == report.JSON_VERSION


def test_schema_refuses_what_the_report_never_writes():
    data = json.loads(report.to_json([CFG]))
    data["findings"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, SCHEMA)


# --- SARIF ------------------------------------------------------------------------------------


def test_sarif():
    sarif = json.loads(ci.to_sarif([CFG, CLEAN, BROKEN, NOTES]))
    assert sarif["version"] == "2.1.0"
    assert sarif["$schema"].endswith("sarif-2.1.0.json")
    (run,) = sarif["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("wbmigrate", __version__)
    assert [rule["id"] for rule in driver["rules"]] == [rule.value for rule in Rule]
    levels = {rule["id"]: rule["defaultConfiguration"]["level"] for rule in driver["rules"]}
    assert levels == {rule.value: rule.level.value for rule in Rule}
    assert (levels["mention"], levels["needs-review"], levels["internal-error"]) == (
        "note", "warning", "error",
    )  # fmt: skip
    assert run["invocations"] == [{"executionSuccessful": True}]
    results = run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("renamed-metric", "error"), ("needs-review", "warning"), ("parse-error", "warning"),
        ("mention", "note"),
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
    assert not any("fixes" in result for result in results[1:])


def test_sarif_run_is_unsuccessful_when_wbmigrate_failed_on_a_file():
    (run,) = json.loads(ci.to_sarif([CFG, CRASHED]))["runs"]
    assert run["invocations"] == [{"executionSuccessful": False}]
    assert (run["results"][-1]["ruleId"], run["results"][-1]["level"]) == (
        "internal-error", "error",
    )  # fmt: skip


def test_sarif_region_across_lines_keeps_its_end_column():
    (result,) = json.loads(ci.to_sarif([FileReport("cfg.yaml", (REVIEW,), TEXT)]))["runs"][0][
        "results"
    ]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 3, "startColumn": 7, "endLine": 4, "endColumn": 1}


# --- GitHub annotations -----------------------------------------------------------------------


def test_github_annotations_by_level():
    lines = ci.to_github([CFG, CLEAN, NOTES]).splitlines()
    assert lines == [
        "::error file=cfg.yaml,line=1,col=4,endLine=1,endColumn=19,"
        "title=wbmigrate renamed-metric::off_policy/mean -> staleness/rollout/mean",
        "::warning file=cfg.yaml,line=3,col=7,endLine=4,endColumn=1,"
        "title=wbmigrate needs-review::a | b <maybe> off_policy/max",
        "::notice file=notes.md,line=2,col=5,endLine=2,endColumn=20,"
        "title=wbmigrate mention::off_policy/mean is mentioned in prose",
        "Found 1 error, 1 warning and 1 note in 2 files (1 fixable with --fix).",
    ]


def test_github_escapes_data_and_properties():
    finding = Finding("a,b:c%.md", 2, 3, 2, 4, Rule.NEEDS_REVIEW, "50%: a, b\r\nnext")
    (line, _) = ci.to_github([FileReport("a,b:c%.md", (finding,))]).splitlines()
    assert line.startswith("::warning file=a%2Cb%3Ac%25.md,line=2,col=3,endLine=2,endColumn=4,")
    assert line.endswith("::50%25: a, b%0D%0Anext")


def hidden_notice(what: str, cap: int = 10) -> str:
    return (
        f"::notice title=wbmigrate::{what} not annotated (GitHub shows {cap} per level); "
        "run `wbmigrate check` locally or see the SARIF upload for the full list"
    )


def count(lines: list[str], level: str) -> int:
    return sum(line.startswith(f"::{level} file=") for line in lines)


@pytest.mark.parametrize("cap", [1, 10], ids=["cap-1", "default-cap"])
def test_github_caps_annotations_per_level(cap):
    findings = (*errors(12), *errors(2, Rule.NEEDS_REVIEW, Level.WARNING))
    lines = ci.to_github([FileReport("f.py", findings)], cap=cap).splitlines()
    assert (count(lines, "error"), count(lines, "warning")) == (min(cap, 12), min(cap, 2))
    hidden_errors, hidden_warnings = 12 - min(cap, 12), 2 - min(cap, 2)
    what = (
        "2 more errors are"
        if not hidden_warnings
        else f"{hidden_errors + 1} more findings ({hidden_errors} errors and 1 warning) are"
    )
    assert lines[-2] == hidden_notice(what, cap)
    assert lines[-1] == "Found 12 errors and 2 warnings in 1 file (12 fixable with --fix)."


def test_github_keeps_the_last_notice_slot_for_the_hidden_count():
    """GitHub drops notices past the cap too: the line saying what is hidden must be shown."""
    findings = (*errors(11), *errors(12, Rule.MENTION, Level.NOTE))
    lines = ci.to_github([FileReport("f.py", findings)]).splitlines()
    assert (count(lines, "error"), count(lines, "notice")) == (10, 9)
    assert sum(line.startswith("::notice") for line in lines) == 10
    assert lines[-2] == hidden_notice("4 more findings (1 error and 3 notes) are")


def test_github_shows_every_notice_when_nothing_is_hidden():
    lines = ci.to_github([FileReport("f.py", errors(10, Rule.MENTION, Level.NOTE))])
    assert count(lines.splitlines(), "notice") == 10
    assert "more" not in lines


def test_github_adds_no_notice_under_the_cap():
    lines = ci.to_github([FileReport("f.py", errors(10))]).splitlines()
    assert len(lines) == 11
    assert not any(line.startswith("::notice") for line in lines)


def test_github_notice_for_one_hidden_finding_is_singular():
    out = ci.to_github([FileReport("f.py", errors(2))], cap=1)
    assert hidden_notice("1 more error is", cap=1) in out


# --- Markdown ---------------------------------------------------------------------------------


def test_markdown():
    assert report.to_markdown([CFG, CLEAN]).splitlines() == [
        "### wbmigrate check",
        "",
        "Found 1 error and 1 warning in 1 file (1 fixable with --fix).",
        "",
        "**`cfg.yaml`**",
        "",
        "| Line | Level | Rule | Finding | Fix |",
        "|---|---|---|---|---|",
        "| 1:4 | error | `renamed-metric` | off_policy/mean -> staleness/rollout/mean | yes |",
        "| 3:7 | warning | `needs-review` | a \\| b &lt;maybe> off_policy/max |  |",
        "",
    ]


def test_markdown_folds_notes_away():
    lines = report.to_markdown([NOTES, CFG]).splitlines()
    start = lines.index(
        "<details><summary>1 note: old names in comments, docstrings and prose (information "
        "only)</summary>"
    )
    assert lines.index("**`cfg.yaml`**") < start
    assert lines[start + 1 :] == [
        "",
        "**`notes.md`**",
        "",
        "| Line | Level | Rule | Finding | Fix |",
        "|---|---|---|---|---|",
        "| 2:5 | note | `mention` | off_policy/mean is mentioned in prose |  |",
        "",
        "</details>",
        "",
    ]


def test_markdown_all_clear():
    assert report.to_markdown([CLEAN], fixed=2) == (
        "### wbmigrate check\n\n"
        "Fixed 2 findings. All clear: no old metric names or config keys in 1 file.\n\n"
    )


def test_markdown_makes_no_link_image_or_cell_of_a_files_text():
    hostile = "[click](https://evil.example/a) ![p](https://evil.example/p.png) \\| \\[x](//e.x)"
    finding = LINES.finding("a`b.yaml", 0, 1, Rule.NEEDS_REVIEW, hostile)
    markdown = report.to_markdown([FileReport("a` [x](//e.x) `.yaml", (finding,), TEXT)])
    links, images, cells = rendered_markdown(markdown)
    assert (links, images, set(cells)) == ([], 0, {5})


@pytest.mark.parametrize("text", ["", "one line", "a\nb\n\nc", "\n\nx\n", "é\r\nü\n"])
def test_fixes_are_placed_where_the_line_index_places_them(text):
    offsets = range(len(text) + 1)
    assert report.line_columns(text, offsets) == {o: Lines(text).position(o) for o in offsets}
