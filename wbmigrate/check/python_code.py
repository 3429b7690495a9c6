"""Python: old metric names and config keys in string literals, judged by where they are used
(see `python_context`): rewritten where the meaning is known (`wandb.log` keys,
`define_metric`, `wandb_workspaces` and `wandb.automations` builders, config dicts, keyword
arguments of prime-rl's config classes, command-line flags), reported for review where code
reads history or the place is unknown. Identifiers are never renamed, and keys a program
builds (f-strings, concatenation, formatting) are reported for review.

Found with the `ast` module; fixed by replacing only the characters of the name, so quoting,
comments and layout stay, and a second fix changes nothing. The literal edits that make those
fixes (positions from the `ast`) follow the checks: over 300 lines, as they serve them alone.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from wbmigrate.check.documents import parse_error
from wbmigrate.check.flags import flag_findings
from wbmigrate.check.model import BOM, PYTHON_LINE_END, Checked, Finding, Lines, Rule
from wbmigrate.check.places import python_places
from wbmigrate.check.python_context import BUILDERS, Context, Kind, Module, is_prime_rl_config
from wbmigrate.check.targets import Targets, distinctive
from wbmigrate.edit.replacement import Replacement
from wbmigrate.mapping import Fate
from wbmigrate.names import Accessor, accessor, expression_names

# Why a dict key is not renamed into a key the same dict has (its value would be dropped)
_BOTH_KEYS = "the dict has {} too: keep one, by hand"
# Filter-expression calls in strings, as wandb_workspaces writes them: Summary('loss') > 1
_CALL = re.compile(r"\b(?:Summary|Metric|SummaryMetric|KeysInfo)\(\s*(['\"])(?P<name>[^'\"]+)\1")


def check_python(label: str, text: str, targets: Targets) -> Checked:
    try:
        tree = ast.parse(text.removeprefix(BOM))  # as Python reads a file that starts with one
    except SyntaxError as exc:
        starts = Lines(text).python_starts
        line = starts[max(0, min((exc.lineno or 1) - 1, len(starts) - 1))]
        offset = line + max(0, (exc.offset or 1) - 1)
        return parse_error(label, text, offset, f"not valid Python: {exc.msg}")
    except (ValueError, RecursionError) as exc:
        return parse_error(label, text, 0, f"not valid Python: {exc}")
    lines = Lines(text)
    source = Source(label, text, lines, targets, Module.of(tree))
    findings: list[Finding] = []
    # every old name, key and flag holds one: most strings hold none
    anchors = targets.anchors + targets.one_word_flags
    for node, parent in source.module.parents.items():
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if not isinstance(parent, ast.JoinedStr) and any(a in node.value for a in anchors):
                findings += _literal(source, node)
        elif isinstance(node, ast.keyword) and (
            node.arg in targets.config_leaves or node.arg in targets.removed_keys
        ):
            findings += _keyword(source, node, parent)
        elif isinstance(node, ast.keyword) and node.arg in targets.spellings:
            _parameter(source, node, parent)
        elif isinstance(node, ast.JoinedStr | ast.BinOp | ast.Call):
            findings += _computed(source, node, parent)
    findings.sort(key=lambda f: (f.line, f.column))
    return Checked(findings, seen=source.seen, place=python_places(text, tree))


# --- string literals --------------------------------------------------------------------------


def _literal(source: Source, node: ast.Constant) -> Iterator[Finding]:
    value = str(node.value)
    targets = source.targets
    found = accessor(value)
    fate = targets.migration.fate(found.name) if found else None
    if found is not None and fate is not None:
        yield from _metric(source, node, found, fate, source.module.context(node))
    elif value in targets.removed_keys and distinctive(value):
        yield from _removed_string(source, node, value)
    elif value in targets.config_leaves or (value in targets.config_keys and distinctive(value)):
        yield from _config_string(source, node, value)
    else:
        yield from _embedded_names(source, node, value)
        yield from flag_findings(source.label, source.lines, targets, [source.span(node)])


def _metric(
    source: Source, node: ast.Constant, found: Accessor, fate: Fate, context: Context
) -> Iterator[Finding]:
    start, raw = source.literal(node)
    name, new, dual = found.name, fate.new, source.targets.dual
    rule = Rule.REMOVED_METRIC if fate.removed else Rule.RENAMED_METRIC
    spelled = raw.count(name) == 1  # not built from parts (`"off_policy/" "mean"`)
    siblings = present(source, node, spelled) if context.in_list and context.known else None
    listed = siblings is not None and new is not None and found.with_name(new) in siblings
    if not context.known:
        yield source.finding(node, Rule.NEEDS_REVIEW, _unplaced(name, fate, context))
    elif new is None and siblings is not None and dual:
        message = f"{name} is no longer logged; kept for runs from before the boundary"
        yield source.finding(node, Rule.MENTION, message)
    elif new is None and siblings is not None:
        yield source.finding(node, rule, f"{name} is no longer logged: drop it", drop(source, node))
    elif new is None:
        reason = f" ({fate.reason})" if fate.reason else ""
        message = f"{name} is no longer logged and nothing replaces it{reason}"
        yield source.finding(node, rule, message)
    elif listed and dual:
        source.seen.append(source.span(node))  # the old key beside its new one: fine in dual
    elif listed:
        yield source.finding(node, rule, f"{name} -> {new} (already listed)", drop(source, node))
    elif siblings is not None and dual:
        fix = insert_after(source, node, raw.replace(name, new, 1)) if spelled else ()
        yield source.finding(node, rule, f"{name} -> {new} (dual: add beside it)", fix)
    elif new is not None and in_same_dict(source.module, node, found.with_name(new)):
        if dual:  # the old key logged beside its new one: fine in dual
            source.seen.append(source.span(node))
        else:
            yield source.finding(node, rule, f"{name} -> {new} ({_BOTH_KEYS.format(new)})")
    else:
        note = " (removed; the new key carries the same values)" if fate.removed else ""
        fix = replace_inner(raw, start, name, new)
        yield source.finding(node, rule, f"{name} -> {new}{note}", fix)


def _unplaced(name: str, fate: Fate, context: Context) -> str:
    becomes = f"now {fate.new}" if fate.new else "no longer logged"
    if context.kind is Kind.HISTORY:
        return (
            f"{name} ({becomes}) in {context.kind.value}: runs from before the boundary keep "
            f"{name}, newer ones do not; read both (wbmigrate never rewrites reads)"
        )
    if context.call:
        where = f"in an argument of {context.call}(), which wbmigrate does not know"
    elif context.dict_key:
        where = "as a key of a dict wbmigrate cannot trace to a W&B call"
    else:
        where = "in a string wbmigrate cannot trace to a W&B call"
    return f"{name} ({becomes}) {where}; review it (rewritten only where its meaning is known)"


def _config_string(source: Source, node: ast.Constant, value: str) -> Iterator[Finding]:
    """A config key as a string: renamed as a key of a config dict, reviewed where read."""
    start, raw = source.literal(node)
    new = source.targets.config_keys.get(value) or source.targets.config_leaves[value]
    context = source.module.context(node)
    if context.dict_key and context.kind is not Kind.HISTORY:
        rule = source.targets.config_rule(value)
        if in_same_dict(source.module, node, new):
            yield source.finding(
                node, rule, f"{value} -> {new} (config key; {_BOTH_KEYS.format(new)})"
            )
            return
        fix = replace_inner(raw, start, value, new)
        yield source.finding(node, rule, f"{value} -> {new} (config key)", fix)
        return
    where = "code that reads a config (old configs keep the old key)"
    if context.kind is not Kind.HISTORY:
        where = context.kind.value
    message = f"{value} (now {new}) in {where}; review it (rewritten only as a config dict key)"
    yield source.finding(node, Rule.NEEDS_REVIEW, message)


def _removed_string(source: Source, node: ast.Constant, value: str) -> Iterator[Finding]:
    """A removed config key (a dotted path or a TOML form, never a bare last part) as a string:
    an error as a key of a config dict (it no longer loads), reviewed where read."""
    context = source.module.context(node)
    start, end = source.span(node)
    if context.dict_key and context.kind is not Kind.HISTORY:
        yield source.targets.removed(source.label, source.lines, start, end, value, "config key")
    else:
        why = source.targets.removed_keys[value]
        message = f"{value} ({why}) in code that reads a config; review it"
        yield source.finding(node, Rule.NEEDS_REVIEW, message)


def _embedded_names(source: Source, node: ast.Constant, value: str) -> Iterator[Finding]:
    """Names inside filter expressions (`Summary('off_policy/mean') > 0.1`) and `${...}`:
    rewritten in a W&B builder (beside the old one in a dual-mode list), reviewed elsewhere."""
    names = [m["name"] for m in _CALL.finditer(value)]
    names += [a.name for a in expression_names(value)]
    fates = {n: f for n in dict.fromkeys(names) if (f := source.targets.migration.fate(n))}
    if not fates:
        return
    start, raw = source.literal(node)
    context = source.module.context(node)
    for name, fate in fates.items():
        rule = Rule.REMOVED_METRIC if fate.removed else Rule.RENAMED_METRIC
        if not context.known:
            yield source.finding(node, Rule.NEEDS_REVIEW, _unplaced(name, fate, context))
        elif fate.new is None:
            yield source.finding(node, rule, f"{name} is no longer logged and nothing replaces it")
        elif context.in_list and source.targets.dual:
            renamed = {n: f.new for n, f in fates.items() if f.new}
            if _renamed_in(value, renamed) in (siblings(source.module, node) or []):
                source.seen.append(source.span(node))  # its rewritten twin is there already
                return
            new_raw = _renamed_in(raw, renamed)
            fix = insert_after(source, node, new_raw) if new_raw != raw else ()
            message = f"{name} -> {fate.new} (in an expression; dual: add beside it)"
            yield source.finding(node, rule, message, fix)
            return  # one insertion carries every renamed name of the expression
        else:
            fix = tuple(
                Replacement(start + m.start(), start + m.end(), fate.new)
                for m in _whole(name).finditer(raw)
            )
            yield source.finding(node, rule, f"{name} -> {fate.new} (in an expression)", fix)


def _whole(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w/.\-]){re.escape(name)}(?![\w/\-])")


def _renamed_in(raw: str, renamed: dict[str, str]) -> str:
    """The literal's source with every renamed name of its expression replaced."""
    for name, new in renamed.items():
        raw = _whole(name).sub(new.replace("\\", "\\\\"), raw)
    return raw


