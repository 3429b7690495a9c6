"""Whole metric names inside the strings W&B stores: accessors, `${...}` expressions, free text.

A metric name is made of word characters and `/ _ . -`; a name only matches where it is not
part of a longer one, so `eval/off_policy/mean` and `off_policy/mean_smoothed` never match
`off_policy/mean`. Config and run accessors (`config:lr.value`, `run:state`) are not metrics.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

# Prefixes that wrap a metric name, as W&B writes them in panel and run-table fields.
METRIC_PREFIXES = ("summary:", "s::", "summary_metrics.", "keys_info.keys.")
_NOT_METRIC = ("config:", "c::", "run:", "tags:", "config.")


@dataclass(frozen=True)
class Accessor:
    """A field value split into the wrapper W&B put around a metric name and the name."""

    prefix: str
    name: str

    def with_name(self, name: str) -> str:
        return self.prefix + name


def accessor(value: object) -> Accessor | None:
    """The metric inside `value`, or None when it names no metric (a config key, a run field)."""
    if not isinstance(value, str) or not value or value.startswith(_NOT_METRIC):
        return None
    for prefix in METRIC_PREFIXES:
        if value.startswith(prefix):
            return Accessor(prefix, value[len(prefix) :])
    return Accessor("", value)


def series_accessor(value: object) -> Accessor | None:
    """`<runId>:<metric>`, the keys of a line plot's per-series overrides."""
    if not isinstance(value, str) or ":" not in value:
        return None
    run_id, _, name = value.partition(":")
    return Accessor(run_id + ":", name)


# --- names inside longer strings ----------------------------------------------------------

_NAME_CHAR = r"[\w/\-]"
_TOKEN = re.compile(r"\$\{([^}]*)\}")


def mention_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    """Whole-name occurrences of any of `names` in text. A final `.` ends a sentence, not a
    name, unless a name character follows it."""
    ordered = sorted(set(names), key=len, reverse=True)
    if not ordered:
        return None
    alternatives = "|".join(map(re.escape, ordered))
    return re.compile(rf"(?<![\w/.\-])(?:{alternatives})(?!{_NAME_CHAR}|\.{_NAME_CHAR})")


def mentions(text: str, pattern: re.Pattern[str] | None) -> list[str]:
    """The names `pattern` finds in `text`, in order, without repeats."""
    if pattern is None:
        return []
    return list(dict.fromkeys(pattern.findall(text)))


def replace_mentions(
    text: str, pattern: re.Pattern[str] | None, new_name: Callable[[str], str | None]
) -> str:
    """`text` with each whole-name mention replaced by `new_name(name)` (None keeps it)."""
    if pattern is None:
        return text
    return pattern.sub(lambda m: new_name(m.group()) or m.group(), text)


def expression_names(expression: str) -> list[Accessor]:
    """The metrics an expression refers to as `${name}` (or `${summary:name}`)."""
    found = (accessor(m.group(1).strip()) for m in _TOKEN.finditer(expression))
    return [a for a in found if a is not None]


def replace_in_expression(expression: str, new_name: Callable[[str], str | None]) -> str:
    """`expression` with each `${name}` token whose name `new_name` maps replaced."""

    def swap(match: re.Match[str]) -> str:
        found = accessor(match.group(1).strip())
        replacement = new_name(found.name) if found else None
        return "${" + found.with_name(replacement) + "}" if found and replacement else match.group()

    return _TOKEN.sub(swap, expression)
