"""The edits of `edit.edits`, applied to YAML text as replacements at the nodes' marks.

Comments, quoting, indentation and key order stay; a new scalar keeps the style of the one it
replaces, new collections are written in flow style (valid YAML, one line). An edit this module
cannot place safely makes the whole file unfixable (None), never a guess.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import yaml

from wbmigrate.edit.edits import (
    AddKey,
    Delete,
    Edit,
    EditConflict,
    Insert,
    RenameKey,
    Set,
    materialize,
)
from wbmigrate.edit.located_yaml import Located, load_located_all, value_start
from wbmigrate.edit.replacement import Replacement, apply

_PLAIN = re.compile(r"[A-Za-z_$][\w./:$-]*\Z")
_SPECIAL = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"}


class CannotEdit(Exception):
    """An edit this module does not place safely."""


def unchecked(text: str, located: Located, edits: list[Edit]) -> list[Replacement] | None:
    """Replacements that make `edits` in one document of `text`, or None when they cannot be
    placed safely. Unchecked: `faithful` checks them, for every document of the text at once."""
    try:
        deleted = _deleted(located, edits)
        found = [_replacement(text, located, edit, deleted) for edit in edits]
    except (CannotEdit, KeyError):
        return None
    return _line_ends(text, found)


def _line_ends(text: str, found: list[Replacement]) -> list[Replacement]:
    """The replacements with their lines ended as the text's first line is: CRLF in a file
    written so, where a new line ending in LF alone would mix the two."""
    first = text.find("\n")
    if first < 1 or text[first - 1] != "\r":
        return found
    return [replace(r, text=re.sub(r"\r?\n", "\r\n", r.text)) for r in found]


Deleted = dict[int, set[int]]  # collection node id -> indexes of the members deleted


def _deleted(located: Located, edits: list[Edit]) -> Deleted:
    """The members `edits` delete, by collection: deletions in one collection are placed
    together (neighbours in `[a, b, c]` share a comma; a collection that loses every member
    is written as [] or {}, where removing them one by one would leave null)."""
    found: Deleted = {}
    for edit in edits:
        if isinstance(edit, Delete):
            parent, index = _member(located, edit)
            found.setdefault(id(parent), set()).add(index)
    return found


def _member(located: Located, edit: Edit) -> tuple[yaml.CollectionNode, int]:
    """The collection that holds the member an edit deletes, and its index there."""
    parent = located.nodes[edit.path[:-1]]
    if isinstance(parent, yaml.MappingNode):
        key, holder = located.key_nodes[edit.path], located.holders[edit.path]
        return holder, next(i for i, (k, _) in enumerate(holder.value) if k is key)
    if not isinstance(parent, yaml.SequenceNode):
        raise CannotEdit("delete from a scalar")
    return parent, int(edit.path[-1])


def faithful(
    text: str, documents: list[Located], edits: dict[int, list[Edit]], found: list[Replacement]
) -> bool:
    """Whether the replacements make exactly the edits of each document of `text` and change
    nothing else (YAML has corners no rule foresees). The edited text is read back with the
    same loader, so merge keys and aliases are read alike on both sides."""
    edited = apply(text, found)
    if edited is None:
        return False
    try:
        after = load_located_all(edited)
        return len(after) == len(documents) and all(
            new.data == materialize(old.data, edits.get(old.index, []))
            for old, new in zip(documents, after, strict=True)
        )
    except (yaml.YAMLError, EditConflict, RecursionError):
        return False


def render(value: Any, like: yaml.Node | None = None) -> str:
    """`value` as YAML: a string in the style of the scalar it replaces, else flow/JSON."""
    if isinstance(value, str):
        style = like.style if isinstance(like, yaml.ScalarNode) else None
        if style == "'" and "'" not in value and "\n" not in value:
            return f"'{value}'"
        plain = not style  # a plain scalar's style: None from the Python parser, "" from libyaml
        if plain and _PLAIN.match(value) and value.lower() not in _SPECIAL:
            return value
    return json.dumps(value, ensure_ascii=False)  # JSON is valid flow YAML


def _replacement(text: str, located: Located, edit: Edit, deleted: Deleted) -> Replacement:
    if isinstance(edit, Set):
        node = located.nodes[edit.path]
        if isinstance(node, yaml.MappingNode) and isinstance(edit.value, dict):
            # (a run-set filter that becomes a group): in flow style
            start, end = value_start(text, node), _content_end(text, node)
            if "#" in text[start:end]:  # a comment it holds would be lost
                raise CannotEdit(edit.path)
            return Replacement(start, end, render(edit.value))
        if not isinstance(node, yaml.ScalarNode) or node.style in ("|", ">"):
            raise CannotEdit(edit.path)
        return Replacement(value_start(text, node), node.end_mark.index, render(edit.value, node))
    if isinstance(edit, RenameKey):
        key = located.key_nodes[edit.path]
        return Replacement(key.start_mark.index, key.end_mark.index, render(edit.new_key, key))
    if isinstance(edit, Insert):
        return _insert(text, located.nodes[edit.path[:-1]], int(edit.path[-1]), edit.value)
    if isinstance(edit, AddKey):
        return _add_key(text, located, edit)
    return _delete(text, located, edit, deleted)


def _insert(text: str, sequence: yaml.Node, index: int, value: Any) -> Replacement:
    if not isinstance(sequence, yaml.SequenceNode):
        raise CannotEdit("not a sequence")
    items = sequence.value
    if sequence.flow_style:
        if not items:
            start, end = value_start(text, sequence), sequence.end_mark.index
            return Replacement(start, end, f"[{render(value)}]")
        if index == 0:
            at = items[0].start_mark.index
            return Replacement(at, at, f"{render(value)}, ")
        at = items[index - 1].end_mark.index
        return Replacement(at, at, f", {render(value, items[index - 1])}")
    if not items:
        raise CannotEdit("insert into an empty block sequence")
    like = items[index - 1] if index else items[0]  # after the item before, or before the first
    dash = text.rfind("-", 0, like.start_mark.index)
    line_start = text.rfind("\n", 0, dash) + 1
    margin = " " * (dash - line_start)
    item = _item(value, like, margin)
    if index:
        at = _new_line_at(text, _content_end(text, like))
        return Replacement(at, at, f"\n{margin}- {item}")
    if text[line_start:dash].strip():  # `- - a`: after the outer dash
        return Replacement(dash, dash, f"- {item}\n{margin}")
    return Replacement(line_start, line_start, f"{margin}- {item}\n")


def _item(value: Any, like: yaml.Node, margin: str) -> str:
    """A new block-sequence item: a mapping in block style like its neighbours, else a value."""
    if not isinstance(value, dict) or not value:
        return render(value, like)
    block = yaml.dump(value, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=10_000)
    lines = block.rstrip("\n").split("\n")
    return "\n".join([lines[0], *(line and margin + "  " + line for line in lines[1:])])


class _BlockDumper(yaml.SafeDumper):
    """Safe YAML with multi-line strings as literal blocks, as a person would write them."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_BlockDumper.add_representer(str, _represent_str)


