"""Edits of a JSON-shaped document, as data: what to set, insert, delete, rename or add.

One list of edits is applied twice: to the parsed value (`materialize`, here, for analysis and
checks) and to the original text (`edit.json.splice` or `edit.yaml`, for writing), so the two
always agree. Paths are tuples of object keys and array indexes into the *original* document.
"""

from __future__ import annotations

from collections.abc import Iterable
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

UNSET: Any = object()


@dataclass
class EditTree:
    """The edits that apply at one path of the document."""

    value: Any = UNSET  # a Set on this path
    children: dict[str | int, EditTree] = field(default_factory=dict)
    deletes: set[str | int] = field(default_factory=set)
    renames: dict[str, str] = field(default_factory=dict)
    inserts: dict[int, list[Any]] = field(default_factory=dict)  # before original index
    added: dict[str | None, list[tuple[str, Any]]] = field(default_factory=dict)  # after key

    @property
    def structural(self) -> bool:
        """Whether members come or go here."""
        return bool(self.deletes or self.inserts or self.added)

    @property
    def inside(self) -> bool:
        """Whether anything inside this value is edited."""
        return bool(self.children or self.structural or self.renames)

    def at(self, path: Path) -> EditTree:
        node = self
        for part in path:
            node = node.children.setdefault(part, EditTree())
        return node


def edit_tree(edits: Iterable[Edit]) -> EditTree:
    root = EditTree()
    for edit in edits:
        if isinstance(edit, Set):
            node = root.at(edit.path)
            if node.value is not UNSET:
                raise EditConflict(f"two values for {pointer(edit.path)}")
            node.value = edit.value
            continue
        parent, last = root.at(edit.path[:-1]), edit.path[-1]
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


def _check(node: EditTree, path: Path) -> None:
    if node.value is not UNSET and node.inside:
        raise EditConflict(f"{pointer(path)} is replaced and edited inside")
    for key, child in node.children.items():
        if key in node.deletes and (child.value is not UNSET or child.inside):
            raise EditConflict(f"{pointer((*path, key))} is deleted and edited")
        _check(child, (*path, key))


# --- applying edits to a parsed value -------------------------------------------------------


def materialize(document: Any, edits: Iterable[Edit]) -> Any:
    """The document with the edits applied. The input is not changed; untouched subtrees are
    shared with it, so treat both as read-only."""
    return _build(document, edit_tree(edits), ())


def _build(value: Any, node: EditTree, path: Path) -> Any:
    if node.value is not UNSET:
        return node.value
    if isinstance(value, dict):
        return _build_object(value, node, path)
    if isinstance(value, list):
        return _build_array(value, node, path)
    if node.inside:
        raise EditConflict(f"{pointer(path)} is not a container")
    return value


def _build_object(value: dict[str, Any], node: EditTree, path: Path) -> dict[str, Any]:
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


def _build_array(value: list[Any], node: EditTree, path: Path) -> list[Any]:
    out: list[Any] = []
    for i, item in enumerate(value):
        out += node.inserts.get(i, [])
        if i not in node.deletes:
            child = node.children.get(i)
            out.append(_build(item, child, (*path, i)) if child else item)
    out += node.inserts.get(len(value), [])
    return out
