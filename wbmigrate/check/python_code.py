"""Python: string literals that are whole old metric names (in `wandb_workspaces` builders,
`wandb.automations`, `wandb.log`, history queries...), names inside filter and expression
strings, config keys as keywords, attributes and strings, and keys a program builds (f-strings,
concatenation, formatting) that may come out as an old name.

Found with the `ast` module; fixed by replacing only the characters of the name, so quoting,
comments and layout stay.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from wbmigrate.check.model import Checked, Finding, Lines, Replacement, Rule
from wbmigrate.check.targets import Targets
from wbmigrate.names import Accessor, accessor, expression_names

# Filter-expression calls in strings, as wandb_workspaces writes them: Summary('loss') > 1
_CALL = re.compile(r"\b(?:Summary|Metric|SummaryMetric|KeysInfo)\(\s*(['\"])(?P<name>[^'\"]+)\1")


@dataclass
class _Source:
    label: str
    text: str
    lines: Lines
    targets: Targets
    line_starts: list[int]

    def offset(self, line: int, byte_column: int) -> int:
        """A character offset from an ast position (1-based line, UTF-8 byte column)."""
        start = self.line_starts[line - 1]
        raw = self.text[start : start + byte_column + 1].encode()[:byte_column]
        return start + len(raw.decode(errors="ignore"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        located: Any = node  # every node this module looks at has a position
        return (
            self.offset(located.lineno, located.col_offset),
            self.offset(located.end_lineno, located.end_col_offset),
        )

    def finding(
        self, start: int, end: int, rule: Rule, message: str, fix: tuple[Replacement, ...] = ()
    ) -> Finding:
        return self.lines.finding(self.label, start, end, rule, message, fix)


def check_python(label: str, text: str, targets: Targets) -> Checked:
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        lines = Lines(text)
        offset = lines.starts[max(0, min((exc.lineno or 1) - 1, len(lines.starts) - 1))]
        return Checked(
            [
                lines.finding(
                    label,
                    offset + max(0, (exc.offset or 1) - 1),
                    offset,
                    Rule.PARSE_ERROR,
                    f"not valid Python: {exc.msg}",
                )
            ]
        )
    except (ValueError, RecursionError) as exc:
        lines = Lines(text)
        return Checked([lines.finding(label, 0, 0, Rule.PARSE_ERROR, f"not valid Python: {exc}")])
    lines = Lines(text)
    source = _Source(label, text, lines, targets, lines.starts)
    leaves = targets.config_leaves
    findings: list[Finding] = []
    for node, parent in _nodes(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if not isinstance(parent, ast.JoinedStr):
                findings += _literal(source, node, parent)
        elif isinstance(node, ast.keyword) and node.arg in leaves:
            findings += _identifier(source, node, node.arg)
        elif isinstance(node, ast.Attribute) and node.attr in leaves:
            findings += _identifier(source, node, node.attr)
        elif isinstance(node, ast.JoinedStr | ast.BinOp | ast.Call):
            findings += _computed(source, node, parent)
    return Checked(sorted(findings, key=lambda f: (f.line, f.column)))


def _nodes(tree: ast.AST) -> Iterator[tuple[ast.AST, ast.AST | None]]:
    """Every node with its parent, in one pass (a stack: any depth is fine)."""
    stack: list[tuple[ast.AST, ast.AST | None]] = [(tree, None)]
    while stack:
        node, parent = stack.pop()
        yield node, parent
        stack += [(child, node) for child in ast.iter_child_nodes(node)]


# --- string literals --------------------------------------------------------------------------


def _literal(source: _Source, node: ast.Constant, parent: ast.AST | None) -> Iterator[Finding]:
    value = str(node.value)
    start, end = source.span(node)
    raw = source.text[start:end]
    targets = source.targets
    found = accessor(value)
    target = targets.migration.fate(found.name) if found else None
    if found is not None and target is not None:
        yield from _metric_literal(source, node, parent, found, raw, start)
    elif value in targets.config_keys or value in targets.config_leaves:
        new = targets.config_keys.get(value) or targets.config_leaves[value]
        yield source.finding(
            start,
            end,
            Rule.RENAMED_CONFIG_KEY,
            f"{value} -> {new} (config key)",
            _inner(raw, start, value, new),
        )
    else:
        yield from _embedded_names(source, value, raw, start, end)


def _metric_literal(
    source: _Source,
    node: ast.Constant,
    parent: ast.AST | None,
    found: Accessor,
    raw: str,
    start: int,
) -> Iterator[Finding]:
    targets = source.targets
    target = targets.migration.fate(found.name)
    assert target is not None
    end = start + len(raw)
    rule = Rule.REMOVED_METRIC if target.removed else Rule.RENAMED_METRIC
    if target.new is None:
        yield source.finding(
            start,
            end,
            rule,
            f"{found.name} is no longer logged and nothing replaces it ({target.reason})",
        )
        return
    new = found.with_name(target.new)
    siblings = _siblings(parent, node)
    if siblings is not None and targets.dual:
        if new in siblings:
            return  # the old key beside its new companion: fine in dual mode
        insertion = _after(source, node, parent, raw.replace(found.name, target.new, 1))
        yield source.finding(
            start,
            end,
            rule,
            f"{found.name} -> {target.new} (dual: add beside it)",
            insertion,
        )
        return
    note = " (removed; the new key carries the same values)" if target.removed else ""
    yield source.finding(
        start,
        end,
        rule,
        f"{found.name} -> {target.new}{note}",
        _inner(raw, start, found.name, target.new),
    )


def _siblings(parent: ast.AST | None, node: ast.AST) -> list[object] | None:
    """The other values of the list, tuple or set `node` is an element of."""
    if isinstance(parent, ast.List | ast.Tuple | ast.Set) and node in parent.elts:
        return [e.value for e in parent.elts if isinstance(e, ast.Constant)]
    return None


def _after(
    source: _Source, node: ast.AST, parent: ast.AST | None, literal: str
) -> tuple[Replacement, ...]:
    """Insert `literal` as the next element, on a line of its own if the elements are."""
    _, end = source.span(node)
    assert isinstance(parent, ast.List | ast.Tuple | ast.Set)
    index = parent.elts.index(node)  # type: ignore[arg-type]
    later_line = (
        parent.elts[index + 1].lineno if index + 1 < len(parent.elts) else parent.end_lineno
    )
    if later_line is not None and later_line > node.end_lineno:  # type: ignore[attr-defined]
        line_start = source.line_starts[node.lineno - 1]  # type: ignore[attr-defined]
        indent = re.match(r"[ \t]*", source.text[line_start:]).group()  # type: ignore[union-attr]
        return (Replacement(end, end, f",\n{indent}{literal}"),)
    return (Replacement(end, end, f", {literal}"),)


def _inner(raw: str, start: int, old: str, new: str) -> tuple[Replacement, ...]:
    """Replace `old` where it is spelled out in the literal's source; no fix if it is not."""
    if raw.count(old) != 1:
        return ()
    at = start + raw.index(old)
    return (Replacement(at, at + len(old), new),)


