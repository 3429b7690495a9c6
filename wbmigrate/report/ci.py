"""`check` results for code scanning and CI: SARIF 2.1.0 with each fix's replacements, and
GitHub workflow annotations (capped per level, as GitHub shows them)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from wbmigrate import __version__
from wbmigrate.check.model import RULE_HELP, FileReport, Finding, Level, Rule
from wbmigrate.report.check import FixRegions, and_list, findings_of, level_counts, summary
from wbmigrate.report.words import plural

GITHUB_CAP = 10  # GitHub shows at most 10 annotations of each level per step
GITHUB_LEVELS = {Level.ERROR: "error", Level.WARNING: "warning", Level.NOTE: "notice"}


# --- SARIF ------------------------------------------------------------------------------------


def to_sarif(reports: list[FileReport]) -> str:
    """SARIF 2.1.0: each result at its finding's level, each rule with its default level, and
    an invocation that is unsuccessful when wbmigrate failed on a file."""
    rules = list(Rule)
    findings = findings_of(reports)
    regions = FixRegions(reports)
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "wbmigrate",
                        "version": __version__,
                        "rules": [_sarif_rule(rule) for rule in rules],
                    }
                },
                "invocations": [{"executionSuccessful": not any(f.internal for f in findings)}],
                "results": [_sarif_result(f, rules, regions) for f in findings],
            }
        ],
    }
    return json.dumps(sarif, indent=2, ensure_ascii=False) + "\n"


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.value,
        "name": rule.name.title().replace("_", ""),
        "shortDescription": {"text": RULE_HELP[rule]},
        "defaultConfiguration": {"level": rule.level.value},
    }


def _sarif_result(finding: Finding, rules: list[Rule], regions: FixRegions) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.rule.value,
        "ruleIndex": rules.index(finding.rule),
        "level": finding.level.value,
        "message": {"text": finding.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": finding.path},
                    "region": _region(finding),
                }
            }
        ],
    }
    if finding.fixable:
        result["fixes"] = [_sarif_fix(finding, regions)]
    return result


def _sarif_fix(finding: Finding, regions: FixRegions) -> dict[str, Any]:
    return {
        "description": {"text": "wbmigrate check --fix"},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": finding.path},
                "replacements": [
                    {
                        "deletedRegion": {
                            "startLine": r["start_line"],
                            "startColumn": r["start_column"],
                            "endLine": r["end_line"],
                            "endColumn": r["end_column"],
                        },
                        "insertedContent": {"text": r["text"]},
                    }
                    for r in regions(finding)
                ],
            }
        ],
    }


def _region(finding: Finding) -> dict[str, int]:
    return {
        "startLine": finding.line,
        "startColumn": finding.column,
        "endLine": finding.end_line,
        "endColumn": finding.end_column
        if finding.end_line > finding.line
        else max(finding.end_column, finding.column),
    }


# --- GitHub annotations -----------------------------------------------------------------------


def to_github(reports: list[FileReport], cap: int = GITHUB_CAP) -> str:
    """`::error`, `::warning` and `::notice` annotations, at most `cap` of each level (GitHub
    drops the rest). When some are left out, the last notice slot says how many and where the
    full list is, so that line is always shown; the summary ends the log."""
    findings = findings_of(reports)
    caps = _github_caps(level_counts(findings), cap)
    shown: Counter[Level] = Counter()
    out = []
    for f in findings:
        if shown[f.level] < caps[f.level]:
            shown[f.level] += 1
            out.append(_annotation(f))
    hidden = {level: n - shown[level] for level, n in level_counts(findings).items()}
    if any(hidden.values()):
        out.append(_hidden_notice(hidden, cap))
    out.append(summary(reports))
    return "\n".join(out) + "\n"


def _github_caps(counts: dict[Level, int], cap: int) -> dict[Level, int]:
    """How many annotations of each level to write: `cap`, but one notice fewer when anything
    is left out, to keep a notice slot for the line that says so."""
    caps = dict.fromkeys(Level, cap)
    if any(n > cap for n in counts.values()):
        caps[Level.NOTE] = cap - 1
    return caps


def _annotation(f: Finding) -> str:
    properties = ",".join(
        [
            f"file={_property(f.path)}",
            f"line={f.line}",
            f"col={f.column}",
            f"endLine={f.end_line}",
            f"endColumn={f.end_column}",
            f"title={_property(f'wbmigrate {f.rule.value}')}",
        ]
    )
    return f"::{GITHUB_LEVELS[f.level]} {properties}::{_data(f.message)}"


def _hidden_notice(hidden: dict[Level, int], cap: int) -> str:
    """`3 more errors are...`, or `12 more findings (3 errors and 9 notes) are...`."""
    total = sum(hidden.values())
    levels = [level for level, n in hidden.items() if n]
    what = (
        plural(total, f"more {levels[0].value}")
        if len(levels) == 1
        else f"{total} more findings ({and_list([plural(hidden[lv], lv.value) for lv in levels])})"
    )
    return (
        f"::notice title=wbmigrate::{what} {'is' if total == 1 else 'are'} not annotated "
        f"(GitHub shows {cap} per level); run `wbmigrate check` locally or see the SARIF "
        "upload for the full list"
    )


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
