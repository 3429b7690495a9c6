"""What `verify` says: per object, each check that does not hold; text, Markdown, JSON
(`wbmigrate-verify/1`), SARIF 2.1.0 and GitHub annotations (by `report.ci`'s writers)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from wbmigrate.plan_json import indented
from wbmigrate.redact import printable
from wbmigrate.report.ci import Annotation, github, sarif, sarif_result, sarif_rule
from wbmigrate.report.words import coloured, markdown, plural
from wbmigrate.verify import Check, Finding, Verification

FORMAT = "wbmigrate-verify/1"
HELP = {
    Check.OLD_NAME_LEFT: "an old metric name is left where the migration's mode does not keep it",
    Check.SPLIT_LOST: "metrics the mapping keeps distinct (in-flight and in-queue) are merged "
    "or one of them is gone",
    Check.UNLOGGED_KEY: "a panel or alert shows a key no run of the project has logged",
    Check.CONFIG_INVALID: "a prime-rl config that prime-rl's own schema rejects",
}


def summary(run: Verification) -> str:
    counts = Counter(f.check for f in run.found)
    errors = sum(1 for v in run.verified if v.error)
    parts = [f"{plural(len(run.verified), 'object')} verified"]
    parts.append(", ".join(f"{counts[c]} {c.value}" for c in Check if counts[c]) or "all hold")
    if errors:
        parts.append(f"{errors} could not be read")
    return "Verify: " + "; ".join(parts) + "."


def to_text(run: Verification) -> str:
    """Escaped, then laid out, then the levels coloured."""
    lines = [printable(f"Verify {run.target} (against {run.baseline or 'the current form alone'})")]
    for item in run.verified:
        if item.error:
            heading = f"{item.title}  ({item.source.origin})"
            lines += [printable(heading), f"  {coloured('error')}: {printable(item.error)}"]
    by_object: dict[str, list[Finding]] = {}
    for finding in run.found:
        by_object.setdefault(f"{finding.title}  ({finding.origin})", []).append(finding)
    for heading, items in by_object.items():
        lines.append(printable(heading))
        for f in items:
            where = printable(f"{f.check.value:<13} {' › '.join(f.where)}: {f.message}")
            lines.append(f"  {coloured(f.level.value, 7)} {where}")
    lines.append(printable(summary(run)))
    return "".join(line + "\n" for line in lines)


def to_markdown(run: Verification) -> str:
    lines = [f"## wbmigrate verify {run.target}", "", summary(run).removeprefix("Verify: ")]
    if run.found:
        lines += ["", "| Level | Check | Where | Problem |", "|---|---|---|---|"]
        lines += [
            f"| {f.level.value} | `{f.check.value}` | {markdown(f.label)} | {markdown(f.message)} |"
            for f in run.found
        ]
    lines += ["", f"_Compared with {run.baseline or 'the current form alone'}._", ""]
    return "\n".join(lines)


def to_json(run: Verification) -> str:
    counts = Counter(f.check for f in run.found)
    document = {
        "format": FORMAT,
        "target": run.target,
        "baseline": run.baseline or None,
        "findings": [_entry(f) for f in run.found],
        "unreadable": [
            {"name": v.title, "origin": v.source.origin, "error": v.error}
            for v in run.verified
            if v.error
        ],
        "summary": {
            "objects": len(run.verified),
            **{check.value: counts[check] for check in Check},
            "holds": run.holds,
        },
    }
    return indented(document) + "\n"


def _entry(finding: Finding) -> dict[str, Any]:
    return {
        "check": finding.check.value,
        "level": finding.level.value,
        "object": finding.title,
        "origin": finding.origin,
        "where": list(finding.where),
        "pointer": finding.pointer,
        "message": finding.message,
    }


def to_sarif(run: Verification) -> str:
    """A file's findings at the file; a live object's at a logical location
    (`team/project › report "X" › panel "Y"`)."""
    checks = list(Check)
    results = []
    for f in run.found:
        name = f"{run.target} › {f.label}"
        where: dict[str, Any] = {
            "logicalLocations": [{"fullyQualifiedName": name, "kind": "object"}]
        }
        if run.files:
            where["physicalLocation"] = {"artifactLocation": {"uri": f.origin}}
        results.append(
            sarif_result(f.check.value, checks.index(f.check), f.level.value, f.message, where)
        )
    return sarif([sarif_rule(c.value, HELP[c], c.level.value) for c in checks], results, None)


def to_github(run: Verification) -> str:
    annotations = [
        Annotation(
            f.level,
            f"wbmigrate verify {f.check.value}",
            f"{f.label}: {f.message}",
            f.origin if run.files else None,
        )
        for f in run.found
    ]
    return "".join(line + "\n" for line in github(annotations, "verify"))


RENDERERS: dict[str, Callable[[Verification], str]] = {
    "text": to_text,
    "markdown": to_markdown,
    "json": to_json,
    "sarif": to_sarif,
    "github": to_github,
}
