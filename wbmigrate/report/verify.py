"""What `verify` says: per object, each check that does not hold; text, Markdown, JSON
(`wbmigrate-verify/1`), SARIF 2.1.0 and GitHub annotations (by `report.ci`'s writers)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from wbmigrate.report.ci import Annotation, github, sarif, sarif_result, sarif_rule
from wbmigrate.report.words import plural, printable
from wbmigrate.verify import LEVELS, Check, Finding, Verified

FORMAT = "wbmigrate-verify/1"
HELP = {
    Check.OLD_NAME_LEFT: "an old metric name is left where the migration's mode does not keep it",
    Check.SPLIT_LOST: "metrics the mapping keeps distinct (in-flight and in-queue) are merged "
    "or one of them is gone",
    Check.UNLOGGED_KEY: "a panel or alert shows a key no run of the project has logged",
    Check.CONFIG_INVALID: "a prime-rl config that prime-rl's own schema rejects",
}


def findings(verified: Iterable[Verified], extra: Iterable[Finding] = ()) -> list[Finding]:
    return [f for v in verified for f in v.findings] + list(extra)


def summary(verified: list[Verified], found: list[Finding]) -> str:
    counts = Counter(f.check for f in found)
    errors = sum(1 for v in verified if v.error)
    parts = [f"{plural(len(verified), 'object')} verified"]
    parts.append(", ".join(f"{counts[c]} {c.value}" for c in Check if counts[c]) or "all hold")
    if errors:
        parts.append(f"{errors} could not be read")
    return "Verify: " + "; ".join(parts) + "."


def to_text(target: str, verified: list[Verified], found: list[Finding], baseline: str) -> str:
    lines = [f"Verify {target} (against {baseline or 'the current form alone'})"]
    for item in verified:
        if item.error:
            lines.append(f"{item.title}  ({item.source.origin})\n  error: {item.error}")
    by_object: dict[str, list[Finding]] = {}
    for finding in found:
        by_object.setdefault(f"{finding.title}  ({finding.origin})", []).append(finding)
    for heading, items in by_object.items():
        lines.append(heading)
        for f in items:
            where = " › ".join(f.where)
            lines.append(f"  {f.level:<7} {f.check.value:<13} {where}: {f.message}")
    lines.append(summary(verified, found))
    return "".join(printable(line) + "\n" for line in "\n".join(lines).split("\n"))


def to_markdown(target: str, verified: list[Verified], found: list[Finding], baseline: str) -> str:
    lines = [f"## wbmigrate verify {target}", "", summary(verified, found).removeprefix("Verify: ")]
    if found:
        lines += ["", "| Level | Check | Where | Problem |", "|---|---|---|---|"]
        lines += [
            f"| {f.level} | `{f.check.value}` | {_md(f.label)} | {_md(f.message)} |" for f in found
        ]
    lines += ["", f"_Compared with {baseline or 'the current form alone'}._", ""]
    return "\n".join(lines)


def to_json(target: str, verified: list[Verified], found: list[Finding], baseline: str) -> str:
    counts = Counter(f.check for f in found)
    document = {
        "format": FORMAT,
        "target": target,
        "baseline": baseline or None,
        "findings": [_entry(f) for f in found],
        "unreadable": [
            {"name": v.title, "origin": v.source.origin, "error": v.error}
            for v in verified
            if v.error
        ],
        "summary": {
            "objects": len(verified),
            **{check.value: counts[check] for check in Check},
            "holds": not found and not any(v.error for v in verified),
        },
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _entry(finding: Finding) -> dict[str, Any]:
    return {
        "check": finding.check.value,
        "level": finding.level,
        "object": finding.title,
        "origin": finding.origin,
        "where": list(finding.where),
        "pointer": finding.pointer,
        "message": finding.message,
    }


def to_sarif(target: str, found: list[Finding], files: bool) -> str:
    """A file's findings at the file; a live object's at a logical location
    (`team/project › report "X" › panel "Y"`)."""
    checks = list(Check)
    results = []
    for f in found:
        where: dict[str, Any] = {
            "logicalLocations": [{"fullyQualifiedName": f"{target} › {f.label}", "kind": "object"}]
        }
        if files:
            where["physicalLocation"] = {"artifactLocation": {"uri": f.origin}}
        results.append(
            sarif_result(f.check.value, checks.index(f.check), f.level, f.message, where)
        )
    return sarif([sarif_rule(c.value, HELP[c], LEVELS[c]) for c in checks], results, None)


def to_github(found: list[Finding], files: bool) -> str:
    annotations = [
        Annotation(
            f.level,
            f"wbmigrate verify {f.check.value}",
            f"{f.label}: {f.message}",
            f.origin if files else None,
        )
        for f in found
    ]
    return "".join(line + "\n" for line in github(annotations, "verify"))


def _md(text: str) -> str:
    return printable(text).replace("|", "\\|").replace("<", "&lt;")