# --- keyword arguments ------------------------------------------------------------------------


def _keyword(source: Source, node: ast.keyword, call: ast.AST | None) -> Iterator[Finding]:
    """A keyword argument of one of prime-rl's config classes is renamed; any other keyword
    is a parameter of some function, never renamed (the residual pass reports it)."""
    qualified = source.module.qualified(call.func) if isinstance(call, ast.Call) else ""
    if not is_prime_rl_config(qualified):
        return
    name, what = str(node.arg), f"keyword of {qualified.rpartition('.')[2]}"
    start = source.lines.offset(node.lineno, node.col_offset)
    end = start + len(name)
    if source.text[start:end] != name:
        return
    if name in source.targets.removed_keys:
        yield source.targets.removed(source.label, source.lines, start, end, name, what)
    else:
        new, rule = source.targets.config_leaves[name], source.targets.config_rule(name)
        given = call.keywords if isinstance(call, ast.Call) else []
        fix: tuple[Replacement, ...] = (Replacement(start, end, new),)
        message = f"{name} -> {new} ({what})"
        if any(other.arg == new for other in given):  # renamed, Python refuses the call
            message, fix = f"{name} -> {new} ({what}; {new} is given too: keep one, by hand)", ()
        yield source.lines.finding(source.label, start, end, rule, message, fix)


