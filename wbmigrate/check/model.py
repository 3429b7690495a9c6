"""What `check` reports: findings located at file:line:column, with the fix for each."""

from __future__ import annotations

import bisect
import enum
import itertools
import operator
from dataclasses import dataclass, field
from typing import Any


class Rule(enum.Enum):
    RENAMED_METRIC = "renamed-metric"
    REMOVED_METRIC = "removed-metric"
    RENAMED_CONFIG_KEY = "renamed-config-key"
    NEEDS_REVIEW = "needs-review"
    PARSE_ERROR = "parse-error"

    @property
    def level(self) -> str:
        """SARIF level: a reference to an old name is an error; a maybe is a warning."""
        return "warning" if self is Rule.NEEDS_REVIEW else "error"


RULE_HELP = {
    Rule.RENAMED_METRIC: "A metric the mapping renames: new runs log it under its new name.",
    Rule.REMOVED_METRIC: "A metric that is no longer logged.",
    Rule.RENAMED_CONFIG_KEY: "A config key or flag the mapping renames: the old spelling fails "
    "validation.",
    Rule.NEEDS_REVIEW: "Something that may refer to an old name and that wbmigrate will not "
    "change safely: free text, a computed key, a regex.",
    Rule.PARSE_ERROR: "A file that could not be read or parsed.",
}


@dataclass(frozen=True)
class Replacement:
    """Replace text[start:end] with `text` (offsets into the file's original text)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Finding:
    path: str
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int
    rule: Rule
    message: str
    fix: tuple[Replacement, ...] = ()  # empty: nothing wbmigrate can change safely

    @property
    def fixable(self) -> bool:
        return bool(self.fix)


@dataclass(frozen=True)
class FileReport:
    """One file: its findings (suppressed ones removed) and its text with every fix applied."""

    path: str
    findings: tuple[Finding, ...] = ()
    text: str = ""
    fixed: str | None = None  # None when nothing can be fixed
    suppressed: int = 0


@dataclass
class Checked:
    """A file's findings, and how to fix a chosen subset of them (None: apply their fixes)."""

    findings: list[Finding] = field(default_factory=list)
    fix_text: Any = None  # Callable[[list[Finding]], str | None] | None


@dataclass
class Lines:
    """Offsets to 1-based line and column."""

    text: str
    starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        # each line starts one past the end of the one before: sums in C, not a Python loop
        lengths = itertools.accumulate(map(len, self.text.split("\n")[:-1]))
        self.starts = [0, *map(operator.add, lengths, itertools.count(1))]

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset) - 1
        return line + 1, offset - self.starts[line] + 1

    def finding(
        self,
        path: str,
        start: int,
        end: int,
        rule: Rule,
        message: str,
        fix: tuple[Replacement, ...] = (),
    ) -> Finding:
        line, column = self.position(start)
        end_line, end_column = self.position(max(start, end))
        return Finding(path, line, column, end_line, end_column, rule, message, fix)


def apply_fixes(text: str, findings: tuple[Finding, ...] | list[Finding]) -> str | None:
    """`text` with every finding's replacements applied; None when there is none, or when
    two fixes overlap (the file is then left for a person)."""
    replacements = sorted({r for f in findings for r in f.fix}, key=lambda r: (r.start, r.end))
    if not replacements:
        return None
    out, pos = [], 0
    for r in replacements:
        if r.start < pos:
            return None
        out += [text[pos : r.start], r.text]
        pos = r.end
    return "".join(out) + text[pos:]
