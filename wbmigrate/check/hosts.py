"""The texts findings live in: a JSON document, one YAML document of a file, or a spec kept as
JSON text in a string of either. Each locates a path (its value, or its key) in the file and
turns one finding's edits into the file replacement that fixes it, in the file's own style.
Over 300 lines because a YAML fix is located, made and read back here, beside the JSON one it
mirrors: the three hosts share every helper, and apart they would each need all of them.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable, Hashable
from dataclasses import replace
from functools import cached_property
from typing import Any

import yaml

from wbmigrate.check.embedded import StringText, json_string, yaml_string
from wbmigrate.check.model import Fix
from wbmigrate.check.unread import by_path
from wbmigrate.edit.edits import AddKey, Delete, Edit, EditConflict, Insert, Path, RenameKey, Set
from wbmigrate.edit.json import JsonText, container_of
from wbmigrate.edit.located_yaml import Located, scalar, value_start
from wbmigrate.edit.replacement import Replacement, apply
from wbmigrate.edit.yaml import faithful, unchecked

Span = tuple[int, int]
_MISSING = (KeyError, ValueError, IndexError, TypeError)


class JsonHost:
    """A JSON file's document (`data`: the text as `json.loads` read it)."""

    def __init__(self, text: str, data: Any) -> None:
        self.text = text
        self.data = data
        self.indexed = JsonText(text)

    def span(self, path: Path, key: bool = False) -> Span:
        for end in range(len(path), -1, -1):  # the nearest part of the path that is there
            try:
                return self.indexed.locate(path[:end], key=key and end == len(path))
            except _MISSING:
                continue
        return 0, 0

    def seen(self, root: Path) -> list[Span]:
        return [self.span(root)]

    same = staticmethod(by_path)  # what value a path reaches: one value per path

    def fix(self, edits: list[Edit]) -> Fix:
        try:
            return (_spliced(self.indexed, edits),)
        except (*_MISSING, EditConflict):
            return ()

    def string(self, path: Path, value: str, data: Any) -> StringSpec:
        start, end = self.span(path)
        return StringSpec(self.text, (start, end), json_string(self.text, start, end, value), data)


class YamlHost:
    """One document of a YAML file (a file may hold several, `---` apart)."""

    def __init__(self, text: str, located: Located, documents: list[Located]) -> None:
        self.text = text
        self.located = located
        self.documents = documents
        self.data = located.data
        self.trusted = False  # every edit of the file was read back together, and is made
        self.plan: list[Edit] = []  # every edit the engine wants in this document

    def span(self, path: Path, key: bool = False) -> Span:
        nodes, keys = self.located.nodes, self.located.key_nodes
        for end in range(len(path), -1, -1):
            as_key = key or end < len(path)  # the nearest part that is there: at its key
            node = (keys.get(path[:end]) if as_key else None) or nodes.get(path[:end])
            if node is not None:
                return value_start(self.text, node), node.end_mark.index
        return 0, 0

    def seen(self, root: Path) -> list[Span]:
        """The spec's own text, and the anchors it reaches through aliases and merge keys; not
        a duplicate key's entry, which the spec does not hold (the first is read): the residual
        pass gives its names their results."""
        inside = [node for path, node in self.located.aliases if path[: len(root)] == root]
        spans = [self.span(root), *((value_start(self.text, n), n.end_mark.index) for n in inside)]
        unread = [p.span for p in self.located.problems if p.path[: len(root)] == root]
        return [piece for span in spans for piece in _outside(span, unread)]

    def same(self, path: Path) -> Hashable:
        """What value `path` reaches: its node, one for every alias of it."""
        node = self.located.nodes.get(path)
        return id(node) if node is not None else path

    def fix(self, edits: list[Edit]) -> Fix:
        """One finding's fix. Each is read back on its own (a parse of the file) unless the
        edits of the whole file were read back together (`trusted`), one parse for all."""
        shared = self.with_shared(edits)
        if shared is None:
            return ()
        edited = {self.located.index: shared}
        new = yaml_faithful(self.text, self.documents, edited, trusted=self.trusted)
        return (minimal(self.text, new),) if new is not None else ()

    def with_shared(self, edits: list[Edit]) -> list[Edit] | None:
        """`edits`, each also made at every other path that reaches the node it changes: a
        change of an anchored node is made once, at the anchor, and shows wherever the node is
        used, so that is what the edited text is checked against. None when two uses of one
        node would need different edits (`plan`): they cannot be told apart in the text."""
        if not self.located.aliases:  # no node is reached by two paths
            return edits
        out = list(edits)
        for edit in edits:
            if self._diverges(edit):
                return None
            out += [e for e in self._elsewhere(edit) if e not in out]
        return out

    def _diverges(self, edit: Edit) -> bool:
        """Whether a node the edit lies in is used in several places that the engine edits
        differently (a list that one panel extends and another renames)."""
        at = _position(edit)
        for end in range(len(at), -1, -1):
            uses = self._paths(self.located.nodes.get(at[:end]), keys=False)
            if len(uses) > 1 and len({self._inside(u) for u in uses} - {frozenset()}) > 1:
                return True
        return False

    def _inside(self, use: Path) -> frozenset[tuple[object, ...]]:
        """The planned edits within one use of a node, relative to it."""
        depth = len(use)
        return frozenset(
            (type(e).__name__, e.path[depth:], repr(replace(e, path=())))
            for e in self.plan
            if _position(e)[:depth] == use
        )

    def _elsewhere(self, edit: Edit) -> list[Edit]:
        path = edit.path
        if isinstance(edit, Set):
            return [replace(edit, path=p) for p in self._paths(self.located.nodes.get(path))]
        if isinstance(edit, RenameKey | Delete) and path in self.located.key_nodes:
            return [replace(edit, path=p) for p in self._paths(self.located.key_nodes[path])]
        if isinstance(edit, Insert | Delete):
            container = self._paths(self.located.nodes.get(path[:-1]))
            return [replace(edit, path=(*p, path[-1])) for p in container]
        if not isinstance(edit, AddKey) or edit.after is None:
            return []
        after = self.located.key_nodes.get((*path[:-1], edit.after))
        return [replace(edit, path=(*p[:-1], path[-1])) for p in self._paths(after)]

    def _paths(self, node: yaml.Node | None, keys: bool = True) -> list[Path]:
        """Every path that reaches `node` (as a value, or also as a key)."""
        paths = self._by_node.get(id(node), []) if node is not None else []
        return paths if keys else [p for p in paths if self.located.nodes.get(p) is node]

    @cached_property
    def _by_node(self) -> dict[int, list[Path]]:
        found: dict[int, list[Path]] = {}
        for table in (self.located.nodes, self.located.key_nodes):
            for path, at in table.items():
                found.setdefault(id(at), []).append(path)
        return found

    def string(self, path: Path, value: str, data: Any) -> StringSpec:
        node = self.located.nodes[path]
        literal = value_start(self.text, node), node.end_mark.index
        return StringSpec(self.text, literal, yaml_string(self.text, node, value), data)