def _parameter(source: Source, node: ast.keyword, call: ast.AST | None) -> None:
    """A keyword of a W&B builder is a parameter (`wr.Layout(x=0)`), never a metric, even when
    a metric of that name is renamed: seen, not reviewed. Any other keyword may be a key
    (`dict(x=1)` logged), and the residual pass reports it."""
    qualified = source.module.qualified(call.func) if isinstance(call, ast.Call) else ""
    if qualified.startswith(BUILDERS) and node.arg is not None:
        start = source.lines.offset(node.lineno, node.col_offset)
        source.seen.append((start, start + len(node.arg)))


# --- keys built at run time -------------------------------------------------------------------


def _computed(source: Source, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
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
        shown = ", ".join(matches[:3]) + (", ..." if len(matches) > 3 else "")
        message = f"a key built here may be an old name ({shown}); check it"
        yield source.finding(node, Rule.NEEDS_REVIEW, message)


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
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Attribute) and func.attr == "format":
        base = _pattern(func.value)
        return re.sub(r"\{[^{}]*\}", "\0", base) if base else None
    return None


# --- the module's text: positions from the ast, and the surgical edits of literals a fix makes ---


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


def in_same_dict(module: Module, node: ast.AST, key: str) -> bool:
    """Whether `node` is a key of a dict literal that has `key` too: renamed into it, the dict
    would have one key twice, and Python keeps the last value alone."""
    parent = module.parents.get(node)
    if not isinstance(parent, ast.Dict) or not any(k is node for k in parent.keys):
        return False
    return any(isinstance(k, ast.Constant) and k.value == key for k in parent.keys)


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
    """Insert `literal` as the next element, on a line of its own if the elements are, ended
    and indented as the element's own line (a file's `\r\n` stays `\r\n` throughout)."""
    parent = source.module.parents[node]
    assert isinstance(parent, ast.List | ast.Tuple | ast.Set)
    _, end = extent(source, node)
    index = parent.elts.index(node)  # type: ignore[arg-type]
    later = parent.elts[index + 1] if index + 1 < len(parent.elts) else None
    later_line = later.lineno if later is not None else parent.end_lineno
    if later_line is not None and source.lines.offset(later_line, 0) > end:
        text = source.text
        starts = source.lines.python_starts
        line_start = starts[bisect.bisect_right(starts, end) - 1]
        indent = re.match(r"[ \t]*", text[line_start:]).group()  # type: ignore[union-attr]
        newline = PYTHON_LINE_END.search(text, end).group()  # type: ignore[union-attr]
        return (Replacement(end, end, f",{newline}{indent}{literal}"),)
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
