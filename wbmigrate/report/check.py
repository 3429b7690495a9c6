"""`check` results for people and for CI: grouped text (like ruff), a statistics table, JSON
(versioned, with a JSON Schema in schemas/), SARIF 2.1.0 with fixes, GitHub workflow
annotations (capped per level) and Markdown for a pull-request comment. Every format carries
each finding's level: error (wbmigrate has a fix), warning (a person decides), note (info)."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from wbmigrate.check.model import FileReport, Finding, Rule
from wbmigrate.errors import Level
from wbmigrate.plan_json import indented
from wbmigrate.redact import printable
from wbmigrate.report.words import code, coloured, markdown, plural

JSON_VERSION = 1  # of the JSON report's layout (schemas/check-report.schema.json): bump on change
LEVEL_WIDTH = max(len(level.value) for level in Level)
RULE_WIDTH = max(len(rule.value) for rule in Rule)
FIX_MARK = "[*]"
# A line with its line feed, or the last without, as `patch` and `git apply` count lines
# (`str.splitlines` breaks at a form feed or `\u2028` too, numbering every later line wrong)
_LINE = re.compile(r"[^\n]*\n|[^\n]+")
REGION = ("start_line", "start_column", "end_line", "end_column", "text")  # a fix's, in JSON
Region = tuple[int, int, int, int, str]  # a replacement's, by line and column: REGION's values


def findings_of(reports: list[FileReport]) -> list[Finding]:
    return [f for r in reports for f in r.findings]


def level_counts(findings: Iterable[Finding]) -> dict[Level, int]:
    """Findings per level, every level present (in the order error, warning, note)."""
    counts = Counter(f.level for f in findings)
    return {level: counts[level] for level in Level}


def and_list(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def summary(reports: list[FileReport], fixed: int = 0) -> str:
    """One line: what was fixed, then the findings by level. Notes alone are all clear, since
    they never fail a run."""
    findings = findings_of(reports)
    counts = level_counts(findings)
    head = f"Fixed {plural(fixed, 'finding')}. " if fixed else ""
    files_read = plural(len(reports), "file")
    if not findings:
        return f"{head}All clear: no old metric names or config keys in {files_read}."
    if not counts[Level.ERROR] and not counts[Level.WARNING]:
        notes = plural(counts[Level.NOTE], "note")
        return f"{head}All clear: nothing to fix or review in {files_read} ({notes})."
    found = and_list([plural(n, level.value) for level, n in counts.items() if n])
    files = plural(len({f.path for f in findings}), "file")
    fixable = sum(f.fixable for f in findings)
    hint = f" ({fixable} fixable with --fix)" if fixable else ""
    return f"{head}Found {found} in {files}{hint}."


# --- text -------------------------------------------------------------------------------------


def to_text(
    reports: list[FileReport], fixed: int = 0, quiet: bool = False, concise: bool = False
) -> str:
    """Findings grouped by file, one aligned line each, then the summary; `concise`: one line
    per finding with its path (`path:line:col: level rule message`, what editors and grep
    read). `quiet` keeps only what fails a run (errors and warnings) and drops the summary, as
    `ruff -q` does."""
    out = []
    for report in reports:
        shown = [f for f in report.findings if not (quiet and f.level is Level.NOTE)]
        if shown and concise:
            out += [_concise_line(f) for f in shown]
        elif shown:
            out += [printable(report.path), *_text_lines(shown), ""]
    if concise and out:
        out.append("")
    if quiet:
        return "".join(f"{line}\n" for line in out[:-1])  # no blank line at the end
    return "".join(f"{line}\n" for line in [*out, summary(reports, fixed)])


def _concise_line(f: Finding) -> str:
    fix = f" {FIX_MARK}" if f.fixable else ""
    where = printable(f"{f.path}:{f.line}:{f.column}:")
    return f"{where} {coloured(f.level.value)} {f.rule.value}{fix} {printable(f.message)}"


def _text_lines(findings: list[Finding]) -> list[str]:
    width = max(len(f"{f.line}:{f.column}") for f in findings)
    return [
        f"  {f'{f.line}:{f.column}':<{width}}  {coloured(f.level.value, LEVEL_WIDTH)}  "
        f"{f.rule.value:<{RULE_WIDTH}}  {printable(f.message)}"
        f"{f'  {FIX_MARK}' if f.fixable else ''}"
        for f in findings
    ]


def to_statistics(reports: list[FileReport], fixed: int = 0, quiet: bool = False) -> str:
    """Counts per rule and level, most frequent first (as `ruff --statistics`), `[*]` where
    --fix fixes them all; then the summary, unless `quiet`."""
    counts = Counter((f.rule, f.level) for f in findings_of(reports))
    fixable = Counter((f.rule, f.level) for f in findings_of(reports) if f.fixable)
    rules, levels = list(Rule), list(Level)
    rows = sorted(
        counts.items(), key=lambda i: (-i[1], levels.index(i[0][1]), rules.index(i[0][0]))
    )
    width = max((len(str(n)) for n in counts.values()), default=1)
    out = [
        f"{n:>{width}}  {coloured(level.value, LEVEL_WIDTH)}  {rule.value:<{RULE_WIDTH}}  "
        f"{FIX_MARK if fixable[rule, level] == n else ''}".rstrip()
        for (rule, level), n in rows
    ]
    if not quiet:
        out.append(summary(reports, fixed))
    return "".join(f"{line}\n" for line in out)


# --- JSON -------------------------------------------------------------------------------------


def to_json(reports: list[FileReport]) -> str:
    """The report as schemas/check-report.schema.json describes it (`version` names the layout),
    laid out as every JSON document of wbmigrate's (`plan_json.indented`)."""
    findings = findings_of(reports)
    regions = fix_regions(reports)
    data = {
        "version": JSON_VERSION,
        "findings": [_finding_entry(f, regions(f)) for f in findings],
        "summary": {
            "files": len(reports),
            "findings": len(findings),
            "fixable": sum(f.fixable for f in findings),
            "levels": {level.value: n for level, n in level_counts(findings).items()},
            "rules": dict(Counter(f.rule.value for f in findings)),
        },
    }
    return indented(data) + "\n"


