"""Surgical edits of JSON documents: change what the edits name and keep every other byte.

W&B stores a view's spec as a JSON string. Re-serialising it would change number formatting,
string escapes and whitespace, so edits are applied twice from one list: to the parsed value
(`materialize`, for further analysis) and to the original text (`splice`, for writing). Untouched
members keep their exact bytes; new values follow the document's own style (compact or indented).

Paths are tuples of object keys and array indexes into the *original* document.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Set:
    """Replace the value at `path`."""

    path: Path
    value: Any


@dataclass(frozen=True)
class Insert:
    """Insert `value` into an array before the original element at `path[-1]` (or append)."""

    path: Path
    value: Any


@dataclass(frozen=True)
class Delete:
    """Remove an array element or an object member."""

    path: Path


@dataclass(frozen=True)
class RenameKey:
    """Give an object member a new key; its value and position stay."""

    path: Path
    new_key: str


@dataclass(frozen=True)
class AddKey:
    """Add the member `path[-1]: value` to an object, right after the member `after` (or last)."""

    path: Path
    value: Any
    after: str | None = None


Edit = Set | Insert | Delete | RenameKey | AddKey


class EditConflict(Exception):
    """Two edits that cannot both apply (a bug in the caller, never a user error)."""


def pointer(path: Path) -> str:
    """RFC 6901 JSON pointer of a path: ("a/b", 0) -> "/a~1b/0"."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


# --- the edit tree --------------------------------------------------------------------------

_UNSET: Any = object()


@dataclass
class _Node:
    """The edits that apply at one path of the document."""

    value: Any = _UNSET  # a Set on this path
    children: dict[str | int, _Node] = field(default_factory=dict)
    deletes: set[str | int] = field(default_factory=set)
    renames: dict[str, str] = field(default_factory=dict)
    inserts: dict[int, list[Any]] = field(default_factory=dict)  # before original index
    added: dict[str | None, list[tuple[str, Any]]] = field(default_factory=dict)  # after key

    @property
    def structural(self) -> bool:
        return bool(self.deletes or self.inserts or self.added)

    def child(self, key: str | int) -> _Node:
        return self.children.setdefault(key, _Node())


def _tree(edits: Iterable[Edit]) -> _Node:
    root = _Node()
    for edit in edits:
        if isinstance(edit, Set):
            node = _walk(root, edit.path)
            if node.value is not _UNSET:
                raise EditConflict(f"two values for {pointer(edit.path)}")
            node.value = edit.value
            continue
        parent, last = _walk(root, edit.path[:-1]), edit.path[-1]
        if isinstance(edit, Delete):
            parent.deletes.add(last)
        elif isinstance(edit, RenameKey):
            parent.renames[str(last)] = edit.new_key
        elif isinstance(edit, Insert):
            parent.inserts.setdefault(int(last), []).append(edit.value)
        else:
            parent.added.setdefault(edit.after, []).append((str(last), edit.value))
    _check(root, ())
    return root


def _walk(root: _Node, path: Path) -> _Node:
    node = root
    for part in path:
        node = node.child(part)
    return node


def _check(node: _Node, path: Path) -> None:
    if node.value is not _UNSET and (node.children or node.structural or node.renames):
        raise EditConflict(f"{pointer(path)} is replaced and edited inside")
    for key, child in node.children.items():
        if key in node.deletes and (
            child.value is not _UNSET or child.children or child.structural or child.renames
        ):
            raise EditConflict(f"{pointer((*path, key))} is deleted and edited")
        _check(child, (*path, key))


# --- applying edits to a parsed value -------------------------------------------------------


def materialize(document: Any, edits: Iterable[Edit]) -> Any:
    """The document with the edits applied. The input is not changed; untouched subtrees are
    shared with it, so treat both as read-only."""
    return _build(document, _tree(edits), ())


def _build(value: Any, node: _Node, path: Path) -> Any:
    if node.value is not _UNSET:
        return node.value
    if isinstance(value, dict):
        return _build_object(value, node, path)
    if isinstance(value, list):
        return _build_array(value, node, path)
    if node.children or node.structural or node.renames:
        raise EditConflict(f"{pointer(path)} is not a container")
    return value


