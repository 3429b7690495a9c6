"""What `check` reports: findings located at file:line:column, with the fix for each."""

from __future__ import annotations

import bisect
import enum
import itertools
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from wbmigrate.edit.edits import Edit, Path
from wbmigrate.edit.replacement import Replacement, apply
from wbmigrate.errors import Level, bug

if TYPE_CHECKING:
    from wbmigrate.safe_write import Stamp


Fix = tuple[Replacement, ...]  # the replacements that fix a finding, in the file's text
T = TypeVar("T")
# Where Python ends a line (`ast` numbers lines so): a lone carriage return too, a form feed not
PYTHON_LINE_END = re.compile(r"\r\n?|\n")
BOM = "\ufeff"  # a UTF-8 byte-order mark, as the first character of a decoded text


class Rule(enum.Enum):
    RENAMED_METRIC = "renamed-metric"
    REMOVED_METRIC = "removed-metric"
    RENAMED_CONFIG_KEY = "renamed-config-key"
    DEPRECATED_CONFIG = "deprecated-config"
    REMOVED_CONFIG_KEY = "removed-config-key"
    CONFIG_INVALID = "config-invalid"
    NOT_VALIDATED = "not-validated"
    NEEDS_REVIEW = "needs-review"
    MENTION = "mention"
    PARSE_ERROR = "parse-error"
    UNKNOWN_RULE = "unknown-rule"
    INTERNAL_ERROR = "internal-error"

    @property
    def level(self) -> Level:
        """The level a finding of this rule usually has (a finding without a fix is a warning)."""
        warnings = (Rule.NEEDS_REVIEW, Rule.PARSE_ERROR, Rule.CONFIG_INVALID, Rule.UNKNOWN_RULE)
        if self in (Rule.MENTION, Rule.NOT_VALIDATED):
            return Level.NOTE
        # a deprecated config key's old spelling still loads: fix it, nothing fails yet
        if self in warnings or self is Rule.DEPRECATED_CONFIG:
            return Level.WARNING
        return Level.ERROR


RULE_HELP = {
    Rule.RENAMED_METRIC: "A metric the mapping renames: new runs log it under its new name.",
    Rule.REMOVED_METRIC: "A metric that is no longer logged.",
    Rule.RENAMED_CONFIG_KEY: "A config key or flag the mapping renames: the old spelling fails "
    "validation.",
    Rule.DEPRECATED_CONFIG: "A config key or flag the mapping renames while the old spelling "
    "still loads (an alias keeps it): a warning, fixed by --fix.",
    Rule.REMOVED_CONFIG_KEY: "A config key or flag the framework no longer declares: the config "
    "fails validation, and there is no right value to write, so --fix leaves it.",
    Rule.CONFIG_INVALID: "A key or value prime-rl's own config schema rejects (check --validate).",
    Rule.NOT_VALIDATED: "A prime-rl config --validate could not validate: which config it is is "
    "unclear, or prime-rl's loader failed on it.",
    Rule.NEEDS_REVIEW: "An old name in a place wbmigrate will not change safely: code that "
    "reads history, an identifier, a computed key, a regex, a place it does not understand.",
    Rule.MENTION: "An old name in a comment, docstring or prose: information, never a failure.",
    Rule.PARSE_ERROR: "A file that could not be read or parsed.",
    Rule.UNKNOWN_RULE: "A suppression comment naming a rule wbmigrate does not have: it "
    "suppresses nothing.",
    Rule.INTERNAL_ERROR: "wbmigrate failed on this file: a bug, please report it.",
}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int
    rule: Rule
    message: str
    fix: Fix = ()  # empty: nothing wbmigrate can change safely
    span: tuple[int, int] = (0, 0)  # offsets of what the finding is about, in the file's text

    @property
    def fixable(self) -> bool:
        return bool(self.fix)

    @property
    def identity(self) -> tuple[object, ...]:
        """What identifies a finding when it comes back to be fixed: a suppression without a
        reason changes its message, nothing else."""
        return self.span, self.rule, self.fix

    @property
    def level(self) -> Level:
        """Error when wbmigrate can fix it; a finding it cannot fix needs a person (warning),
        but a removed config key fails to load whatever a person decides: an error."""
        level = self.rule.level
        unfixable = self.internal or self.rule is Rule.REMOVED_CONFIG_KEY
        if level is Level.ERROR and not self.fix and not unfixable:
            return Level.WARNING
        return level

    @property
    def internal(self) -> bool:
        return self.rule is Rule.INTERNAL_ERROR


