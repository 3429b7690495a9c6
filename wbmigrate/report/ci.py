"""Results for code scanning and CI, one writer of each, for `check` and `verify`: SARIF 2.1.0
and GitHub workflow annotations (capped per level, as GitHub shows them). `check`'s findings,
with each fix's replacements, as both."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from wbmigrate import __version__
from wbmigrate.check.model import RULE_HELP, FileReport, Finding, Rule
from wbmigrate.errors import Level
from wbmigrate.plan_json import indented
from wbmigrate.redact import printable
from wbmigrate.report.check import Region, and_list, findings_of, fix_regions, summary
from wbmigrate.report.words import plural

GITHUB_CAP = 10  # GitHub shows at most 10 annotations of each level per step
GITHUB_LEVELS = {Level.ERROR: "error", Level.WARNING: "warning", Level.NOTE: "notice"}
ANNOTATION_REGION = ("line", "col", "endLine", "endColumn")  # an annotation's, in order
SARIF_REGION = ("startLine", "startColumn", "endLine", "endColumn")


# --- SARIF ------------------------------------------------------------------------------------


def sarif(rules: list[dict[str, Any]], results: list[dict[str, Any]], ok: bool | None) -> str:
    """A SARIF 2.1.0 log of one run; `ok` (when given) says whether wbmigrate failed on none."""
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "wbmigrate", "version": __version__, "rules": rules}}
    }
    if ok is not None:
        run["invocations"] = [{"executionSuccessful": ok}]
    run["results"] = results
    log = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0"}
    return indented({**log, "runs": [run]}) + "\n"


def sarif_rule(rule: str, help_: str, level: str, name: str | None = None) -> dict[str, Any]:
    named = {"name": name} if name else {}
    return {
        "id": rule,
        **named,
        "shortDescription": {"text": help_},
        "defaultConfiguration": {"level": level},
    }


def sarif_result(
    rule: str, index: int, level: str, message: str, location: dict[str, Any]
) -> dict[str, Any]:
    return {
        "ruleId": rule,
        "ruleIndex": index,
        "level": level,
        "message": {"text": message},
        "locations": [location],
    }


# --- GitHub annotations -----------------------------------------------------------------------


@dataclass(frozen=True)
class Annotation:
    """One `::error`, `::warning` or `::notice` line."""

    level: Level
    title: str
    message: str
    file: str | None = None
    region: tuple[int, int, int, int] | None = None  # line, column, end line, end column


def github(annotations: list[Annotation], command: str, cap: int = GITHUB_CAP) -> list[str]:
    """The annotations, at most `cap` of each level (GitHub drops the rest). When some are left
    out, the last notice slot says how many and where the full list is, so that line is shown."""
    counts = Counter(a.level for a in annotations)
    caps = dict.fromkeys(Level, cap)
    if any(n > cap for n in counts.values()):
        caps[Level.NOTE] = cap - 1
    shown: Counter[Level] = Counter()
    out = []
    for a in annotations:
        if shown[a.level] < caps[a.level]:
            shown[a.level] += 1
            out.append(_annotation(a))
    hidden = {level: counts[level] - shown[level] for level in Level}
    if any(hidden.values()):
        out.append(_hidden_notice(hidden, command, cap))
    return out


def _annotation(a: Annotation) -> str:
    places = [] if a.file is None else [f"file={_property(a.file)}"]
    if a.region:
        places += [f"{k}={v}" for k, v in zip(ANNOTATION_REGION, a.region, strict=True)]
    properties = ",".join([*places, f"title={_property(a.title)}"])
    return f"::{GITHUB_LEVELS[a.level]} {properties}::{_data(a.message)}"


def _hidden_notice(hidden: dict[Level, int], command: str, cap: int) -> str:
    """`3 more errors are...`, or `12 more findings (3 errors and 9 notes) are...`."""
    total = sum(hidden.values())
    counted = [plural(n, level.value) for level, n in hidden.items() if n]
    what = (
        f"{total} more {counted[0].partition(' ')[2]}"
        if len(counted) == 1
        else f"{total} more findings ({and_list(counted)})"
    )
    return (
        f"::notice title=wbmigrate::{what} {'is' if total == 1 else 'are'} not annotated "
        f"(GitHub shows {cap} per level); run `wbmigrate {command}` locally or see the SARIF "
        "upload for the full list"
    )


def _data(text: str) -> str:
    """GitHub's escapes, then every other control character, ANSI escape or bidi override
    shown escaped (GitHub decodes only its own)."""
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


# --- check's findings -------------------------------------------------------------------------


def to_sarif(reports: list[FileReport]) -> str:
    """Each result at its finding's level with its fix, each rule with its default level, and
    an invocation that is unsuccessful when wbmigrate failed on a file."""
    rules, findings, regions = list(Rule), findings_of(reports), fix_regions(reports)
    results = []
    for f in findings:
        where = {"artifactLocation": {"uri": f.path}, "region": _region(f)}
        result = sarif_result(
            f.rule.value, rules.index(f.rule), f.level.value, f.message, {"physicalLocation": where}
        )
        if f.fixable:
            result["fixes"] = [_sarif_fix(f, regions(f))]
        results.append(result)
    described = [
        sarif_rule(r.value, RULE_HELP[r], r.level.value, r.name.title().replace("_", ""))
        for r in rules
    ]
    return sarif(described, results, not any(f.internal for f in findings))


def _sarif_fix(finding: Finding, regions: list[Region]) -> dict[str, Any]:
    replacements = [
        {
            "deletedRegion": dict(zip(SARIF_REGION, r[:4], strict=True)),
            "insertedContent": {"text": r[4]},
        }
        for r in regions
    ]
    change = {"artifactLocation": {"uri": finding.path}, "replacements": replacements}
    return {"description": {"text": "wbmigrate check --fix"}, "artifactChanges": [change]}


def _region(f: Finding) -> dict[str, int]:
    """SARIF's region: a region on one line never ends before it starts."""
    end_column = f.end_column if f.end_line > f.line else max(f.end_column, f.column)
    return dict(zip(SARIF_REGION, (f.line, f.column, f.end_line, end_column), strict=True))


def to_github(reports: list[FileReport], cap: int = GITHUB_CAP) -> str:
    """The findings as annotations (see `github`); the summary ends the log."""
    annotations = [
        Annotation(
            f.level,
            f"wbmigrate {f.rule.value}",
            f.message,
            f.path,
            (f.line, f.column, f.end_line, f.end_column),
        )
        for f in findings_of(reports)
    ]
    return "\n".join([*github(annotations, "check", cap), summary(reports)]) + "\n"
