"""Command-line flags (`--orchestrator.max-off-policy-steps 16`) in shell scripts, CI files,
Makefiles and the code blocks of Markdown files. A flag is a whole token:
`--max-off-policy-steps-hint` is another flag."""

from __future__ import annotations

import re
from collections.abc import Iterator

from wbmigrate.check.model import Checked, Lines, Replacement, Rule
from wbmigrate.check.targets import Targets

_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[^\n]*\n(.*?)^\1\2[ \t]*$", re.S | re.M)


def check_flags(label: str, text: str, targets: Targets, markdown: bool = False) -> Checked:
    pattern = targets.flag_pattern
    if pattern is None:
        return Checked()
    lines = Lines(text)
    checked = Checked()
    for start, end in _regions(text, markdown):
        for match in pattern.finditer(text, start, end):
            old = match.group()
            new = targets.flags[old]
            checked.findings.append(
                lines.finding(
                    label,
                    match.start(),
                    match.end(),
                    Rule.RENAMED_CONFIG_KEY,
                    f"{old} -> {new} (flag)",
                    (Replacement(match.start(), match.end(), new),),
                )
            )
    return checked


def _regions(text: str, markdown: bool) -> Iterator[tuple[int, int]]:
    """Where flags count: the whole file, or a Markdown file's fenced code blocks."""
    if not markdown:
        yield 0, len(text)
        return
    for fence in _FENCE.finditer(text):
        yield fence.start(3), fence.end(3)