def _build_object(value: dict[str, Any], node: _Node, path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def put(key: str, item: Any) -> None:
        if key in out:
            raise EditConflict(f"{pointer((*path, key))} would appear twice")
        out[key] = item

    for key, item in value.items():
        if key not in node.deletes:
            child = node.children.get(key)
            put(node.renames.get(key, key), _build(item, child, (*path, key)) if child else item)
        for new_key, new_value in node.added.get(key, []):
            put(new_key, new_value)
    for new_key, new_value in node.added.get(None, []):
        put(new_key, new_value)
    return out


def _build_array(value: list[Any], node: _Node, path: Path) -> list[Any]:
    out: list[Any] = []
    for i, item in enumerate(value):
        out += node.inserts.get(i, [])
        if i not in node.deletes:
            child = node.children.get(i)
            out.append(_build(item, child, (*path, i)) if child else item)
    out += node.inserts.get(len(value), [])
    return out


# --- applying edits to the original text ----------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^{}\[\]:,"\s]+|\s+')
_SCAN = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[attr-defined]
_SCANSTRING: Any = getattr(json.decoder, "scanstring")  # noqa: B009  (not in typeshed)


@dataclass(frozen=True)
class _Member:
    key: str | int
    start: int  # where the member starts: its key for an object member, its value otherwise
    key_end: int  # end of the key string (== start for array elements)
    value_start: int
    end: int  # end of the value


@dataclass(frozen=True)
class _Style:
    """How the document writes JSON, so new values look like their neighbours."""

    indent: str | None  # one level of indentation, or None for compact documents
    key_sep: str  # ':' or ': '
    item_sep: str  # ',' or ', ' (within one line)

    @classmethod
    def of(cls, text: str) -> _Style:
        """Read the style off the first tokens of the document: what whitespace follows the
        first opening bracket, colon and comma (compact JSON when there is none)."""
        after: dict[str, str] = {}  # punctuation -> the whitespace that first followed it
        previous = ""
        for match in _TOKEN.finditer(text, 0, 20_000):
            token = match.group()
            for punct in ("{", ":", ","):
                if previous in (punct, "[" if punct == "{" else punct) and punct not in after:
                    after[punct] = token if token.isspace() else ""
            if len(after) == 3:
                break
            previous = token
        opening = after.get("{", "")
        indent = opening.rpartition("\n")[2] if "\n" in opening else None
        comma = after.get(",", "")
        return cls(indent, ":" + after.get(":", ""), "," + ("" if "\n" in comma else comma))

    def dumps(self, value: Any, line_indent: str) -> str:
        if self.indent is None:
            return json.dumps(value, ensure_ascii=False, separators=(self.item_sep, self.key_sep))
        text = json.dumps(
            value, ensure_ascii=False, indent=self.indent, separators=(",", self.key_sep)
        )
        return text.replace("\n", "\n" + line_indent)


def splice(text: str, edits: Iterable[Edit]) -> str:
    """`text` with the edits applied; every byte outside the edited values is kept."""
    tree = _tree(edits)
    if not (tree.children or tree.structural or tree.renames or tree.value is not _UNSET):
        return text
    start = _WS.match(text).end()  # type: ignore[union-attr]
    end = _value_end(text, start)
    return text[:start] + _render(text, start, end, tree, _Style.of(text)) + text[end:]


def locate(text: str, path: Path, key: bool = False) -> tuple[int, int]:
    """The offsets (start, end) of the value at `path` in `text`, or of its key."""
    start = _WS.match(text).end()  # type: ignore[union-attr]
    member = None
    for part in path:
        found = [m for m in _members(text, start) if m.key == part]
        if not found:
            raise KeyError(pointer(path))
        member = found[0]
        start = member.value_start
    if key and member is not None:
        return member.start, member.key_end
    return start, _value_end(text, start)


def _value_end(text: str, start: int) -> int:
    try:
        return int(_SCAN(text, start)[1])
    except StopIteration:
        raise ValueError(f"no JSON value at offset {start}") from None


def _line_indent(text: str, offset: int) -> str:
    line_start = text.rfind("\n", 0, offset) + 1
    return _WS.match(text, line_start).group().replace("\n", "")  # type: ignore[union-attr]


def _render(text: str, start: int, end: int, node: _Node, style: _Style) -> str:
    if node.value is not _UNSET:
        return style.dumps(node.value, _line_indent(text, start))
    if not (node.children or node.structural or node.renames):
        return text[start:end]
    members = list(_members(text, start))
    rendered = {
        m.key: _render_member(text, m, node, style)
        for m in members
        if m.key in node.children or m.key in node.renames
    }
    if not node.structural:
        out, pos = [], start
        for member in members:
            if member.key in rendered:
                out += [text[pos : member.start], rendered[member.key]]
                pos = member.end
        return "".join(out) + text[pos:end]
    return _rebuild(text, start, end, members, rendered, node, style)


def _render_member(text: str, member: _Member, node: _Node, style: _Style) -> str:
    child = node.children.get(member.key)
    value = (
        _render(text, member.value_start, member.end, child, style)
        if child
        else text[member.value_start : member.end]
    )
    if member.key in node.renames:
        key = json.dumps(node.renames[str(member.key)], ensure_ascii=False)
        return key + text[member.key_end : member.value_start] + value
    return text[member.start : member.value_start] + value


def _members(text: str, start: int) -> Iterator[_Member]:
    """The members of the object or array that starts at `start`, with their spans."""
    is_object = text[start] == "{"
    pos = _WS.match(text, start + 1).end()  # type: ignore[union-attr]
    index = 0
    while text[pos] not in "]}":
        member_start = pos
        key: str | int = index
        key_end = pos
        if is_object:
            key, key_end = _SCANSTRING(text, pos + 1)
            pos = _WS.match(text, key_end).end() + 1  # type: ignore[union-attr]  # past ':'
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
        end = _value_end(text, pos)
        yield _Member(key, member_start, key_end, pos, end)
        index += 1
        pos = _WS.match(text, end).end()  # type: ignore[union-attr]
        if text[pos] == ",":
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]