def _finding_entry(finding: Finding, fix: list[Region]) -> dict[str, Any]:
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
        "fix": [dict(zip(REGION, region, strict=True)) for region in fix],
    }


def fix_regions(reports: list[FileReport]) -> Callable[[Finding], list[Region]]:
    """The replacements of a finding of `reports` as line/column regions of its original
    file (of a path named twice, the first text, as a search would find it)."""
    texts = {report.path: report.text for report in reversed(reports)}
    offsets: dict[str, set[int]] = {}
    for f in findings_of(reports):
        offsets.setdefault(f.path, set()).update(at for r in f.fix for at in (r.start, r.end))
    places = {path: line_columns(texts.get(path, ""), found) for path, found in offsets.items()}
    return lambda f: [(*places[f.path][r.start], *places[f.path][r.end], r.text) for r in f.fix]


def line_columns(text: str, offsets: Iterable[int]) -> dict[int, tuple[int, int]]:
    """The line and column (from 1) of each offset: the line breaks between one offset and the
    next are counted in C, and no line is indexed (indexing every line of the files with
    fixes was a third of the check benchmark's JSON report, 0.1 s)."""
    found, line, last = {}, 1, 0
    for offset in sorted(offsets):
        line += text.count("\n", last, offset)
        found[offset] = (line, offset - text.rfind("\n", 0, offset))
        last = offset
    return found


# --- Markdown ---------------------------------------------------------------------------------


def to_markdown(reports: list[FileReport], fixed: int = 0) -> str:
    """A pull-request comment: errors and warnings in a table per file; notes, which never
    fail a run, folded away in a <details> block at the end."""
    out = ["### wbmigrate check", "", summary(reports, fixed), ""]
    out += _markdown_tables(reports, lambda f: f.level is not Level.NOTE)
    notes = [f for f in findings_of(reports) if f.level is Level.NOTE]
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
            f"**{code(report.path)}**",
            "",
            "| Line | Level | Rule | Finding | Fix |",
            "|---|---|---|---|---|",
        ]
        out += [
            f"| {f.line}:{f.column} | {f.level.value} | `{f.rule.value}` | "
            f"{markdown(f.message)} | {'yes' if f.fixable else ''} |"
            for f in findings
        ]
        out.append("")
    return out


def to_diff(reports: list[FileReport]) -> str:
    """The fixes as a unified diff, file by file; as git does, a last line without a newline
    says so."""
    out = []
    for report in reports:
        if report.fixed is None or report.fixed == report.text:
            continue
        before, after = (_LINE.findall(text) for text in (report.text, report.fixed))
        lines = difflib.unified_diff(before, after, f"a/{report.path}", f"b/{report.path}")
        out += [
            line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n"
            for line in lines
        ]
    return "".join(out)
