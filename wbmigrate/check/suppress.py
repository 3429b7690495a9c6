"""Which findings are not reported: the rules a run ignores (everywhere, or in files matching
a glob), and those a comment on their line suppresses with a reason."""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from wbmigrate.check.config import CheckConfig
from wbmigrate.check.model import Finding, Lines, Rule

# `# wbmigrate: ignore[rule, rule] reason` (or an HTML comment in Markdown)
_STRING_END = re.compile(r'(?:\\n)?"\s*,?\s*$')  # the end of a notebook's source line
SUPPRESSION = re.compile(
    r"(?:#|<!--)[ \t]*wbmigrate:[ \t]*ignore\[(?P<rules>[^\]\n]*)\](?P<reason>.*)"
)
RULE_NAME = re.compile(r"[^,\s]+")
KNOWN = [*(rule.value for rule in Rule), "*"]


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
    """Drop ignored findings and those a same-line comment suppresses with a reason. A rule a
    suppression names that wbmigrate does not have is a finding of its own (`unknown-rule`): a
    misspelt rule suppresses nothing, and the reader should know why."""
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
    unknown = [f for f in _unknown_rules(text, path) if not ignores.covers(path, f.rule)]
    return sorted(kept + unknown, key=lambda f: (f.line, f.column)) if unknown else kept, suppressed


def _suppressions(text: str) -> dict[int, tuple[set[str], str]]:
    found: dict[int, tuple[set[str], str]] = {}
    if "wbmigrate:" not in text:
        return found
    for number, line in enumerate(text.split("\n"), start=1):  # as `Lines` numbers findings
        match = SUPPRESSION.search(line)
        if match:
            rules = {r.strip() for r in match["rules"].split(",") if r.strip()}
            found[number] = (rules, _reason(match["reason"]))
    return found


def _unknown_rules(text: str, path: Path) -> list[Finding]:
    """Each rule name in a suppression that is no rule of wbmigrate's, at its place."""
    if "wbmigrate:" not in text:
        return []
    lines, found = Lines(text), []
    for match in SUPPRESSION.finditer(text):
        for name in RULE_NAME.finditer(match["rules"]):
            if name[0] in KNOWN:
                continue
            close = difflib.get_close_matches(name[0], KNOWN, n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            start = match.start("rules") + name.start()
            message = f'"{name[0]}" is no rule of wbmigrate\'s: it suppresses nothing{hint}'
            end = start + len(name[0])
            found.append(lines.finding(path.as_posix(), start, end, Rule.UNKNOWN_RULE, message))
    return found


def _reason(text: str) -> str:
    """The reason a suppression gives, without what closes the comment or, in a notebook, the
    JSON string it sits in (`\\n",`): those are no reason."""
    text = _STRING_END.sub("", text.replace("-->", "")).strip()
    return text if re.search(r"[^\W_]", text) else ""
