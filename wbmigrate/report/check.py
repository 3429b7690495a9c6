"""`check` results for people and for CI: grouped text (like ruff), a statistics table, JSON
(versioned, with a JSON Schema in schemas/), SARIF 2.1.0 with fixes, GitHub workflow
annotations (capped per level) and Markdown for a pull-request comment. Every format carries
each finding's level: error (wbmigrate has a fix), warning (a person decides), note (info)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from wbmigrate import __version__
from wbmigrate.check.model import RULE_HELP, FileReport, Finding, Level, Lines, Rule
from wbmigrate.report.words import plural

JSON_VERSION = 1  # of the JSON report's layout (schemas/check-report.schema.json): bump on change
GITHUB_CAP = 10  # GitHub shows at most 10 annotations of each level per step
GITHUB_LEVELS = {Level.ERROR: "error", Level.WARNING: "warning", Level.NOTE: "notice"}
LEVEL_WIDTH = max(len(level.value) for level in Level)
RULE_WIDTH = max(len(rule.value) for rule in Rule)
FIX_MARK = "[*]"


def _findings(reports: list[FileReport]) -> list[Finding]:
    return [f for r in reports for f in r.findings]


def level_counts(findings: Iterable[Finding]) -> dict[Level, int]:
    """Findings per level, every level present (in the order error, warning, note)."""
    counts = Counter(f.level for f in findings)
    return {level: counts[level] for level in Level}


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def summary(reports: list[FileReport], fixed: int = 0) -> str:
    """One line: what was fixed, then the findings by level. Notes alone are all clear, since
    they never fail a run."""
    findings = _findings(reports)
    counts = level_counts(findings)
    head = f"Fixed {plural(fixed, 'finding')}. " if fixed else ""
    files_read = plural(len(reports), "file")
    if not findings:
        return f"{head}All clear: no old metric names or config keys in {files_read}."
    if not counts[Level.ERROR] and not counts[Level.WARNING]:
        notes = plural(counts[Level.NOTE], "note")
        return f"{head}All clear: nothing to fix or review in {files_read} ({notes})."
    found = _and([plural(n, level.value) for level, n in counts.items() if n])
    files = plural(len({f.path for f in findings}), "file")
    fixable = sum(f.fixable for f in findings)
    hint = f" ({fixable} fixable with --fix)" if fixable else ""
    return f"{head}Found {found} in {files}{hint}."


# --- text -------------------------------------------------------------------------------------


def to_text(reports: list[FileReport], fixed: int = 0, quiet: bool = False) -> str:
    """Findings grouped by file, one aligned line each, then the summary. `quiet` keeps only
    what fails a run (errors and warnings) and drops the summary, as `ruff -q` does."""
    out = []
    for report in reports:
        shown = [f for f in report.findings if not (quiet and f.level is Level.NOTE)]
        if shown:
            out += [report.path, *_text_lines(shown), ""]
    if quiet:
        return "".join(f"{line}\n" for line in out[:-1])  # no blank line at the end
    return "".join(f"{line}\n" for line in [*out, summary(reports, fixed)])


def _text_lines(findings: list[Finding]) -> list[str]:
    width = max(len(f"{f.line}:{f.column}") for f in findings)
    return [
        f"  {f'{f.line}:{f.column}':<{width}}  {f.level.value:<{LEVEL_WIDTH}}  "
        f"{f.rule.value:<{RULE_WIDTH}}  {f.message}{f'  {FIX_MARK}' if f.fixable else ''}"
        for f in findings
    ]


def to_statistics(reports: list[FileReport], fixed: int = 0, quiet: bool = False) -> str:
    """Counts per rule and level, most frequent first (as `ruff --statistics`), `[*]` where
    --fix fixes them all; then the summary, unless `quiet`."""
    counts = Counter((f.rule, f.level) for f in _findings(reports))
    fixable = Counter((f.rule, f.level) for f in _findings(reports) if f.fixable)
    rules, levels = list(Rule), list(Level)
    rows = sorted(
        counts.items(), key=lambda i: (-i[1], levels.index(i[0][1]), rules.index(i[0][0]))
    )
    width = max((len(str(n)) for n in counts.values()), default=1)
    out = [
        f"{n:>{width}}  {level.value:<{LEVEL_WIDTH}}  {rule.value:<{RULE_WIDTH}}  "
        f"{FIX_MARK if fixable[rule, level] == n else ''}".rstrip()
        for (rule, level), n in rows
    ]
    if not quiet:
        out.append(summary(reports, fixed))
    return "".join(f"{line}\n" for line in out)


# --- JSON -------------------------------------------------------------------------------------


def to_json(reports: list[FileReport]) -> str:
    """The report as schemas/check-report.schema.json describes it (`version` names the layout)."""
    findings = _findings(reports)
    data = {
        "version": JSON_VERSION,
        "findings": [_finding_dict(f, reports) for f in findings],
        "summary": {
            "files": len(reports),
            "findings": len(findings),
            "fixable": sum(f.fixable for f in findings),
            "levels": {level.value: n for level, n in level_counts(findings).items()},
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
        "level": finding.level.value,
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
    """SARIF 2.1.0: each result at its finding's level, each rule with its default level, and
    an invocation that is unsuccessful when wbmigrate failed on a file."""
    rules = list(Rule)
    findings = _findings(reports)
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
                "results": [_sarif_result(f, rules, reports) for f in findings],
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


def _sarif_result(finding: Finding, rules: list[Rule], reports: list[FileReport]) -> dict[str, Any]:
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
        result["fixes"] = [_sarif_fix(finding, reports)]
    return result


def _sarif_fix(finding: Finding, reports: list[FileReport]) -> dict[str, Any]:
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
                    for r in _regions(finding, reports)
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
    findings = _findings(reports)
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
        else f"{total} more findings ({_and([plural(hidden[lv], lv.value) for lv in levels])})"
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


# --- Markdown ---------------------------------------------------------------------------------


def to_markdown(reports: list[FileReport], fixed: int = 0) -> str:
    """A pull-request comment: errors and warnings in a table per file; notes, which never
    fail a run, folded away in a <details> block at the end."""
    out = ["### wbmigrate check", "", summary(reports, fixed), ""]
    out += _markdown_tables(reports, lambda f: f.level is not Level.NOTE)
    notes = [f for f in _findings(reports) if f.level is Level.NOTE]
    if notes:
        out += [
            f"<details><summary>{plural(len(notes), 'note')}: old names in comments, docstrings"
            " and prose (information only)</summary>",
            "",
            *_markdown_tables(reports, lambda f: f.level is Level.NOTE),
            "</details>",
            "",
        ]
    return "\n".join(out) + "\n"


def _markdown_tables(reports: list[FileReport], keep: Callable[[Finding], bool]) -> list[str]:
    out = []
    for report in reports:
        findings = [f for f in report.findings if keep(f)]
        if not findings:
            continue
        out += [
            f"**`{report.path}`**",
            "",
            "| Line | Level | Rule | Finding | Fix |",
            "|---|---|---|---|---|",
        ]
        for f in findings:
            message = f.message.replace("|", "\\|").replace("<", "&lt;")
            out.append(
                f"| {f.line}:{f.column} | {f.level.value} | `{f.rule.value}` | {message} | "
                f"{'yes' if f.fixable else ''} |"
            )
        out.append("")
    return out
