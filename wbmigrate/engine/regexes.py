"""Rewrite a metric regex (a panel's `metricRegex`, a workspace search) after a rename.

The regex is judged by what it matches among the keys we know (the mapping's old and new names,
plus any project keys given): the rewrite must match exactly the mapped set. Candidates are
checked, never trusted, and every match runs under a timeout (the `regex` package's), so a
catastrophic pattern costs a bounded moment and becomes a needs-review item.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import regex

MATCH_TIMEOUT = 0.05  # seconds for one match of one key
TOTAL_TIMEOUT = 1.0  # seconds for judging one pattern against all keys


@dataclass(frozen=True)
class RegexRewrite:
    """The outcome for one pattern: `new` when it must change, `review` when it cannot."""

    matched: frozenset[str]  # known keys it matched before
    wanted: frozenset[str]  # known keys it should match after
    new: str | None = None
    review: str | None = None


class _TooSlow(Exception):
    pass


def rewrite_regex(
    pattern: str,
    known: Iterable[str],
    target: Callable[[str], set[str]],
    *,
    ignore_case: bool = False,
) -> RegexRewrite:
    """Judge `pattern` (searched, as W&B's JavaScript `RegExp.test` does) against `known` keys.

    `target(key)` is the set of keys that must be matched in place of `key` after the migration
    (`{key}` for an untouched key). The result carries a verified rewrite, or a reason to review.
    """
    keys = sorted(set(known))
    flags = regex.IGNORECASE if ignore_case else 0
    budget = _Budget()
    try:
        compiled = regex.compile(pattern, flags)
        matched = frozenset(k for k in keys if budget.search(compiled, k))
    except regex.error as exc:
        return RegexRewrite(frozenset(), frozenset(), review=f"not a valid regex ({exc})")
    except _TooSlow:
        return RegexRewrite(frozenset(), frozenset(), review="too slow to analyse safely")
    wanted = frozenset(name for key in matched for name in target(key))
    if wanted == matched:
        return RegexRewrite(matched, wanted)
    moved = {key: target(key) - {key} for key in matched if target(key) != {key}}
    pairs = (
        {key: next(iter(new)) for key, new in moved.items()}
        if all(len(new) == 1 for new in moved.values())
        else None
    )
    keep_old = all(key in target(key) for key in moved)
    try:
        for candidate in _candidates(pattern, matched, wanted, pairs, keep_old):
            if _matches_exactly(candidate, keys, wanted, flags, budget):
                return RegexRewrite(matched, wanted, new=candidate)
    except _TooSlow:
        pass
    return RegexRewrite(matched, wanted, review="no rewrite matches exactly the renamed keys")


def _candidates(
    pattern: str,
    matched: frozenset[str],
    wanted: frozenset[str],
    pairs: dict[str, str] | None,
    keep_old: bool,
) -> list[str]:
    """Rewrites to try. Each keeps the original pattern for keys we do not know, excludes the
    keys that must no longer match and adds the new ones by exact name."""
    flags, body = _split_global_flags(pattern)
    add = sorted(wanted - matched)
    drop = sorted(matched - wanted)
    exact_add = f"^(?:{_alternatives(add)})$" if add else ""
    candidates = _substituted(pattern, pairs, keep_old) if pairs is not None else []
    group = f"(?:{body})" if "|" in body else body
    keep = group if not drop else f"^(?!(?:{_alternatives(drop)})$).*?{group}"
    if not add:
        return [*candidates, flags + keep]
    namespace = _namespace(add)
    if namespace:  # the new names share a namespace: `off_policy/.*|^staleness/`
        candidates.append(f"{flags}{keep}|^{re.escape(namespace)}")
    return [*candidates, f"{flags}{keep}|{exact_add}"]


def _substituted(pattern: str, pairs: dict[str, str], keep_old: bool) -> list[str]:
    """The pattern with each old name it spells out replaced by its new name, the original kept
    as an alternative when old keys must still match: `^off_policy/mean$` ->
    `^staleness/rollout/mean$`. Offered only when every renamed key is spelled out (some
    key is: with none, the pattern would already match what it should)."""
    flags, body = _split_global_flags(pattern)
    text = body
    for old, new in sorted(pairs.items(), key=lambda pair: -len(pair[0])):
        for spelling in (old, re.escape(old), re.escape(old).replace("/", "\\/")):
            whole = re.compile(rf"(?:(?<![\w/\\-])|(?<=\\b)){re.escape(spelling)}(?![\w/-])")
            if whole.search(text):
                replacement = (re.escape(new) if spelling != old else new).replace("\\", "\\\\")
                text = whole.sub(replacement, text)
                break
        else:
            return []  # not spelled out as a whole name (`eval/off_policy/mean` is another)
    return [f"{flags}{body}|{text}" if keep_old else flags + text]


def _namespace(names: list[str]) -> str:
    """The leading `/` segments all names share: `staleness/rollout/` for the rollout keys."""
    common: list[str] = []
    for segments in zip(*(name.split("/")[:-1] for name in names), strict=False):
        if len(set(segments)) > 1:
            break
        common.append(segments[0])
    return "/".join(common) + "/" if common else ""


def _alternatives(names: list[str]) -> str:
    return "|".join(re.escape(name) for name in names)


def _split_global_flags(pattern: str) -> tuple[str, str]:
    """A leading `(?i)` must stay at the start once the body is wrapped in a group."""
    match = re.match(r"\(\?[a-zA-Z]+\)", pattern)
    return (match.group(), pattern[match.end() :]) if match else ("", pattern)


def _matches_exactly(
    candidate: str, keys: list[str], wanted: frozenset[str], flags: int, budget: _Budget
) -> bool:
    try:
        compiled = regex.compile(candidate, flags)
    except regex.error:
        return False
    return all(bool(budget.search(compiled, k)) == (k in wanted) for k in keys)


class _Budget:
    """Per-match and per-pattern time limits."""

    def __init__(self) -> None:
        self.left = TOTAL_TIMEOUT

    def search(self, compiled: regex.Pattern[str], key: str) -> bool:
        started = time.perf_counter()
        try:
            found = compiled.search(key, timeout=min(MATCH_TIMEOUT, self.left)) is not None
        except TimeoutError:
            raise _TooSlow from None
        self.left -= time.perf_counter() - started
        if self.left <= 0:
            raise _TooSlow
        return found
