"""Which findings are not reported: the rules a run ignores (everywhere, or in files matching
a glob), and those a comment on their line suppresses with a reason."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from wbmigrate.check.config import CheckConfig
from wbmigrate.check.model import Finding, Rule

# `# wbmigrate: ignore[rule, rule] reason` (or an HTML comment in Markdown)
_STRING_END = re.compile(r'(?:\\n)?"\s*,?\s*$')  # the end of a notebook's source line
SUPPRESSION = re.compile(r"(?:#|<!--)\s*wbmigrate:\s*ignore\[(?P<rules>[^\]]*)\](?P<reason>.*)")


@dataclass(frozen=True)
class Ignores:
    rules: frozenset[Rule] = frozenset()
    per_file: tuple[tuple[str, frozenset[Rule]], ...] = ()
    base: Path | None = None  # per-file globs are relative to this folder

    @classmethod
    def of(cls, config: CheckConfig, extra: Iterable[Rule] = ()) -> Ignores:
        base = config.path.parent if config.path else None
        return cls(config.ignore | frozenset(extra), tuple(config.per_file_ignores.items()), base)

    def covers(self, path: Path, rule: Rule) -> bool:
        if rule in self.rules:
            return True
        if not self.per_file:
            return False
        relative = _relative(path, self.base)
        return any(
            rule in rules and fnmatch.fnmatch(relative, glob) for glob, rules in self.per_file
        )


def _relative(path: Path, base: Path | None) -> str:
    try:
        return path.resolve().relative_to((base or Path.cwd()).resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def suppress(
    text: str, findings: list[Finding], path: Path, ignores: Ignores
) -> tuple[list[Finding], int]:
    """Drop ignored findings and those a same-line comment suppresses with a reason."""
    comments = _suppressions(text)
    kept, suppressed = [], 0
    for finding in findings:
        rules, reason = comments.get(finding.line, (set(), ""))
        named = finding.rule.value in rules or "*" in rules
        if ignores.covers(path, finding.rule) or (named and reason):
            suppressed += 1
            continue
        if named:
            message = finding.message + " (the suppression on this line needs a reason)"
            finding = replace(finding, message=message)
        kept.append(finding)
    return kept, suppressed


def _suppressions(text: str) -> dict[int, tuple[set[str], str]]:
    found: dict[int, tuple[set[str], str]] = {}
    if "wbmigrate:" not in text:
        return found
    for number, line in enumerate(text.splitlines(), start=1):
        match = SUPPRESSION.search(line)
        if match:
            rules = {r.strip() for r in match["rules"].split(",") if r.strip()}
            found[number] = (rules, _reason(match["reason"]))
    return found


def _reason(text: str) -> str:
    """The reason a suppression gives, without what closes the comment or, in a notebook, the
    JSON string it sits in (`\\n",`): those are no reason."""
    text = _STRING_END.sub("", text.replace("-->", "")).strip()
    return text if re.search(r"[^\W_]", text) else ""
