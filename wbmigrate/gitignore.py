"""`.gitignore` patterns as git reads them (dir.c, wildmatch.c), so `check` reads exactly the
files `git check-ignore` does not name (`tests/check/test_discover.py` compares the two on
idioms and generated trees). pathspec, which matches a path with its folders' patterns too,
made `*`, `!*/`, `!*.yaml` hide every YAML file below the top folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNTRIMMED = re.compile(r"((?:[^\\]|\\.)*?) *", re.S)  # trailing spaces, unless escaped
_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


@dataclass(frozen=True)
class GitIgnore:
    """One .gitignore's patterns, matched against paths' bytes: for files and for folders
    (a pattern ending in `/` matches folders only), each one regex of the patterns last
    first, so the group that matches is the last matching pattern, the one git obeys;
    `negated[i]`: whether group i + 1 is a `!` pattern."""

    files: tuple[re.Pattern[str], tuple[bool, ...]]
    folders: tuple[re.Pattern[str], tuple[bool, ...]]

    @classmethod
    def parse(cls, data: bytes) -> GitIgnore | None:
        text = data.removeprefix(b"\xef\xbb\xbf").decode("latin-1")  # a character per byte
        patterns = [p for line in text.split("\n") if (p := _pattern(line)) is not None]
        if not patterns:
            return None
        return cls(_alternation(patterns, False), _alternation(patterns, True))

    def verdict(self, relative: str, folder: bool) -> bool | None:
        """Ignored (True), re-included (False) or neither (None), by the last pattern that
        matches `relative` (a path's bytes, as latin-1, from the .gitignore's folder)."""
        regex, negated = self.folders if folder else self.files
        found = regex.fullmatch(relative)
        if found is None or found.lastindex is None:
            return None
        return not negated[found.lastindex - 1]


def _alternation(
    patterns: list[tuple[str, bool, bool]], folders: bool
) -> tuple[re.Pattern[str], tuple[bool, ...]]:
    chosen = [
        (regex, negated) for regex, negated, only in reversed(patterns) if folders or not only
    ]
    alternatives = "|".join(f"({regex})" for regex, _ in chosen) or "(?!)"
    return re.compile(alternatives, re.S), tuple(negated for _, negated in chosen)


def _pattern(line: str) -> tuple[str, bool, bool] | None:
    """A .gitignore line as (regex, negated, folders only); None for a blank line, a comment
    or a pattern that matches nothing. A pattern without a slash but at its end matches a
    name at any depth; any other is anchored at the .gitignore's folder."""
    kept = _UNTRIMMED.fullmatch(line.removesuffix("\r"))
    line = kept.group(1) if kept else line  # a backslash at the very end: git keeps it all
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    line = line[negated:]
    folders_only = line.endswith("/")
    line = line[: -1 if folders_only else None]
    anchored = "/" in line
    regex = _translate(line.removeprefix("/") if anchored else line, anchored)
    if not line or regex is None:
        return None
    return (regex if anchored else f"(?:.*/)?{regex}"), negated, folders_only


def _translate(pattern: str, anchored: bool) -> str | None:
    """A wildmatch pattern (with WM_PATHNAME) as a regex; None if it can match nothing (a
    bracket left open, a backslash at its end). Git matches an anchored pattern's text before
    its first wildcard on its own and the rest as a pattern of its own, so a `**` right after
    that text counts as at the start (`a**/b` matches `a/x/b`)."""
    out, i = [], 0
    start = next((n for n, c in enumerate(pattern) if c in "*?[\\"), 0) if anchored else 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            end = len(pattern) - len(pattern[i:].lstrip("*"))
            whole = end - i > 1 and (i in (0, start) or pattern[i - 1] == "/")
            if whole and end == len(pattern):
                out.append(".*")  # `dir/**`: everything inside
            elif whole and pattern[end] == "/":
                out.append("(?:.*/)?")  # `**/`: any folders, or none
                end += 1
            else:
                out.append("[^/]*")
            i = end
            continue
        if c == "[":
            found = _bracket(pattern, i + 1)
            if found is None:
                return None
            regex, i = found
            out.append(regex)
            continue
        if c == "\\":  # the next character as itself
            if i + 1 == len(pattern):
                return None
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append("[^/]" if c == "?" else re.escape(c))
        i += 1
    return "".join(out)


def _bracket(pattern: str, i: int) -> tuple[str, int] | None:
    """The regex of the bracket expression that starts at `pattern[i]` (after its `[`) and
    where it ends, as wildmatch reads it: `!` or `^` negates, a `]` first is itself, ranges,
    `[:class:]`; it never matches a slash. None: left open, or an unknown class."""
    negated = pattern[i : i + 1] in ("!", "^")
    i += negated
    items: list[str] = []
    previous = ""  # a character a `-` may start a range from
    first = True
    while i < len(pattern) and (first or pattern[i] != "]"):
        first, c = False, pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            i, c = i + 1, pattern[i + 1]
        elif c == "-" and previous and pattern[i + 1 : i + 2] not in ("", "]"):
            i, high = i + 1, pattern[i + 1]
            if high == "\\" and i + 1 < len(pattern):
                i, high = i + 1, pattern[i + 1]
            if previous <= high:
                items[-1] = f"{re.escape(previous)}-{re.escape(high)}"
            i, previous = i + 1, ""
            continue
        elif c == "[" and pattern[i + 1 : i + 2] == ":":
            close = pattern.find("]", i + 2)
            if close < 0:
                return None
            if pattern[close - 1] == ":" and close - 1 > i + 1:
                name = pattern[i + 2 : close - 1]
                if name not in _CLASSES:
                    return None
                items.append(_CLASSES[name])
                i, previous = close + 1, ""
                continue
        items.append(re.escape(c))
        i, previous = i + 1, c
    if i >= len(pattern):
        return None
    body = "".join(items)
    return (f"[^/{body}]" if negated else f"(?!/)[{body}]" if body else "(?!)"), i + 1
