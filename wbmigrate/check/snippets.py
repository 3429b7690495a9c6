"""A text checked inside another: a Markdown file's code block, a notebook cell's source.

A `Part` is checked on its own text; `lift` moves its findings, places and fixes into the host.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

from wbmigrate.check.model import Checked, Finding, Lines, Place, apply_fixes
from wbmigrate.check.places import Places
from wbmigrate.edit.replacement import Replacement, apply


@dataclass(frozen=True)
class Part:
    """A text inside another (a code block of a Markdown file, a notebook cell's source),
    checked on its own: findings and fixes are made on `text` and moved out through `outer`."""

    start: int  # where the part is in the outer text (for places)
    end: int
    text: str
    checked: Checked  # the part's own findings, spans, places and fix, in `text`'s offsets
    outer: Callable[[int, bool], int]  # an offset in `text` (ending a span?) -> the outer text's
    encode: Callable[[str], tuple[Replacement, ...]]  # a new `text` -> edits of the outer text
    move: Callable[[Replacement], Replacement | None]  # one edit of `text` in the outer text
    place: Callable[[int], Place]  # an outer offset inside the part -> the kind of place


def lift(label: str, text: str, parts: list[Part], default: Places) -> Checked:
    """The outer text's Checked: every part's findings and seen spans moved out, places looked
    up in the part an offset is in (`default` elsewhere), and fixes made part by part."""
    lines = Lines(text)
    checked = Checked()
    origins: dict[tuple[object, ...], list[tuple[Part, Finding]]] = {}
    for part in parts:
        for finding in part.checked.findings:
            moved = _moved(label, lines, part, finding)
            checked.findings.append(moved)
            origins.setdefault(_key(moved), []).append((part, finding))
        checked.seen += [(part.outer(s, False), part.outer(e, True)) for s, e in part.checked.seen]
    checked.place = _places(parts, default)
    checked.fix_text = lambda chosen: _fix_text(text, chosen, origins)
    return checked


def _moved(label: str, lines: Lines, part: Part, finding: Finding) -> Finding:
    """A part's finding, at its place in the outer text, with its own fix moved out too: edit
    by edit where they can be (a report shows them as the checker made them), else as the
    edits that make the part's text with this fix."""
    start, end = part.outer(finding.span[0], False), part.outer(finding.span[1], True)
    moved = [part.move(r) for r in finding.fix]
    fix = tuple(r for r in moved if r is not None)
    if len(fix) < len(moved):
        new = apply_fixes(part.text, [finding])
        fix = part.encode(new) if new is not None and new != part.text else ()
    return lines.finding(label, start, max(start, end), finding.rule, finding.message, fix)


def _key(finding: Finding) -> tuple[object, ...]:
    """What identifies a moved finding when it comes back to be fixed: a suppression without a
    reason changes its message, nothing else."""
    return finding.span, finding.rule, finding.fix


def _fix_text(
    text: str, chosen: list[Finding], origins: dict[tuple[object, ...], list[tuple[Part, Finding]]]
) -> str | None:
    """The outer text with the chosen findings fixed: each part makes its own new text (its
    checker's fixes, which may be more than a finding's replacements), encoded back in."""
    by_part: dict[int, tuple[Part, list[Finding]]] = {}
    for finding in chosen:
        for part, inner in origins.get(_key(finding), []):
            by_part.setdefault(id(part), (part, []))[1].append(inner)
    replacements: list[Replacement] = []
    for part, picked in by_part.values():
        fix = part.checked.fix_text  # (None: its findings' own fixes make the new text)
        new = fix(picked) if fix else apply_fixes(part.text, picked)
        if new is not None and new != part.text:
            replacements += _edits(part, picked, new)
    return apply(text, replacements) if replacements else None


def _edits(part: Part, picked: list[Finding], new: str) -> list[Replacement]:
    """The outer text's edits that make `new` the part's text: the findings' own edits, moved
    one by one, when they are all it takes (every byte between them stays as it is written),
    else `new` encoded as the part's text."""
    if apply_fixes(part.text, picked) == new:
        moved = [part.move(r) for f in picked for r in f.fix]
        if all(m is not None for m in moved):
            return [m for m in moved if m is not None]
    return list(part.encode(new))


def _places(parts: list[Part], default: Places) -> Places:
    starts = [part.start for part in parts]

    def place(offset: int) -> Place:
        i = bisect.bisect_right(starts, offset) - 1
        if i >= 0 and offset < parts[i].end:
            return parts[i].place(offset)
        return default(offset)

    return place


def constant(place: Place) -> Callable[[int], Place]:
    return lambda _: place
