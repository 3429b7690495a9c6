"""YAML edits as `check` makes them: a new string for a block scalar is written inside the
block, in its own style (where the YAML edits would refuse it), and every document of a file
is read back at once, so an edit that reaches past its document is never made."""

from __future__ import annotations

import yaml

from wbmigrate.check.diffs import differences
from wbmigrate.check.embedded import StringText, yaml_string
from wbmigrate.edit.edits import Edit, Set
from wbmigrate.edit.located_yaml import Located
from wbmigrate.edit.replacement import Replacement, apply
from wbmigrate.edit.yaml import faithful, unchecked

_SCALARS = yaml.constructor.SafeConstructor()


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
    old = _SCALARS.construct_object(node)
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