def _rebuild(
    text: str,
    start: int,
    end: int,
    members: list[_Member],
    rendered: dict[Any, str],
    node: _Node,
    style: _Style,
) -> str:
    """Re-join a container's members after deletions and additions, reusing the original
    separators between members that stay neighbours."""
    is_object = text[start] == "{"
    inner = members[0].start if members else start + 1
    lead = text[start + 1 : inner]
    trail = text[members[-1].end : end - 1] if members else ""
    seps = [text[a.end : b.start] for a, b in itertools.pairwise(members)]
    indent = (
        _line_indent(text, members[0].start)
        if members
        else (_line_indent(text, start) + (style.indent or ""))
    )
    typical = seps[0] if seps else (style.item_sep if style.indent is None else ",\n" + indent)

    def new(key: str | None, value: Any) -> tuple[str, int | None]:
        body = style.dumps(value, indent)
        if is_object:
            body = json.dumps(key, ensure_ascii=False) + style.key_sep + body
        return body, None

    pieces: list[tuple[str, int | None]] = []  # (text, original position or None)
    for i, member in enumerate(members):
        if not is_object:
            pieces += [new(None, v) for v in node.inserts.get(i, [])]
        if member.key not in node.deletes:
            pieces.append((rendered.get(member.key, text[member.start : member.end]), i))
        if is_object:
            pieces += [new(k, v) for k, v in node.added.get(str(member.key), [])]
    if is_object:
        pieces += [new(k, v) for k, v in node.added.get(None, [])]
    else:
        pieces += [new(None, v) for v in node.inserts.get(len(members), [])]
    if not pieces:
        return text[start] + text[end - 1]
    if not members and style.indent is not None:
        lead, trail = "\n" + indent, "\n" + _line_indent(text, start)
    joined = pieces[0][0]
    for (_, a), (body, b) in itertools.pairwise(pieces):
        adjacent = a is not None and b is not None and b == a + 1
        joined += (seps[a] if adjacent and a is not None else typical) + body
    return text[start] + lead + joined + trail + text[end - 1]
