"""Safe YAML loading that remembers where every value came from.

Mapping errors must name the file and line, and PyYAML silently keeps the last of two duplicate
keys, so we compose the node graph ourselves: plain Python values plus a table from each value's
path to its 1-based line and node (for surgical edits).

Specs kept as YAML may use what YAML offers for sharing: several documents in one file (`---`),
anchors and aliases, and merge keys (`<<: *base`). A node reached through an alias is listed
under every path that reaches it, and it is the same node object each time, so an edit made
there is made once, at the anchor. Aliases may not expand without bound (a few lines can
otherwise stand for billions of nodes), and nesting too deep to read is an error, not a crash.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

Path = tuple[str | int, ...]

# Builds scalars (strings, numbers, dates) with the safe loader's own rules.
_SCALARS = yaml.constructor.SafeConstructor()
# YAML's own types: never an object to build (`!!python/...` tags share the prefix)
_STANDARD_TAGS = tuple(
    f"tag:yaml.org,2002:{name}"
    for name in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp")
)
MERGE_TAG = "tag:yaml.org,2002:merge"
# A node's properties (`&anchor`, `!tag`, `!<verbatim tag>`) and the space around them.
_PROPERTIES = re.compile(r"(?:[ \t\r\n]*(?:!<[^>]*>|[&!])[^ \t\r\n]*)*[ \t\r\n]*")
# Nodes built per character of text at most (plus a floor): aliases that expand further are
# refused, the way a decompressor refuses a zip bomb.
EXPANSION = 4
EXPANSION_FLOOR = 10_000
# Where libyaml and the pure-Python parser part: a byte-order mark (libyaml counts no offset for
# it), a tab (libyaml takes one where Python refuses it, `a:\tb`), a comment right after a
# block scalar's indicator (`|#`, likewise).
_LIBYAML_DIFFERS = re.compile("[\t\ufeff]|[|>][-+0-9]*#")


@dataclass(frozen=True)
class YamlProblem:
    """A structural problem found while loading (a duplicate key); the loader still goes on."""

    path: Path
    line: int
    message: str
    span: tuple[int, int] = (0, 0)  # the offsets of what is not read: a duplicate key and value


@dataclass
class Located:
    """Parsed YAML data with the line of every key and value, by path from the root.

    `index` is the document's place in a multi-document file; `aliases` lists each path where
    a node is reached again (an alias, or a mapping merged in), with that node."""

    data: Any
    key_lines: dict[Path, int] = field(default_factory=dict)
    value_lines: dict[Path, int] = field(default_factory=dict)
    problems: list[YamlProblem] = field(default_factory=list)
    nodes: dict[Path, yaml.Node] = field(default_factory=dict)  # for surgical edits
    key_nodes: dict[Path, yaml.Node] = field(default_factory=dict)
    # the mapping that holds each key itself: its own, or one it merges in (`<<: *base`), where
    # an edit of a merged key belongs (at the anchor, once for every mapping that merges it)
    holders: dict[Path, yaml.MappingNode] = field(default_factory=dict)
    index: int = 0
    aliases: list[tuple[Path, yaml.Node]] = field(default_factory=list)

    def line(self, path: Path) -> int:
        """The line of the key at `path`, else of its value, else of the nearest parent."""
        for end in range(len(path), -1, -1):
            line = self.key_lines.get(path[:end]) or self.value_lines.get(path[:end])
            if line:  # lines count from 1
                return line
        return 1


def _fast_loader() -> type[yaml.SafeLoader]:
    """libyaml's parser when pyyaml has it (its wheels carry it). Only libyaml 0.2.5 and later
    bound how deep a document nests; an older one could overflow the C stack, so it is not
    used."""
    try:
        from yaml import _yaml

        recent = tuple(_yaml.get_version()) >= (0, 2, 5)
    except (ImportError, AttributeError):
        return yaml.SafeLoader
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader) if recent else yaml.SafeLoader


FAST_LOADER = _fast_loader()


def load_located(text: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader) -> Located:
    """Parse one YAML document safely; raise yaml.YAMLError on a syntax error, a tag that is
    not one of YAML's own (`!!python/...`), or nesting too deep to read. `loader`: libyaml's
    `CSafeLoader` reads 14x faster (a 4,400-line mapping: 14 vs 190 ms) and gives the same
    lines, for a reader that needs no more of a node than its line."""
    return _load(text, lambda: [yaml.compose(text, Loader=loader)], merges=False)[0]


def load_located_all(text: str) -> list[Located]:
    """Every document of a YAML stream (`---`), each located on its own, merge keys resolved
    as YAML's merge type says (a key of the mapping itself wins over a merged one, and an
    earlier merged mapping over a later one). Raises like `load_located`.

    libyaml reads it when it can (`FAST_LOADER`): a text that ends with a line break and holds
    none of `_LIBYAML_DIFFERS`. Its nodes and marks are then the pure-Python parser's, offsets in
    characters included (`tests/edit/test_located_yaml.py`), but for what no reader asks: where
    an empty value inside `{}` or `[]` is, and two styles readers test only for truth (a plain
    scalar's is "", not None; an indentless sequence's flow style False, not None). A text it
    refuses is read again by the pure-Python parser, so that an error says what it said
    before, where it said it. `check` of an 862 KB YAML spec: 4.5 s -> 1.5 s."""

    def read(loader: type[yaml.SafeLoader]) -> list[Located]:
        return _load(text, lambda: list(yaml.compose_all(text, Loader=loader)), merges=True)

    if (
        FAST_LOADER is not yaml.SafeLoader
        and text.endswith("\n")  # else libyaml puts the last node's end on the next line
        and not _LIBYAML_DIFFERS.search(text)
    ):
        try:
            return read(FAST_LOADER)
        except (yaml.YAMLError, UnicodeEncodeError):  # a lone surrogate has no UTF-8 for it
            pass  # read again: the error as the pure-Python parser words and places it
    return read(yaml.SafeLoader)


def _load(text: str, compose: Callable[[], list[yaml.Node | None]], merges: bool) -> list[Located]:
    converter = _Converter(EXPANSION_FLOOR + EXPANSION * len(text), merges)
    try:
        return [converter.document(node, i) for i, node in enumerate(compose())]
    except RecursionError:
        raise yaml.YAMLError("YAML nested too deeply to read") from None


def _error(message: str, node: yaml.Node) -> yaml.YAMLError:
    return yaml.constructor.ConstructorError(None, None, message, node.start_mark)


class _Converter:
    """Plain values from the nodes of a text's documents, recording every node by path.
    `budget`: how many more nodes the aliases of the text may expand to."""

    def __init__(self, budget: int, merges: bool) -> None:
        self.budget = budget
        self.merges = merges

    def document(self, node: yaml.Node | None, index: int) -> Located:
        self.located = Located(data=None, index=index)
        self.visited: set[int] = set()
        if node is not None:
            self.located.data = self.convert(node, (), False)
        return self.located

    def convert(self, node: yaml.Node, path: Path, inside: bool) -> Any:
        """`inside`: whether the node is reached through an alias (or a merge key)."""
        if node.tag not in _STANDARD_TAGS:
            raise _error(f"the tag {node.tag} is not allowed here", node)
        self.located.value_lines[path] = node.start_mark.line + 1
        self.located.nodes[path] = node
        inside = self._visit(node, path, inside)
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, path, inside)
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(item, (*path, i), inside) for i, item in enumerate(node.value)]
        return scalar(node)

    def _visit(self, node: yaml.Node, path: Path, inside: bool) -> bool:
        """Count the node against the budget; record it when it is reached again (an alias),
        but not the nodes inside it, which its span covers. Whether what it holds is inside an
        alias."""
        self.budget -= 1
        if self.budget < 0:
            raise _error("aliases expand to too many nodes to read", node)
        again = id(node) in self.visited
        if again and not inside:
            self.located.aliases.append((path, node))
        self.visited.add(id(node))
        return inside or again

    def mapping(
        self, node: yaml.MappingNode, path: Path, inside: bool, taken: frozenset[Any] = frozenset()
    ) -> dict[Any, Any]:
        """A mapping's own keys (the first of duplicates kept, the others reported), then those
        of the mappings it merges in that it does not have itself. `taken`: the keys a mapping
        that merges this one already has (they are not read here, so their paths stay theirs)."""
        result: dict[Any, Any] = {}
        merged: list[yaml.MappingNode] = []
        for key_node, value_node in node.value:
            if self.merges and key_node.tag == MERGE_TAG:
                merged += _merge_sources(value_node)
                continue
            key = _key(key_node)
            child = (*path, key)
            line = key_node.start_mark.line + 1
            if key in result:
                span = (key_node.start_mark.index, value_node.end_mark.index)
                problem = YamlProblem(child, line, f"duplicate key {key!r}", span)
                self.located.problems.append(problem)
                continue
            if key in taken:
                continue
            self.located.key_lines[child] = line
            self.located.key_nodes[child] = key_node
            self.located.holders[child] = node
            result[key] = self.convert(value_node, child, inside)
        for source in merged:
            within = self._visit(source, path, inside)
            result.update(self.mapping(source, path, within, taken | frozenset(result)))
        return result


def _merge_sources(value: yaml.Node) -> list[yaml.MappingNode]:
    """The mappings a merge key names: one, or a list of them (earlier ones win)."""
    sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
    mappings = [s for s in sources if isinstance(s, yaml.MappingNode)]
    if len(mappings) != len(sources):
        raise _error("a merge key (<<) takes a mapping or a list of mappings", value)
    return mappings


def _key(node: yaml.Node) -> str | int:
    if not isinstance(node, yaml.ScalarNode):
        return f"<{type(node).__name__}>"  # a complex key: the schema check rejects it
    key = scalar(node)
    return key if isinstance(key, str | int) else str(key)


def scalar(node: yaml.Node) -> Any:
    """A scalar's value; one that its tag cannot hold (`2026-01-32`) is a YAML error at it."""
    try:
        return _SCALARS.construct_object(node)
    except (ValueError, OverflowError) as exc:
        raise _error(f"{node.value!r} cannot be read ({exc})", node) from None
    finally:  # the constructor keeps what it built: every node, and the whole text it holds
        _SCALARS.constructed_objects.pop(node, None)
        _SCALARS.recursive_objects.pop(node, None)


def value_start(text: str, node: yaml.Node) -> int:
    """Where a node's value starts: its marks also cover an anchor (`&base`) or a tag before
    it, which an edit of the value must keep."""
    start, end = node.start_mark.index, node.end_mark.index
    pos = _PROPERTIES.match(text, start, end).end()  # type: ignore[union-attr]
    return pos if pos < end else start
