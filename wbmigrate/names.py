"""Whole metric names inside the strings W&B stores: accessors, `${...}` expressions, free text.

A metric name is made of word characters and `/ _ . -`; a name only matches where it is not
part of a longer one, so `eval/off_policy/mean` and `off_policy/mean_smoothed` never match
`off_policy/mean`. Config and run accessors (`config:lr.value`, `run:state`) are not metrics.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

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
    return _accessor(value) if isinstance(value, str) else None


@functools.lru_cache(maxsize=8192)  # specs repeat the same few hundred keys many times
def _accessor(value: str) -> Accessor | None:
    if not value or value.startswith(_NOT_METRIC):
        return None
    for prefix in METRIC_PREFIXES:
        if value.startswith(prefix):
            return Accessor(prefix, value[len(prefix) :])
    return Accessor("", value)


@dataclass(frozen=True)
class ConfigKey(Accessor):
    """A config key as W&B spells it: `name` is its dotted path, `value_at` where W&B's `.value`
    sits in the spelling: after the first part (a nested config, what the SDK writes in columns
    and grouping), at the end (a flat dotted key, `wandb.config["a.b"]`), or nowhere (the SDK's
    filters and sort keys)."""

    value_at: str = ""  # "first", "last" or ""

    def with_name(self, name: str) -> str:
        parts = name.split(".")
        if self.value_at == "first":
            parts.insert(1, "value")
        elif self.value_at == "last":
            parts.append("value")
        return self.prefix + ".".join(parts)


def config_key(value: object, prefix: str = "") -> ConfigKey | None:
    """The config key `value` spells after `prefix` (`config:` for a run-table column), with or
    without W&B's `.value` (`wandb_workspaces`' `expr.groupby_str_to_key` puts it after the
    first part unless the key already holds one)."""
    if not isinstance(value, str) or not value.startswith(prefix) or len(value) == len(prefix):
        return None
    parts = value[len(prefix) :].split(".")
    if len(parts) > 1 and parts[1] == "value":
        return ConfigKey(prefix, ".".join(parts[:1] + parts[2:]), "first")
    if len(parts) > 1 and parts[-1] == "value":
        return ConfigKey(prefix, ".".join(parts[:-1]), "last")
    return ConfigKey(prefix, ".".join(parts))


def config_column(value: object) -> ConfigKey | None:
    """A run-table column (or a grouped-run colour's key) on a config key: `config:a.value.b`."""
    return config_key(value, "config:")


def series_accessor(value: object) -> Accessor | None:
    """`<runId>:<metric>`, the keys of a line plot's per-series overrides."""
    if not isinstance(value, str) or ":" not in value:
        return None
    run_id, _, name = value.partition(":")
    return Accessor(run_id + ":", name)


# --- names inside longer strings ----------------------------------------------------------

NAME_CHAR = r"[\w/\-]"
# NAME_CHAR as bytes (in a bytes pattern `\w` is ASCII): what the word splits of `check`'s
# prefilter and the walk's `name_words` keep
NAME_BYTES = frozenset(b"_/-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_TOKEN = re.compile(r"\$\{([^}]*)\}")
# The whole-name boundary in a file's bytes or a value's JSON text: no name character after a
# name, and before it none either, or an escape that stands for none (`\n`, `\u00e9`).
_ESCAPES = (r"\\[nrtbfv/]", r"\\u[0-9a-fA-F]{4}", r"\\x[0-9a-fA-F]{2}")
AFTER_NAME = rf"(?!{NAME_CHAR})"
# Seen after a name's first character, where a lookbehind is cheap (see `trie`): a search for a
# pattern that starts with a lookbehind tries every offset.
NOT_IN_NAME = rf"(?<!{NAME_CHAR}.)"
BEFORE_NAME = "(?:" + "|".join([NOT_IN_NAME, *(f"(?<={e}.)" for e in _ESCAPES)]) + ")"
# The same, as what a pattern matches before a name: 1.7x as fast as BEFORE_NAME in
# `engine.record.whole_names`, whose names start with the same few letters as most words.
NAME_START = "(?:" + "|".join([r"[^\w/\-]", *_ESCAPES]) + ")"


def mention_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    """Whole-name occurrences of any of `names` in text. A final `.` ends a sentence, not a
    name, unless a name character follows it."""
    ordered = sorted(set(names), key=len, reverse=True)
    if not ordered:
        return None
    alternatives = "|".join(map(re.escape, ordered))
    return re.compile(rf"(?<![\w/.\-])(?:{alternatives})(?!{NAME_CHAR}|\.{NAME_CHAR})")


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


def trie(
    words: Iterable[str],
    after_first: str = "",
    end: str = "",
    cut: Callable[[str], int | None] | None = None,
    cut_end: str | None = None,
) -> list[str]:
    """A regex of any of `words`, the longest that matches first, written as a trie: at each
    offset the engine follows one branch a character at a time instead of trying every word.
    Returned as its alternatives, one per first character, each starting with that character:
    joined by `|` at the top of a pattern, they let a search skip to the offsets where a word
    may start. `after_first` follows each word's first character (a lookbehind there sees, at
    fixed width, what comes before the word); `end` follows where a word ends. With `cut`, a
    word's prefixes as long as `cut(word)` or longer end there too (None: the whole word),
    followed by `cut_end` (default: `end`)."""
    root: dict[str, dict[str, Any]] = {}
    for word in words:
        shortest = cut(word) if cut is not None else None
        node = root
        for i, char in enumerate(word, start=1):
            node = node.setdefault(char, {})
            if shortest is not None and shortest <= i:
                node["\0"] = {}  # a prefix ends here
        node[""] = {}  # a word ends here

    def branches(node: dict[str, Any], first: bool) -> list[str]:
        found = [
            re.escape(char) + (after_first if first else "") + _one(branches(node[char], False))
            for char in sorted(c for c in node if c not in ("", "\0"))
        ]  # the longer words first: a word ending here is the last choice
        if "" in node:
            return [*found, end]
        return [*found, end if cut_end is None else cut_end] if "\0" in node else found

    return branches(root, True)


def _one(alternatives: list[str]) -> str:
    return alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"