class StringSpec:
    """A spec kept as JSON text in a string of a document: located inside the string, fixed
    in the string's own quoting or block style (or not at all, for a style that is not)."""

    def __init__(self, text: str, literal: Span, string: StringText | None, data: Any) -> None:
        self.text = text
        self.literal = literal
        self.string = string
        self.data = data
        self.inner = JsonText(string.value if string is not None else "")

    def span(self, path: Path, key: bool = False) -> Span:
        if self.string is None:
            return self.literal
        try:
            start, end = self.inner.locate(path, key=key)
        except _MISSING:
            return self.literal
        return self.string.span(start, end)

    def seen(self, root: Path) -> list[Span]:
        return [self.literal]

    same = staticmethod(by_path)  # what value a path reaches: one value per path

    def fix(self, edits: list[Edit]) -> Fix:
        """One finding's fix: spliced within the containers of its edits (exact, so the
        string need not be read back for each finding)."""
        if self.string is None or not edits:
            return ()
        try:
            pieces = self._pieces(_apart(edits))
        except (*_MISSING, EditConflict):
            return ()
        written = self.string.replacements(self.text, pieces, whole=False) if pieces else None
        return tuple(written or ())

    def replacements(self, edits: list[Edit]) -> list[Replacement] | None:
        """The replacements that make `edits` (those of several findings) in the string: one
        for each part of the JSON text they change, so the text between keeps its bytes (and
        its escapes), read back as a whole. None: not safely."""
        if self.string is None or not edits:
            return None
        try:
            whole = self.inner.splice(edits)
            pieces = next(
                found
                for found in (self._pieces([[e] for e in edits]), self._pieces(_apart(edits)))
                if found is not None and apply(self.inner.text, found) == whole
            )
        except (*_MISSING, EditConflict, StopIteration):
            return None
        return self.string.replacements(self.text, pieces)

    def _pieces(self, groups: list[list[Edit]]) -> list[Replacement] | None:
        """One piece of new text for each group of edits, spliced within its container; None
        when two of them overlap."""
        pieces = sorted(_spliced(self.inner, group) for group in groups)
        apart = all(a.end <= b.start for a, b in itertools.pairwise(pieces))
        return pieces if apart else None


def _spliced(document: JsonText, edits: list[Edit]) -> Replacement:
    """The smallest replacement that makes `edits`, spliced within their container."""
    within = document.splice_within(edits)
    found = minimal(document.text[within.start : within.end], within.text)
    return Replacement(within.start + found.start, within.start + found.end, found.text)