@dataclass(frozen=True)
class FileReport:
    """One file: its findings (suppressed ones removed) and its text with every fix applied."""

    path: str
    findings: tuple[Finding, ...] = ()
    text: str = ""  # as read; empty for a file the prefilter found nothing in to look at
    fixed: str | None = None  # None when nothing can be fixed
    suppressed: int = 0
    read: Stamp | None = None  # the file as read: a fix is written only over that


@dataclass
class Pending:
    """A finding before it is located: `path` (in its host document) and whether it is about
    the key there, its rule and message, and the edits that fix it (none: not fixable)."""

    path: Path
    key: bool
    rule: Rule
    message: str
    edits: list[Edit] = field(default_factory=list)
    unit: int = -1  # the spec whose migration note goes with the fix (-1: none)
    whole: bool = True  # False: only the start of `path` (names inside still get results)
    name: str | None = None  # a name inside the string at `path` (an alert's filter JSON)


@dataclass(frozen=True)
class Place:
    """The kind of place an old name is in, as the residual pass reports it: in a comment,
    docstring or prose it is a note; anywhere else a person must review it."""

    what: str  # "a comment", "a Python identifier", "a string", "prose", ...
    prose: bool = False


@dataclass
class Checked:
    """A file's findings, and how to fix a chosen subset of them (None: apply their fixes).

    `seen` holds the spans of old names a checker looked at and found fine (an old key kept
    beside its new one in dual mode), so the residual pass leaves them alone; `place` names
    the kind of place an offset of the text is in (a comment, a string, prose...), for the
    residual pass's results."""

    findings: list[Finding] = field(default_factory=list)
    fix_text: Any = None  # Callable[[list[Finding]], str | None] | None
    seen: list[tuple[int, int]] = field(default_factory=list)
    place: Callable[[int], Place] | None = None


class Lines:
    """Offsets to 1-based line and column, by bisection of the line starts (built on first use:
    most texts get no lookup at all)."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def starts(self) -> list[int]:
        """The offset each line starts at."""
        # each line starts one past the end of the one before: sums in C, not a Python loop
        lengths = itertools.accumulate(map(len, self.text.split("\n")[:-1]))
        return [0, *map(operator.add, lengths, itertools.count(1))]

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset) - 1
        return line + 1, offset - self.starts[line] + 1

    @cached_property
    def python_starts(self) -> list[int]:
        """The offset each line starts at as `ast` numbers lines: a lone carriage return ends
        one too, so in a file that holds one, line feeds alone put a node lines too early; and
        the first starts after a byte-order mark, which Python skips (and `ast` never sees)."""
        first = len(BOM) if self.text.startswith(BOM) else 0
        return [first, *(match.end() for match in PYTHON_LINE_END.finditer(self.text))]

    def offset(self, line: int, byte_column: int) -> int:
        """A character offset from an `ast` position (1-based line, UTF-8 byte column)."""
        start = self.python_starts[line - 1]
        raw = self.text[start : start + byte_column + 1].encode()[:byte_column]
        return start + len(raw.decode(errors="ignore"))

    def finding(
        self, path: str, start: int, end: int, rule: Rule, message: str, fix: Fix = ()
    ) -> Finding:
        end = max(start, end)
        return Finding(
            path, *self.position(start), *self.position(end), rule, message, fix, (start, end)
        )


def guarded(
    label: str, work: Callable[[], T], failed: Callable[[Finding], T], by: str = "wbmigrate"
) -> T:
    """`work()` on one file, or `failed` of the one finding that says why it could not be done:
    the file is nested too deeply to read, or `by` (wbmigrate) failed on it, a bug of ours, said
    for this file alone so that the run goes on."""
    try:
        return work()
    except RecursionError:
        return failed(Lines("").finding(label, 0, 0, Rule.PARSE_ERROR, "nested too deeply to read"))
    except Exception as exc:
        message = bug(exc, "this file", by, text=True)
        return failed(Lines("").finding(label, 0, 0, Rule.INTERNAL_ERROR, message))


def apply_fixes(text: str, findings: tuple[Finding, ...] | list[Finding]) -> str | None:
    """`text` with every finding's replacements applied; None when there is none, or when
    two fixes overlap (the file is then left for a person)."""
    replacements = [r for f in findings for r in f.fix]
    return apply(text, replacements) if replacements else None
