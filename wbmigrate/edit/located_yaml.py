"""Safe YAML loading that remembers where every value came from.

Mapping errors must name the file and line, and PyYAML silently keeps the last of two duplicate
keys, so we compose the node graph ourselves: plain Python values plus a table from each value's
path to its 1-based line.
"""

from __future__ import annotations

from collections.abc import Iterator
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


@dataclass(frozen=True)
class YamlProblem:
    """A structural problem found while loading (a duplicate key); the loader still goes on."""

    path: Path
    line: int
    message: str


@dataclass
class Located:
    """Parsed YAML data with the line of every key and value, by path from the root."""

    data: Any
    key_lines: dict[Path, int] = field(default_factory=dict)
    value_lines: dict[Path, int] = field(default_factory=dict)
    problems: list[YamlProblem] = field(default_factory=list)
    nodes: dict[Path, yaml.Node] = field(default_factory=dict)  # for surgical edits
    key_nodes: dict[Path, yaml.Node] = field(default_factory=dict)

    def line(self, path: Path) -> int:
        """The line of the key at `path`, else of its value, else of the nearest parent."""
        for probe in _prefixes(path):
            if probe in self.key_lines:
                return self.key_lines[probe]
            if probe in self.value_lines:
                return self.value_lines[probe]
        return 1


def _prefixes(path: Path) -> Iterator[Path]:
    for end in range(len(path), -1, -1):
        yield path[:end]


def load_located(text: str) -> Located:
    """Parse one YAML document safely; raise yaml.YAMLError on a syntax error, a tag that is
    not one of YAML's own (`!!python/...`), or nesting too deep to read."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        located = Located(data=None)
        if node is not None:
            located.data = _convert(node, (), located)
    except RecursionError:
        raise yaml.YAMLError("YAML nested too deeply to read") from None
    return located


def _convert(node: yaml.Node, path: Path, located: Located) -> Any:
    if node.tag not in _STANDARD_TAGS:
        raise yaml.constructor.ConstructorError(
            None, None, f"the tag {node.tag} is not allowed here", node.start_mark
        )
    located.value_lines[path] = node.start_mark.line + 1
    located.nodes[path] = node
    if isinstance(node, yaml.MappingNode):
        return _convert_mapping(node, path, located)
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, (*path, i), located) for i, item in enumerate(node.value)]
    return _SCALARS.construct_object(node)


def _convert_mapping(node: yaml.MappingNode, path: Path, located: Located) -> dict[Any, Any]:
    result: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = _key(key_node)
        child = (*path, key)
        line = key_node.start_mark.line + 1
        if key in result:
            located.problems.append(YamlProblem(child, line, f"duplicate key {key!r}"))
            continue
        located.key_lines[child] = line
        located.key_nodes[child] = key_node
        result[key] = _convert(value_node, child, located)
    return result


def _key(node: yaml.Node) -> str | int:
    if not isinstance(node, yaml.ScalarNode):
        return f"<{type(node).__name__}>"  # a complex key: the schema check rejects it
    key = _SCALARS.construct_object(node)
    return key if isinstance(key, str | int) else str(key)
