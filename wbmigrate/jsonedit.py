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
from dataclasses import dataclass, field, replace
from functools import cached_property
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


class _Member:
    """One member's offsets in the text. Many are made for each path located, so a slotted
    class, not a dataclass."""

    __slots__ = ("_end", "key", "key_end", "start", "text", "value_start")

    def __init__(self, text: str, key: str | int, start: int, key_end: int, value_start: int):
        self.text = text
        self.key = key
        self.start = start  # its key for an object member, its value otherwise
        self.key_end = key_end  # end of the key string (== start for array elements)
        self.value_start = value_start
        self._end = -1

    @property
    def end(self) -> int:
        """End of the value, found when first asked: finding it parses the value, which a
        path passing through the member does not need."""
        if self._end < 0:
            self._end = _value_end(self.text, self.value_start)
        return self._end


class _Scan:
    """A container's members, read only as far as asked."""

    def __init__(self, text: str, start: int) -> None:
        self._next = _members(text, start)
        self.found: list[_Member] = []
        self._by_key: dict[str | int, _Member] = {}
        self.done = False

    def member(self, key: str | int) -> _Member | None:
        found = self._by_key.get(key)
        while found is None and not self.done:
            latest = self._advance()
            if latest is not None and latest.key == key:
                found = latest
        return found

    def all(self) -> list[_Member]:
        while not self.done:
            self._advance()
        return self.found

    def _advance(self) -> _Member | None:
        member = next(self._next, None)
        if member is None:
            self.done = True
        else:
            self.found.append(member)
            self._by_key.setdefault(member.key, member)  # the first of duplicate keys
        return member


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
    return JsonText(text).splice(edits)


class JsonText:
    """A JSON text and the spans of its members, found as needed and kept: checking a file
    locates and splices many times in the same text, and each scan of a span parses it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._scans: dict[int, _Scan] = {}
        self._root: tuple[int, int] | None = None

    def splice(self, edits: Iterable[Edit]) -> str:
        """The text with the edits applied; every byte outside the edited values is kept."""
        tree = _tree(edits)
        if not (tree.children or tree.structural or tree.renames or tree.value is not _UNSET):
            return self.text
        start, end = self.root
        rendered = _render(self, start, end, tree, self.style)
        return self.text[:start] + rendered + self.text[end:]

    def splice_within(self, edits: list[Edit]) -> tuple[int, int, str]:
        """The span of the innermost value that holds every edit, and its new text: one fix
        among many, without rebuilding the whole document for each."""
        around = container_of(edits)
        start, end = self.locate(around)
        tree = _tree(replace(e, path=e.path[len(around) :]) for e in edits)
        return start, end, _render(self, start, end, tree, self.style)

    @cached_property
    def style(self) -> _Style:
        return _Style.of(self.text)

    def locate(self, path: Path, key: bool = False) -> tuple[int, int]:
        """The offsets (start, end) of the value at `path`, or of its key."""
        start, end = self.root
        member = None
        for part in path:
            member = self._scan(start).member(part)
            if member is None:
                raise KeyError(pointer(path))
            start = member.value_start
        if member is None:
            return start, end
        return (member.start, member.key_end) if key else (start, member.end)

    @property
    def root(self) -> tuple[int, int]:
        if self._root is None:
            start = _WS.match(self.text).end()  # type: ignore[union-attr]
            self._root = start, _value_end(self.text, start)
        return self._root

    def members(self, start: int) -> list[_Member]:
        """The members of the object or array that starts at `start`, with their spans."""
        return self._scan(start).all()

    def _scan(self, start: int) -> _Scan:
        scan = self._scans.get(start)
        if scan is None:
            scan = self._scans[start] = _Scan(self.text, start)
        return scan


def container_of(edits: Iterable[Edit]) -> Path:
    """The path of the innermost value every edit lies in (a member's container, for edits
    that add, remove or rename members)."""
    paths = [e.path if isinstance(e, Set) else e.path[:-1] for e in edits]
    common = paths[0] if paths else ()
    for path in paths[1:]:
        same = 0
        while same < min(len(common), len(path)) and common[same] == path[same]:
            same += 1
        common = common[:same]
    return common


def _value_end(text: str, start: int) -> int:
    try:
        return int(_SCAN(text, start)[1])
    except StopIteration:
        raise ValueError(f"no JSON value at offset {start}") from None


def _line_indent(text: str, offset: int) -> str:
    line_start = text.rfind("\n", 0, offset) + 1
    return _WS.match(text, line_start).group().replace("\n", "")  # type: ignore[union-attr]


def _render(doc: JsonText, start: int, end: int, node: _Node, style: _Style) -> str:
    text = doc.text
    if node.value is not _UNSET:
        return style.dumps(node.value, _line_indent(text, start))
    if not (node.children or node.structural or node.renames):
        return text[start:end]
    members = doc.members(start)
    rendered = {
        m.key: _render_member(doc, m, node, style)
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


def _render_member(doc: JsonText, member: _Member, node: _Node, style: _Style) -> str:
    text = doc.text
    child = node.children.get(member.key)
    value = (
        _render(doc, member.value_start, member.end, child, style)
        if child
        else text[member.value_start : member.end]
    )
    if member.key in node.renames:
        key = json.dumps(node.renames[str(member.key)], ensure_ascii=False)
        return key + text[member.key_end : member.value_start] + value
    return text[member.start : member.value_start] + value


def _members(text: str, start: int) -> Iterator[_Member]:
    is_object = text[start] == "{"
    pos = _WS.match(text, start + 1).end()  # type: ignore[union-attr]
    index = 0
    space = _WS.match
    while text[pos] not in "]}":
        member_start = pos
        key: str | int = index
        key_end = pos
        if is_object:
            key, key_end = _SCANSTRING(text, pos + 1)
            pos = space(text, space(text, key_end).end() + 1).end()  # type: ignore[union-attr]
        member = _Member(text, key, member_start, key_end, pos)
        yield member
        index += 1
        pos = space(text, member.end).end()  # type: ignore[union-attr]
        if text[pos] == ",":
            pos = space(text, pos + 1).end()  # type: ignore[union-attr]


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
