"""prime-rl's config models, read for `check --validate`: which of them a file is for (those
that know the most of its keys, at every depth, a renamed key counting as its other name),
where in the file each error the schema reports is, and what it says."""

from __future__ import annotations

import functools
import json
import re
import tomllib
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import yaml

from wbmigrate.check.hosts import JsonHost, Span, YamlHost
from wbmigrate.check.model import Finding, Lines, Rule
from wbmigrate.check.targets import Targets
from wbmigrate.check.toml_config import Scan, placed
from wbmigrate.edit.located_yaml import load_located_all
from wbmigrate.engine.shapes import nodes

DataPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Model:
    """One of prime-rl's config models: the command that loads it, and its class."""

    entry: str
    cls: Any  # a pydantic model class

    @property
    def name(self) -> str:
        return str(self.cls.__name__)


@dataclass(frozen=True)
class Renames:
    """The mapping's config renames, by dotted key: the other name and the step's version; and
    the prime-rl installed here, which may predate a rename."""

    old: dict[str, tuple[str, str]]  # old key -> (new leaf, version)
    new: dict[str, tuple[str, str]]  # new key -> (old leaf, version)
    installed: str = "prime_rl"

    @classmethod
    def of(cls, targets: Targets, installed: str) -> Renames:
        old, new = {}, {}
        for step in targets.migration.steps:
            for rename in step.config:
                for before, after in {rename.old: rename.new, **rename.toml}.items():
                    old[before] = (after.rpartition(".")[2], step.version)
                    new[after] = (before.rpartition(".")[2], step.version)
        return cls(old, new, installed)

    def leaves(self) -> dict[str, str]:
        """Top-level keys each name stands for too (a standalone config's old key is known to
        a model that has its new name, and the other way round)."""
        pairs = [(k, v[0]) for k, v in self.old.items() if "." not in k]
        return {**dict(pairs), **{b: a for a, b in pairs}}


def candidates(data: dict[str, Any], models: Iterable[Model], renames: Renames) -> list[Model]:
    """The models the file may be for: those that know the most of its keys at every depth,
    when that is most of them (else it is no prime-rl config)."""
    leaves = renames.leaves()
    known = {model: _known(model.cls, data, leaves) for model in models}
    most = max(known.values(), default=0)
    if most * 2 <= _count(data):
        return []
    return [model for model, count in known.items() if count == most]


def _known(cls: Any, data: Any, leaves: dict[str, str]) -> int:
    """How many keys of `data`, at every depth, the model knows, following its fields' models
    (a key the mapping renames counts as its other name)."""
    if isinstance(data, list):
        return sum(_known(cls, item, leaves) for item in data)
    if not isinstance(data, dict):
        return 0
    fields, count = _fields(cls), 0
    for key, value in data.items():
        name = key if key in fields else leaves.get(key)
        if name not in fields:
            continue
        inner = list(dict.fromkeys(_models_in(fields[name])))
        count += 1 + max((_known(model, value, leaves) for model in inner), default=0)
    return count


def _count(data: Any) -> int:
    """How many keys `data` holds, at every depth."""
    return sum(len(node) for _, node in nodes(data) if isinstance(node, dict))


@functools.cache
def _fields(cls: Any) -> dict[str, Any]:
    """The keys a model accepts (its fields and their aliases), each with its field's type."""
    found = {}
    for name, info in getattr(cls, "model_fields", {}).items():
        found[name] = info.annotation
        for alias in (info.alias, info.validation_alias):
            names = [alias, *getattr(alias, "choices", ())]
            found.update((a, info.annotation) for a in names if isinstance(a, str))
    return found


def _models_in(annotation: Any) -> list[Any]:
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models_in(arg)]


def _tagged(model: Any, tag: str) -> bool:
    return bool(model.__name__ == tag or any(f.default == tag for f in model.model_fields.values()))


def _owner(cls: Any, loc: tuple[Any, ...]) -> str:
    """The name of the model that holds the last key of `loc` (the file's model if unsure)."""
    options = [cls]
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        holding = [_fields(o)[part] for o in options if part in _fields(o)]
        if holding:
            options = list(dict.fromkeys(_models_in(holding[0])))
        else:  # a union's tag: the variant it names
            options = [o for o in options if _tagged(o, part)] or options
        if not options:
            break
    return str(options[0].__name__) if len(options) == 1 else str(cls.__name__)


