"""Old names in a spec that the engine said nothing about: a field or shape it does not read
(`{"accessor": {"name": ...}}`, `s::` in a sort key, a member it does not know). Each still
gets a result, at its path, so a spec `check` reads is never a place where a name goes silent.

A name is accounted for when a change or note of the rewrite is about the value it is in (at
that value, or around it), or when dual mode left it where it is on purpose (`Rewrite.kept`:
an old key beside its new one). A
YAML anchor's value, reached through aliases, is one value however many paths lead to it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator
from typing import Any

from wbmigrate.check.model import Pending, Rule
from wbmigrate.check.targets import REGEX_SPEC_KEYS, Targets
from wbmigrate.edit.edits import Path
from wbmigrate.engine.annotate import is_note
from wbmigrate.engine.model import ChangeAction, Rewrite
from wbmigrate.engine.shapes import nodes

# A panel's `layout`: its place on the grid, as W&B writes it (wandb_workspaces' `Layout`).
LAYOUT = frozenset({"x", "y", "w", "h"})
# An alert whose metric is gone is switched off (or found off) at its `enabled` flag: the
# engine's verdict on the alert as a whole, and so on every name in it.
_ALERT_SWITCH: Path = ("enabled",)
Same = Callable[[Path], Hashable]


def unread(spec: Any, kind: str, result: Rewrite, targets: Targets, same: Same) -> list[Pending]:
    """A result for each old name in `spec` that no change or note of `result` is about (a
    name in text, a string with spaces, is a mention; anything else is for review). `same`
    tells what value a path reaches (YAML: its node, shared by every alias of it)."""
    pattern = targets.spelling_pattern
    if pattern is None:
        return []
    about = _about(result, same)
    left = [s for s in _spelled(spec, pattern) if not _within(s[0], about, same)]
    return [u for path, key, text in left for u in _results(path, key, text, targets)]


def escaped(
    data: Any, targets: Targets, written: Callable[[Path, bool], str], skip: set[Path]
) -> list[Pending]:
    """A result for each old name in a string or key of `data` (but under `skip`) that its
    text spells with escapes (`off\\u005fpolicy/mean`, `time\\/infer`): the residual pass reads
    text as written and never sees it. `written` gives the text of a path's value or key."""
    pattern = targets.spelling_pattern
    if pattern is None:
        return []
    found: list[Pending] = []
    for path, key, text in _spelled(data, pattern, skip):
        raw = written(path, key)
        if not all(name in raw for name in pattern.findall(text)):
            found += _results(path, key, text, targets)
    return found


def by_path(path: Path) -> Hashable:
    """What value a path reaches where no two paths reach one (JSON): the path itself."""
    return path


def _about(result: Rewrite, same: Same) -> set[Hashable]:
    """The values a change or note is about (all inside them too). The boundary note is
    about itself only."""
    paths = {c.path for c in result.changes if c.action is not ChangeAction.ANNOTATED}
    paths |= {n.path for n in result.notes if n.field != "migration note"}
    paths |= set(result.kept)  # what dual mode leaves on purpose
    return {same(p) for p in paths} | ({same(())} if _ALERT_SWITCH in paths else set())


def _within(path: Path, about: set[Hashable], same: Same) -> bool:
    return any(same(path[:end]) in about for end in range(len(path) + 1))


def _spelled(
    spec: Any, pattern: re.Pattern[str], skip: set[Path] | frozenset[Path] = frozenset()
) -> Iterator[tuple[Path, bool, str]]:
    """(path, is it a map key, text) of each string or map key holding an old name, but under
    `skip`. The engine judges every regex field, and says nothing of a regex that needs no
    change (one that matches old and new keys, or shuts old ones out): those are not looked
    in, nor is wbmigrate's own boundary note."""
    stack: list[tuple[Path, Any]] = [((), spec)]
    while stack:
        path, node = stack.pop()
        if skip and path in skip:  # (tested first: unread's walk, over every node, skips none)
            continue
        if isinstance(node, dict):
            for key, value in node.items():
                named = isinstance(key, str) and pattern.search(key) is not None
                if named and not is_layout(path, node) and (not skip or (*path, key) not in skip):
                    yield (*path, key), True, key
                if key not in REGEX_SPEC_KEYS:
                    stack.append(((*path, key), value))
        elif isinstance(node, list):
            stack += [((*path, i), value) for i, value in enumerate(node)]
        elif isinstance(node, str) and pattern.search(node) and not is_note(node):
            yield path, False, node


def is_layout(path: Path, node: Any) -> bool:
    """Whether `node` (at `path`) is a panel's layout, whose keys are grid coordinates, never
    metrics (a mapping that renames a metric `x` leaves `"layout": {"x": 0}` alone)."""
    if not path or path[-1] != "layout" or not isinstance(node, dict) or not node:
        return False
    return node.keys() <= LAYOUT and all(isinstance(v, int | float) for v in node.values())


def layout_keys(document: Any) -> Iterator[Path]:
    """The path of every key of a panel layout in a document, wherever it sits."""
    return ((*path, key) for path, node in nodes(document) if is_layout(path, node) for key in node)


def _results(path: Path, key: bool, text: str, targets: Targets) -> Iterator[Pending]:
    assert targets.spelling_pattern is not None
    prose = not key and any(c.isspace() for c in text)
    rule = Rule.MENTION if prose else Rule.NEEDS_REVIEW
    for name in dict.fromkeys(targets.spelling_pattern.findall(text)):
        what = f"{name} ({targets.spellings[name]})"
        if prose:
            what += f" is mentioned in text [{_where(path)}]"
        else:
            what += f" at {_where(path)}, a field or shape wbmigrate does not change: review it"
        inside = name if text != name else None  # a whole string is pointed at as a whole
        yield Pending(path, key, rule, what, name=inside)


def _where(path: Path) -> str:
    """`("runSets", 0, "sort")` -> `runSets[0].sort`."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