def _position(edit: Edit) -> Path:
    """The value an edit changes: the one it sets, or the collection it changes a member of."""
    return edit.path if isinstance(edit, Set) else edit.path[:-1]


def _outside(span: Span, holes: list[Span]) -> list[Span]:
    """The pieces of `span` outside every hole."""
    pieces, (start, end) = [], span
    for hole_start, hole_end in sorted(holes):
        if hole_start >= end or hole_end <= start:
            continue
        pieces.append((start, max(start, hole_start)))
        start = max(start, hole_end)
    return [(a, b) for a, b in [*pieces, (start, end)] if a < b]


def _apart(edits: list[Edit]) -> list[list[Edit]]:
    """The edits in groups whose containers lie apart (an edit inside another's container
    joins its group), so each group is spliced within its own container."""
    groups: dict[Path, list[Edit]] = {}
    for edit in sorted(edits, key=lambda e: len(container_of([e]))):
        container = container_of([edit])
        owner = next((c for c in groups if container[: len(c)] == c), container)
        groups.setdefault(owner, []).append(edit)
    return list(groups.values())


# --- YAML edits as `check` makes them: a new string for a block scalar is written inside the
# block, in its own style (where the YAML edits would refuse it), and every document of a file
# is read back at once, so an edit that reaches past its document is never made.


def yaml_replacements(text: str, located: Located, edits: list[Edit]) -> list[Replacement] | None:
    """The replacements that make `edits` in one YAML document, unchecked. A new string for a
    block scalar (`|`, `>`) is written inside the block, in its style, where the YAML edits
    would refuse it."""
    plain, found = [], []
    for edit in edits:
        block = _in_block(text, located, edit)
        if block is None:
            plain.append(edit)
            continue
        string, new = block
        written = string.replacements(text, differences(string.value, new))
        if written is None:
            return None
        found += written
    rest = unchecked(text, located, plain)
    return None if rest is None else found + rest


def _in_block(text: str, located: Located, edit: Edit) -> tuple[StringText, str] | None:
    """A new string for a block scalar, with how to write inside that block."""
    if not isinstance(edit, Set) or not isinstance(edit.value, str):
        return None
    node = located.nodes.get(edit.path)
    if not isinstance(node, yaml.ScalarNode) or node.style not in ("|", ">"):
        return None
    old = scalar(node)
    string = yaml_string(text, node, old) if isinstance(old, str) else None
    return (string, edit.value) if string is not None else None


def yaml_faithful(
    text: str, documents: list[Located], edits: dict[int, list[Edit]], trusted: bool = False
) -> str | None:
    """`text` with the edits of each document made, or None when they cannot all be made
    safely (read back, unless `trusted`: they were, with others)."""
    found = []
    for located in documents:
        written = yaml_replacements(text, located, edits.get(located.index, []))
        if written is None:
            return None
        found += written
    if not trusted and not faithful(text, documents, edits, found):
        return None
    return apply(text, found)


def yaml_fixed(
    text: str,
    documents: list[YamlHost],
    located: list[Located],
    edits_of: Callable[[YamlHost], list[Edit]],
) -> str | None:
    """`text` with each document's edits made (and at every other use of a node they change),
    or None when they cannot all be made safely."""
    edits = {d.located.index: d.with_shared(edits_of(d)) for d in documents}
    if any(e is None for e in edits.values()):
        return None
    return yaml_faithful(text, located, {i: e for i, e in edits.items() if e is not None})


# --- the smallest replacements between two texts: a fix changes only what differs, so every
# other byte (and its spelling: escapes, line breaks) stays.


def minimal(text: str, new: str) -> Replacement:
    """The one replacement that turns `text` into `new` (common head and tail kept)."""
    limit = min(len(text), len(new))
    head = longest(lambda n: text[:n] == new[:n], limit)
    tail = longest(lambda n: text[len(text) - n :] == new[len(new) - n :], limit - head)
    return Replacement(head, len(text) - tail, new[head : len(new) - tail])


def longest(agrees: Callable[[int], bool], high: int) -> int:
    """The largest n in [0, high] for which `agrees(n)`, given that it holds up to some n and
    no further: a binary search of C-speed slice comparisons, not a loop over characters."""
    low = 0
    while low < high:
        middle = (low + high + 1) // 2
        if agrees(middle):
            low = middle
        else:
            high = middle - 1
    return low


def differences(old: str, new: str) -> list[Replacement]:
    """Where `new` differs from `old`, in pieces (for a short string; one piece for a long
    one), so a block scalar keeps its own line breaks between them."""
    if len(old) + len(new) > 20_000:
        return [minimal(old, new)]
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [
        Replacement(a, b, new[c:d]) for op, a, b, c, d in matcher.get_opcodes() if op != "equal"
    ]


Host = JsonHost | YamlHost | StringSpec