def _embedded_names(
    source: _Source, value: str, raw: str, start: int, end: int
) -> Iterator[Finding]:
    """Names inside filter expressions (`Summary('off_policy/mean') > 0.1`) and `${...}`."""
    names = [m["name"] for m in _CALL.finditer(value)]
    names += [a.name for a in expression_names(value)]
    for name in dict.fromkeys(names):
        target = source.targets.migration.fate(name)
        if target is None:
            continue
        rule = Rule.REMOVED_METRIC if target.removed else Rule.RENAMED_METRIC
        if target.new is None:
            yield source.finding(
                start, end, rule, f"{name} is no longer logged and nothing replaces it"
            )
            continue
        fix = tuple(
            Replacement(start + m.start(), start + m.end(), target.new)
            for m in re.finditer(rf"(?<![\w/.\-]){re.escape(name)}(?![\w/\-])", raw)
        )
        yield source.finding(start, end, rule, f"{name} -> {target.new} (in an expression)", fix)


# --- identifiers ------------------------------------------------------------------------------


def _identifier(source: _Source, node: ast.keyword | ast.Attribute, name: str) -> Iterator[Finding]:
    new = source.targets.config_leaves[name]
    if isinstance(node, ast.keyword):
        start = source.offset(node.lineno, node.col_offset)
    else:
        start = source.offset(node.end_lineno or node.lineno, node.end_col_offset or 0) - len(name)
    if source.text[start : start + len(name)] != name:
        return
    yield source.finding(
        start,
        start + len(name),
        Rule.RENAMED_CONFIG_KEY,
        f"{name} -> {new} (config key)",
        (Replacement(start, start + len(name), new),),
    )


# --- keys built at run time -------------------------------------------------------------------


def _computed(source: _Source, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    """An f-string, concatenation or formatting whose fixed parts name an old metric's
    namespace and whose result may be an old name: for a person to check."""
    if isinstance(parent, ast.BinOp | ast.JoinedStr):
        return  # reported once, at the outermost expression
    pattern = _pattern(node)
    if pattern is None or "\0" not in pattern:
        return
    regex = re.compile(re.escape(pattern).replace("\0", ".+"))
    fixed = pattern.replace("\0", " ")
    matches = [
        name
        for name in sorted(source.targets.migration.old_names)
        if regex.fullmatch(name) and name.split("/")[0] in fixed
    ]
    if matches:
        start, end = source.span(node)
        shown = ", ".join(matches[:3]) + (", ..." if len(matches) > 3 else "")
        yield source.finding(
            start,
            end,
            Rule.NEEDS_REVIEW,
            f"a key built here may be an old name ({shown}); check it",
        )


def _pattern(node: ast.AST) -> str | None:
    """The string an expression builds, with "\\0" for each part only known at run time."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            str(v.value) if isinstance(v, ast.Constant) else "\0"
            for v in node.values
            if isinstance(v, ast.Constant | ast.FormattedValue)
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _pattern(node.left), _pattern(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "\0") + (right if right is not None else "\0")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        left = _pattern(node.left)
        return re.sub(r"%[-#0 +]*\d*(?:\.\d+)?[sdrfi]", "\0", left) if left else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
    ):
        base = _pattern(node.func.value)
        return re.sub(r"\{[^{}]*\}", "\0", base) if base else None
    return None