def _add_key(text: str, located: Located, edit: AddKey) -> Replacement:
    if edit.after is None:  # last: not placed
        raise CannotEdit(edit.path)
    before = (*edit.path[:-1], edit.after)  # a KeyError unless a key of the mapping
    key, value = located.key_nodes[before], located.nodes[before]
    member = f"{render(str(edit.path[-1]), key)}: {render(edit.value, value)}"
    if located.holders[before].flow_style:
        return Replacement(value.end_mark.index, value.end_mark.index, f", {member}")
    at = _new_line_at(text, _content_end(text, value))
    return Replacement(at, at, "\n" + " " * key.start_mark.column + member)


def _delete(text: str, located: Located, edit: Edit, deleted: Deleted) -> Replacement:
    parent, index = _member(located, edit)
    node = located.nodes[edit.path]
    gone = deleted[id(parent)]
    if len(gone) >= len(parent.value):  # the collection becomes empty: write it as [] or {}
        return _emptied(text, parent)
    if parent.flow_style:
        return _flow_delete(text, parent, index, gone)
    if isinstance(parent, yaml.SequenceNode):
        start = text.rfind("-", 0, node.start_mark.index)
        following = [i for i in parent.value if i.start_mark.index > node.start_mark.index]
    else:
        start = located.key_nodes[edit.path].start_mark.index
        following = [key for key, _ in parent.value if key.start_mark.index > start]
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].strip() and following:  # `- k: a` (or `- - a`): keep the dash
        after = following[0].start_mark.index
        end = text.rfind("-", 0, after) if isinstance(parent, yaml.SequenceNode) else after
        return Replacement(start, end, "")
    return Replacement(line_start, _line_end(text, _content_end(text, node)) + 1, "")


def _flow_delete(text: str, parent: yaml.CollectionNode, index: int, gone: set[int]) -> Replacement:
    """Delete the run of neighbouring members of `[a, b, c]` (or `{k: v, ...}`) that holds
    `index`, with the comma before it (after it, for a run at the start)."""
    if isinstance(parent, yaml.MappingNode):
        spans = [(key.start_mark.index, value.end_mark.index) for key, value in parent.value]
    else:
        spans = [(value_start(text, value), value.end_mark.index) for value in parent.value]
    first, last = index, index
    while first - 1 in gone:
        first -= 1
    while last + 1 in gone:
        last += 1
    if first == 0:
        return Replacement(spans[0][0], spans[last + 1][0], "")
    return Replacement(spans[first - 1][1], spans[last][1], "")


def _emptied(text: str, collection: yaml.CollectionNode) -> Replacement:
    """Replace a collection that loses its last member with `[]` or `{}`; a block one on the
    line of its key (it may start on the next line, where a flow one would not belong)."""
    empty = "[]" if isinstance(collection, yaml.SequenceNode) else "{}"
    start = value_start(text, collection)
    if collection.flow_style:
        return Replacement(start, collection.end_mark.index, empty)
    back = len(text[:start].rstrip(" \t\r\n"))
    if back > 0 and text[back - 1] in ":-":
        return Replacement(back, _content_end(text, collection), f" {empty}")
    return Replacement(start, _content_end(text, collection), empty)


def _content_end(text: str, node: yaml.Node) -> int:
    """Where a node's own text ends (block collections end at the next line's start)."""
    start = node.start_mark.index
    return start + len(text[start : node.end_mark.index].rstrip(" \t\r\n"))


def _new_line_at(text: str, offset: int) -> int:
    """Where a new line starts after the line holding `offset`: before that line's break, CR LF
    or LF (between CR and LF, the new line would take the CR and end in LF alone)."""
    at = _line_end(text, offset)
    return at - 1 if at > offset and text[at - 1 : at + 1] == "\r\n" else at


def _line_end(text: str, offset: int) -> int:
    """The end of the line holding `offset` (after any trailing comment)."""
    newline = text.find("\n", offset)
    return len(text) if newline < 0 else newline
