"""`check` results for people and for CI: grouped text (like ruff), JSON, SARIF 2.1.0 with
fixes, GitHub workflow annotations (capped), and Markdown for a pull-request comment."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from wbmigrate import __version__
from wbmigrate.check.model import RULE_HELP, FileReport, Finding, Lines, Rule
from wbmigrate.report.words import plural

GITHUB_CAP = 10  # GitHub shows at most 10 annotations of each level per step


def _findings(reports: list[FileReport]) -> list[Finding]:
    return [f for r in reports for f in r.findings]


def summary(reports: list[FileReport], fixed: int = 0) -> str:
    findings = _findings(reports)
    files = len({f.path for f in findings})
    fixable = sum(f.fixable for f in findings)
    head = f"Fixed {plural(fixed, 'finding')}. " if fixed else ""
    if not findings:
        files_read = plural(len(reports), "file")
        return f"{head}All clear: no old metric names or config keys in {files_read}."
    hint = f" ({fixable} fixable with --fix)" if fixable else ""
    return f"{head}Found {plural(len(findings), 'finding')} in {plural(files, 'file')}{hint}."


def to_text(reports: list[FileReport], fixed: int = 0) -> str:
    out = []
    for report in reports:
        if not report.findings:
            continue
        out.append(report.path)
        width = max(len(f"{f.line}:{f.column}") for f in report.findings)
        for f in report.findings:
            mark = "  [*]" if f.fixable else ""
            out.append(
                f"  {f'{f.line}:{f.column}':<{width}}  {f.rule.value:<18}  {f.message}{mark}"
            )
        out.append("")
    out.append(summary(reports, fixed))
    return "\n".join(out) + "\n"


def to_json(reports: list[FileReport]) -> str:
    findings = _findings(reports)
    data = {
        "findings": [_finding_dict(f, reports) for f in findings],
        "summary": {
            "files": len(reports),
            "findings": len(findings),
            "fixable": sum(f.fixable for f in findings),
            "rules": dict(Counter(f.rule.value for f in findings)),
        },
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _finding_dict(finding: Finding, reports: list[FileReport]) -> dict[str, Any]:
    return {
        "path": finding.path,
        "line": finding.line,
        "column": finding.column,
        "end_line": finding.end_line,
        "end_column": finding.end_column,
        "rule": finding.rule.value,
        "level": finding.rule.level,
        "message": finding.message,
        "fixable": finding.fixable,
        "fix": _regions(finding, reports),
    }


def _regions(finding: Finding, reports: list[FileReport]) -> list[dict[str, Any]]:
    """A finding's replacements as line/column regions of the original file."""
    text = next((r.text for r in reports if r.path == finding.path), "")
    lines = Lines(text)
    regions = []
    for r in finding.fix:
        (start_line, start_column), (end_line, end_column) = (
            lines.position(r.start),
            lines.position(r.end),
        )
        regions.append(
            {
                "start_line": start_line,
                "start_column": start_column,
                "end_line": end_line,
                "end_column": end_column,
                "text": r.text,
            }
        )
    return regions


# --- SARIF ------------------------------------------------------------------------------------


def to_sarif(reports: list[FileReport]) -> str:
    rules = list(Rule)
    results = []
    for finding in _findings(reports):
        result: dict[str, Any] = {
            "ruleId": finding.rule.value,
            "ruleIndex": rules.index(finding.rule),
            "level": finding.rule.level,
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
            result["fixes"] = [
                {
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
                                for r in _regions(finding, reports)
                            ],
                        }
                    ],
                }
            ]
        results.append(result)
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "wbmigrate",
                        "version": __version__,
                        "rules": [
                            {
                                "id": rule.value,
                                "name": rule.name.title().replace("_", ""),
                                "shortDescription": {"text": RULE_HELP[rule]},
                                "defaultConfiguration": {"level": rule.level},
                            }
                            for rule in rules
                        ],
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(sarif, indent=2, ensure_ascii=False) + "\n"


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
    out = []
    shown: Counter[str] = Counter()
    findings = _findings(reports)
    for f in findings:
        level = f.rule.level
        if shown[level] >= cap:
            continue
        shown[level] += 1
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
        out.append(f"::{level} {properties}::{_data(f.message)}")
    hidden = len(findings) - sum(shown.values())
    if hidden:
        out.append(
            f"::notice title=wbmigrate::{plural(hidden, 'more finding')} "
            f"{'is' if hidden == 1 else 'are'} not annotated "
            f"(GitHub shows {cap} per level); see the job log or upload SARIF"
        )
    out.append(summary(reports))
    return "\n".join(out) + "\n"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


# --- Markdown ---------------------------------------------------------------------------------


def to_markdown(reports: list[FileReport], fixed: int = 0) -> str:
    out = ["### wbmigrate check", "", summary(reports, fixed), ""]
    for report in reports:
        if not report.findings:
            continue
        out += [f"**`{report.path}`**", "", "| Line | Rule | Finding | Fix |", "|---|---|---|---|"]
        for f in report.findings:
            message = f.message.replace("|", "\\|").replace("<", "&lt;")
            out.append(
                f"| {f.line}:{f.column} | `{f.rule.value}` | {message} | "
                f"{'yes' if f.fixable else ''} |"
            )
        out.append("")
    return "\n".join(out) + "\n"
