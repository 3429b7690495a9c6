"""The residual pass: every whole-name occurrence of an old name that no structured check
accounted for still gets a result on its line, so a new file kind or shape can only make
results more precise, never make them disappear.

A structured checker accounts for an occurrence with a finding whose span covers it, or by
listing it as seen (an old key kept beside its new one in dual mode). What is left is a note
in comments, docstrings and prose, and a `needs-review` warning anywhere else, naming the kind
of place it is in.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterable, Iterator

from wbmigrate.check.model import Finding, Lines, Place, Rule
from wbmigrate.check.targets import Targets

TEXT = Place("text wbmigrate does not parse")
# `off_policy/{mean,max}`: the brace shorthand of docs and runbooks (a list: a comma inside)
_BRACE_LIST = re.compile(r"\{[\w/.-]*,")  # the start of every shorthand's first list
_BRACES = re.compile(r"(?<![\w/-])[\w/.-]*\{[\w/.-]*,[\w/.,-]*\}(?:[\w/.-]|\{[\w/.,-]+\})*")


def residual(
    label: str,
    text: str,
    targets: Targets,
    accounted: list[tuple[int, int]],
    place: Callable[[int], Place] | None = None,
    names: Iterable[tuple[int, int, str]] | None = None,
) -> list[Finding]:
    """A finding for each old name in `text` outside the `accounted` spans. `names`, when
    given, are the whole spellings in `text` as `Targets.spelling_pattern` finds them (the
    prefilter's scan), so they are not looked for again."""
    lines, covered = Lines(text), _Spans(accounted)
    where_is = place or (lambda _: TEXT)
    found = []
    for start, end, name in occurrences(text, targets, names):
        in_new = targets.new_names_ending.get(name, ())
        if covered.contain(start, end) or any(text.endswith(new, 0, end) for new in in_new):
            continue
        where = where_is(start)
        fates = "; ".join(dict.fromkeys(targets.spellings[n] for n in name.split(", ")))
        what = f"{name} ({fates})"
        if where.prose:
            message = f"{what} is mentioned in {where.what}"
        else:
            message = f"{what} in {where.what}: wbmigrate does not change it there; review it"
        rule = Rule.MENTION if where.prose else Rule.NEEDS_REVIEW
        found.append(lines.finding(label, start, end, rule, message))
    return found


def occurrences(
    text: str, targets: Targets, names: Iterable[tuple[int, int, str]] | None = None
) -> Iterator[tuple[int, int, str]]:
    """(start, end, name) of every whole spelling of an old name, brace shorthand included
    (`names`: the whole spellings, when already found)."""
    braces = []
    if _BRACE_LIST.search(text):  # what every shorthand holds: most texts have none
        for match in _BRACES.finditer(text):
            found = match.group().rstrip(".")  # a full stop ends the sentence, not the name
            old = [n for n in expand(found) if n in targets.spellings]
            if old:
                braces.append((match.start(), match.start() + len(found), ", ".join(old)))
    yield from braces
    pattern = targets.spelling_pattern
    if names is None and pattern is not None:
        names = ((m.start(), m.end(), m.group()) for m in pattern.finditer(text))
    for start, end, name in names or ():
        if not any(s <= start < e for s, e, _ in braces):
            yield start, end, name


def expand(text: str) -> list[str]:
    """`off_policy/{in_flight,in_queue}/{mean,max}` -> its four names."""
    parts = re.split(r"\{([^{}]*)\}", text)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(combination) for combination in itertools.product(*choices)]


class _Spans:
    """Is a span inside one of many? Sorted once, answered by bisection: a file with thousands
    of findings costs a log factor, not a product."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self._spans = sorted(spans)
        self._starts = [start for start, _ in self._spans]
        # the furthest end of any span starting at or before each position in the list
        self._reach = list(itertools.accumulate((end for _, end in self._spans), max))

    def contain(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self._starts, start) - 1
        return i >= 0 and self._reach[i] >= end