@dataclass(frozen=True)
class Document:
    """A config file's text, its data, and where the key at a path of it is."""

    text: str
    data: Any
    span: Callable[[DataPath], Span]

    def note(self, label: str, message: str) -> Finding:
        return Lines(self.text).finding(label, 0, 0, Rule.NOT_VALIDATED, message)

    def finding(self, label: str, error: dict[str, Any], model: Model, renames: Renames) -> Finding:
        path, shown = _data_path(self.data, tuple(error.get("loc", ())))
        start, end = self.span(path)
        message = _message(error, shown, model, renames)
        return Lines(self.text).finding(label, start, end, Rule.CONFIG_INVALID, message)


def parsed(suffix: str, text: str) -> Document | None:
    """The parsed file, or None when it does not parse (`check` says so) or holds several YAML
    documents (prime-rl reads one)."""
    try:
        if suffix == ".toml":
            data = tomllib.loads(text)
            scan = placed(text, data)
            return Document(text, data, lambda path: _toml_span(scan, path))
        if suffix == ".json":
            json_document = JsonHost(text, json.loads(text))
            return Document(text, json_document.data, lambda p: json_document.span(p, key=True))
        located = load_located_all(text)
    except (ValueError, RecursionError, yaml.YAMLError):  # TOMLDecodeError is a ValueError
        return None
    if len(located) != 1:
        return None
    yaml_document = YamlHost(text, located[0], located)
    return Document(text, yaml_document.data, lambda p: yaml_document.span(p, key=True))


def _toml_span(scan: Scan | None, path: DataPath) -> Span:
    """The key at `path` (in an array of tables, its n-th occurrence), else the first key of
    the nearest table that is there; the file's start when the keys could not be placed."""
    names = tuple(part for part in path if isinstance(part, str))
    index = next((part for part in path if isinstance(part, int)), 0)
    for end in range(len(names), 0, -1):
        exact = [key for key in (scan.keys if scan else ()) if key.path == names[:end]]
        inside = [key for key in (scan.keys if scan else ()) if key.path[:end] == names[:end]]
        found = exact[min(index, len(exact) - 1)] if exact else inside[0] if inside else None
        if found is not None:
            return found.start, found.end
    return 0, 0


def _data_path(data: Any, loc: tuple[Any, ...]) -> tuple[DataPath, str]:
    """Where pydantic's `loc` is in the data (a union's tag is not), and how to show it: a
    missing key is shown, and located at its parent."""
    path: list[str | int] = []
    shown, node = "", data
    for number, part in enumerate(loc):
        there = isinstance(node, dict) and part in node
        there = there or (isinstance(node, list) and isinstance(part, int) and part < len(node))
        if there:
            node = node[part]
            path.append(part)
        elif number < len(loc) - 1 or not isinstance(node, dict):
            continue
        shown = f"{shown}[{part}]" if isinstance(part, int) else f"{shown}.{part}".lstrip(".")
    return tuple(path), shown


def _message(error: dict[str, Any], shown: str, model: Model, renames: Renames) -> str:
    loc = tuple(error.get("loc", ()))
    owner = _owner(model.cls, loc)
    where = shown or "the file"
    kind = error.get("type")
    if kind == "extra_forbidden":
        key = re.sub(r"\[\d+\]", "", shown)  # a list's index is no part of a dotted key
        text = f"{where}: unknown to prime-rl's {owner}{_renamed(key, renames)}"
    elif kind == "missing":
        text = f"{where}: missing (required by prime-rl's {owner})"
    else:
        text = f"{where}: {error.get('msg', kind)}{_got(error)} (prime-rl's {owner})"
    return text if owner == model.name else f"{text}; loaded as {model.name}"


def _renamed(key: str, renames: Renames) -> str:
    if key in renames.old:
        new, version = renames.old[key]
        return f" (renamed {new} in {version})"
    if key in renames.new:
        old, version = renames.new[key]
        return (
            f" (the new name of {old} from {version}: the {renames.installed} installed here "
            "predates it)"
        )
    return ""


def _got(error: dict[str, Any]) -> str:
    value = error.get("input")
    if value is None or isinstance(value, dict | list):
        return ""
    shown = repr(value)
    return f" (got {shown if len(shown) <= 60 else shown[:57] + '...'})"
