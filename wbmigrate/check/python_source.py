"""A Python module's text for `check`: positions from the `ast`, and the surgical edits of
literals a fix makes (replace a name inside a string, add an element beside another, drop one),
each keeping quoting, parentheses, commas and layout."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from wbmigrate.check.model import Finding, Lines, Rule
from wbmigrate.check.python_context import Module
from wbmigrate.check.targets import Targets
from wbmigrate.edit.replacement import Replacement
from wbmigrate.names import accessor


@dataclass
class Source:
    label: str
    text: str
    lines: Lines
    targets: Targets
    module: Module
    seen: list[tuple[int, int]] = field(default_factory=list)

    def span(self, node: ast.AST) -> tuple[int, int]:
        located: Any = node  # every node this module looks at has a position
        return (
            self.lines.offset(located.lineno, located.col_offset),
            self.lines.offset(located.end_lineno, located.end_col_offset),
        )

    def literal(self, node: ast.AST) -> tuple[int, str]:
        """Where a node starts, and its source as written."""
        start, end = self.span(node)
        return start, self.text[start:end]

    def finding(
        self, node: ast.AST, rule: Rule, message: str, fix: tuple[Replacement, ...] = ()
    ) -> Finding:
        """A finding at the node."""
        start, end = self.span(node)
        return self.lines.finding(self.label, start, end, rule, message, fix)


def siblings(module: Module, node: ast.AST) -> list[object] | None:
    """The values of the list, tuple or set `node` is an element of."""
    parent = module.parents.get(node)
    if isinstance(parent, ast.List | ast.Tuple | ast.Set) and node in parent.elts:
        return [e.value for e in parent.elts if isinstance(e, ast.Constant)]
    return None


def present(source: Source, node: ast.AST, spelled: bool = True) -> set[object] | None:
    """What the list `node` is in holds once the fixes of the elements before it are made (of
    every other element, for one whose name is not spelled out and so cannot be renamed), so
    that one pass leaves nothing for a second pass to do."""
    values = siblings(source.module, node)
    parent = source.module.parents[node]
    if values is None or not isinstance(parent, ast.List | ast.Tuple | ast.Set):
        return None
    present = set(values)
    index = parent.elts.index(node)  # type: ignore[arg-type]
    others = parent.elts[:index] if spelled else parent.elts[:index] + parent.elts[index + 1 :]
    for element in others:
        found = accessor(element.value) if isinstance(element, ast.Constant) else None
        fate = source.targets.migration.fate(found.name) if found else None
        start, end = source.span(element)
        if found and fate and fate.new and source.text[start:end].count(found.name) == 1:
            present.add(found.with_name(fate.new))
    return present


def extent(source: Source, node: ast.AST) -> tuple[int, int]:
    """An element's span with the parentheses around it: `("a")` is the element, not `"a"`."""
    start, end = source.span(node)
    text = source.text
    while True:
        left = len(text[:start].rstrip())
        right = len(text) - len(text[end:].lstrip())
        if left and right < len(text) and text[left - 1] == "(" and text[right] == ")":
            start, end = left - 1, right + 1
        else:
            return start, end


def insert_after(source: Source, node: ast.AST, literal: str) -> tuple[Replacement, ...]:
    """Insert `literal` as the next element, on a line of its own if the elements are."""
    parent = source.module.parents[node]
    assert isinstance(parent, ast.List | ast.Tuple | ast.Set)
    _, end = extent(source, node)
    index = parent.elts.index(node)  # type: ignore[arg-type]
    later = parent.elts[index + 1] if index + 1 < len(parent.elts) else None
    later_line = later.lineno if later is not None else parent.end_lineno
    if later_line is not None and later_line > source.lines.position(end)[0]:
        line_start = source.lines.starts[source.lines.position(end)[0] - 1]
        indent = re.match(r"[ \t]*", source.text[line_start:]).group()  # type: ignore[union-attr]
        return (Replacement(end, end, f",\n{indent}{literal}"),)
    return (Replacement(end, end, f", {literal}"),)


def drop(source: Source, node: ast.AST) -> tuple[Replacement, ...]:
    """Delete an element and one comma beside it."""
    parent = source.module.parents[node]
    assert isinstance(parent, ast.List | ast.Tuple | ast.Set)
    index = parent.elts.index(node)  # type: ignore[arg-type]
    start, end = extent(source, node)
    if index + 1 < len(parent.elts):
        return (Replacement(start, extent(source, parent.elts[index + 1])[0], ""),)
    if index > 0:
        return (Replacement(extent(source, parent.elts[index - 1])[1], end, ""),)
    return (Replacement(start, end, ""),)


def replace_inner(raw: str, start: int, old: str, new: str) -> tuple[Replacement, ...]:
    """Replace `old` where it is spelled out in the literal's source; no fix if it is not."""
    if raw.count(old) != 1:
        return ()
    at = start + raw.index(old)
    return (Replacement(at, at + len(old), new),)
