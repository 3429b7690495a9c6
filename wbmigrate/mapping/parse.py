"""Read a mapping file strictly: every field checked, every problem located at file:line.

The rename rules (duplicates, chains, cycles, reuse, many-to-one) live in `rules.py`; this module
checks the shape of the document and builds the frozen model from it. Over 300 lines because
the format's every object (top, step, metrics, config, each kind of entry) is checked here by
one `_Checker`, beside the model it builds: the checks share its problem list and the
document's lines, and each object's check calls the next one down.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import unicodedata
from collections.abc import Iterable
from collections.abc import Mapping as MappingABC
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from wbmigrate.edit.located_yaml import FAST_LOADER, Located, load_located
from wbmigrate.edit.located_yaml import Path as YamlPath
from wbmigrate.errors import Level
from wbmigrate.mapping import (
    ConfigRemoval,
    ConfigRename,
    MappingError,
    Problem,
    Removal,
    Step,
)
from wbmigrate.mapping.file import Mapping
from wbmigrate.mapping.rules import check as check_rules

FORMAT_VERSION = 1  # the newest mapping format this release reads

_ID = re.compile(r"[a-z0-9][a-z0-9._-]*\Z")
_URL = re.compile(r"https?://\S+\Z")
_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    list: "a list",
    dict: "a mapping",
    dt.date: "a date (YYYY-MM-DD)",
    bool: "true or false",
}

# Each object's fields: name -> (expected type, required)
Spec = MappingABC[str, tuple[type, bool]]
_TOP = {
    "format": (int, True),
    "id": (str, True),
    "title": (str, True),
    "description": (str, False),
    "sources": (list, True),
    "distinct": (list, False),
    "steps": (list, True),
}
_STEP = {
    "version": (str, True),
    "date": (dt.date, True),
    "source": (str, True),
    "summary": (str, False),
    "metrics": (dict, False),
    "config": (dict, False),
    "annotation": (str, True),
}
_METRICS = {"renamed": (dict, False), "removed": (dict, False), "live_again": (list, False)}
_REMOVAL = {"reason": (str, True), "equivalent": (str, False)}
_CONFIG = {
    "renamed": (list, False),
    "removed": (list, False),
    "aliases_removed": (list, False),
    "live_again": (list, False),
}
_CONFIG_REMOVAL = {
    "path": (str, True),
    "reason": (str, True),
    "toml": (list, False),
    "cli": (list, False),
}
_CONFIG_RENAME = {
    "old": (str, True),
    "new": (str, True),
    "toml": (dict, False),
    "cli": (dict, False),
    "deprecated": (bool, False),
}


def parse_mapping(text: str, file: str) -> Mapping:
    """Build a Mapping from the YAML text of `file`; raise MappingError listing every error."""
    try:
        located = load_located(text, FAST_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        message = f"invalid YAML: {getattr(exc, 'problem', None) or exc}"
        raise MappingError([Problem((), "yaml-syntax", message).at(file, line)]) from None
    checker = _Checker(file, located)
    for found in located.problems:
        path = found.path  # a key twice in a step's metrics is an old name twice
        old_name = len(path) == 5 and path[0] == "steps" and path[2] == "metrics"
        code = "duplicate-old-key" if old_name else "duplicate-key"
        checker.error(path, code, found.message, line=found.line)
    mapping = checker.mapping(located.data)
    if mapping is not None:
        checker.problems += check_rules(mapping, checker.located, file)
    errors = [p for p in checker.problems if p.level is Level.ERROR]
    if errors or mapping is None:
        raise MappingError(sorted(errors, key=lambda p: p.line))
    return replace(mapping, warnings=tuple(sorted(checker.problems, key=lambda p: p.line)))


@dataclass
class _Checker:
    """Reads one mapping document, collecting every problem rather than stopping at the first."""

    file: str
    located: Located
    problems: list[Problem] = field(default_factory=list)

    def error(self, path: YamlPath, code: str, message: str, line: int | None = None) -> None:
        line = line if line is not None else self.located.line(path)
        self.problems.append(Problem(path, code, message).at(self.file, line))

    def fields(self, obj: Any, path: YamlPath, spec: Spec, what: str) -> dict[str, Any] | None:
        """The valid fields of one object; every unknown, missing or mistyped one is an error."""
        if not isinstance(obj, dict):
            self.error(path, "wrong-type", f"{what} must be a YAML mapping of fields (key: value)")
            return None
        valid: dict[str, Any] = {}
        for key, value in obj.items():
            if key not in spec:
                self.error((*path, key), "unknown-field", _unknown(key, spec, what))
                continue
            expected = spec[key][0]
            value = _coerce(value, expected)
            if value is _WRONG:
                message = f"{what} field {key!r} must be {_TYPE_NAMES[expected]}"
                self.error((*path, key), "wrong-type", message)
                continue
            valid[key] = value
        missing = [key for key, (_, required) in spec.items() if required and key not in obj]
        for key in missing:
            self.error(path, "missing-field", f"{what} is missing required field {key!r}")
        # An object missing a required field, or with a mistyped one, cannot be built.
        return None if missing or len(valid) < len(obj.keys() & spec.keys()) else valid

    def name(self, value: Any, path: YamlPath, what: str, *, key: bool = False) -> str | None:
        """A metric name, config path or flag: a non-empty string without surrounding space."""
        lines = self.located.key_lines if key else self.located.value_lines
        line = lines.get(path) or self.located.line(path)  # lines count from 1
        if not isinstance(value, str):
            self.error(path, "wrong-type", f"{what} must be a string", line)
            return None
        if not value.strip():
            self.error(path, "empty-name", f"{what} is empty", line)
            return None
        if value != value.strip() or any(ch in value for ch in "\n\r\t"):
            message = f"{what} {value!r} has surrounding or control whitespace"
            self.error(path, "bad-name", message, line)
            return None
        if value.isascii() and value.isprintable():  # most names: no hidden or foreign letter
            return value
        hidden = ", ".join(sorted({f"U+{ord(ch):04X}" for ch in value if not ch.isprintable()}))
        if hidden:  # NUL, bidi controls, zero-width characters
            message = f"{what} {value!r} has invisible characters ({hidden})"
            self.error(path, "bad-name", message, line)
            return None
        # The scripts of its letters (`LATIN`, `CYRILLIC`...), by their Unicode names.
        scripts = {unicodedata.name(ch, "?").split(" ")[0] for ch in value if ch.isalpha()}
        if len(scripts) > 1:
            message = (
                f"{what} {value!r} mixes scripts ({', '.join(sorted(scripts))}): a look-alike "
                "letter makes it another name"
            )
            warning = Problem(path, "mixed-script", message, Level.WARNING).at(self.file, line)
            self.problems.append(warning)
        return value

    def mapping(self, data: Any) -> Mapping | None:
        top = self.fields(data, (), _TOP, "mapping file")
        if top is None:
            return None
        if top["format"] > FORMAT_VERSION:
            newer = f"mapping format {top['format']} is newer than this wbmigrate reads"
            message = f"{newer} ({FORMAT_VERSION}); upgrade wbmigrate"
            self.error(("format",), "format-version", message)
        if not _ID.match(top["id"]):
            message = f"id {top['id']!r} must be lower-case letters, digits, '.', '_' or '-'"
            self.error(("id",), "bad-id", message)
        sources = [self.url(s, ("sources", i)) for i, s in enumerate(top["sources"])]
        steps = [self.step(s, ("steps", i)) for i, s in enumerate(top["steps"])]
        if not steps:
            self.error(("steps",), "no-steps", "mapping has no steps")
        groups = [self.group(g, ("distinct", i)) for i, g in enumerate(top.get("distinct", []))]
        if None in steps or None in sources:
            return None
        return Mapping(
            id=top["id"],
            title=top["title"],
            format=top["format"],
            sources=tuple(s for s in sources if s),
            path=Path(self.file),
            steps=tuple(s for s in steps if s),
            description=top.get("description", ""),
            # all or none: the distinct rules must not report a later group at an earlier's line
            distinct=() if None in groups else tuple(g for g in groups if g is not None),
        )

    def url(self, value: Any, path: YamlPath) -> str | None:
        if not isinstance(value, str) or not _URL.match(value):
            self.error(path, "bad-url", f"{value!r} is not an http(s) link")
            return None
        return value

    def group(self, data: Any, path: YamlPath) -> tuple[str, ...] | None:
        """One `distinct:` group: a list of metric names (its rules are in `distinct.py`)."""
        if not isinstance(data, list):
            message = "a distinct group must be a list of metric names, e.g. [a, b]"
            self.error(path, "wrong-type", message)
            return None
        names = [self.name(n, (*path, j), "distinct metric name") for j, n in enumerate(data)]
        return None if None in names else tuple(n for n in names if n is not None)

    def step(self, data: Any, path: YamlPath) -> Step | None:
        fields = self.fields(data, path, _STEP, "step")
        if fields is None:
            return None
        source = self.url(fields["source"], (*path, "source"))
        metrics = self.fields(fields.get("metrics", {}), (*path, "metrics"), _METRICS, "metrics")
        config = self.fields(fields.get("config", {}), (*path, "config"), _CONFIG, "config")
        if metrics is None or config is None or source is None:
            return None
        at = (*path, "metrics")
        renamed = self.renames(metrics.get("renamed", {}), (*at, "renamed"), "metric name")
        removed = self.removals(metrics.get("removed", {}), (*at, "removed"))
        configs = [
            self.config_rename(c, (*path, "config", "renamed", i))
            for i, c in enumerate(config.get("renamed", []))
        ]
        gone = [
            self.config_removal(c, (*path, "config", "removed", i), fields["version"])
            for i, c in enumerate(config.get("removed", []))
        ]
        live = self.names(metrics, at, "live_again", "live-again metric name")
        config_live = self.names(config, (*path, "config"), "live_again", "live-again config path")
        aliases = self.names(config, (*path, "config"), "aliases_removed", "dropped alias")
        lists = (live, config_live, aliases)
        if renamed is None or removed is None or None in (*configs, *gone, *lists):
            return None
        return Step(
            version=fields["version"],
            date=fields["date"],
            source=source,
            summary=fields.get("summary", ""),
            renamed=MappingProxyType(renamed),
            removed=MappingProxyType(removed),
            config=tuple(c for c in configs if c),
            annotation=fields["annotation"].strip(),
            live_again=live or (),
            config_live_again=config_live or (),
            config_removed=tuple(c for c in gone if c),
            aliases_removed=aliases or (),
        )

    def names(
        self, fields: dict[str, Any], at: YamlPath, key: str, what: str
    ) -> tuple[str, ...] | None:
        """A `live_again:` or `aliases_removed:` list (`key` of `fields`): names, each once."""
        items, path = fields.get(key, []), (*at, key)
        result: dict[str, None] = {}
        for j, item in enumerate(items):
            name = self.name(item, (*path, j), what)
            if name in result:
                message = f"{what} {name!r} is listed twice"
                self.error((*path, j), "duplicate-old-key", message)
            elif name is not None:
                result[name] = None
        return tuple(result) if len(result) == len(items) else None

    def renames(self, table: dict[Any, Any], path: YamlPath, what: str) -> dict[str, str] | None:
        result: dict[str, str] = {}
        for old, new in table.items():
            old_name = self.name(old, (*path, old), f"old {what}", key=True)
            new_name = self.name(new, (*path, old), f"new {what} for {old!r}")
            if old_name and new_name:
                result[old_name] = new_name
        return result if len(result) == len(table) else None

    def removals(self, table: dict[Any, Any], path: YamlPath) -> dict[str, Removal] | None:
        result: dict[str, Removal] = {}
        for old, body in table.items():
            name = self.name(old, (*path, old), "removed metric name", key=True)
            fields = self.fields(body, (*path, old), _REMOVAL, f"removal of {old!r}")
            if name is None or fields is None:
                continue
            equivalent, at = fields.get("equivalent"), (*path, old, "equivalent")
            if equivalent is None or self.name(equivalent, at, "equivalent") is not None:
                result[name] = Removal(fields["reason"].strip(), equivalent)
        return result if len(result) == len(table) else None

    def flags(self, found: Iterable[tuple[str | None, YamlPath]]) -> None:
        """Each command-line flag (a bad one is None, already reported) must start with '-'."""
        for flag, path in found:
            if flag is not None and not flag.startswith("-"):
                self.error(path, "bad-flag", f"command-line flag {flag!r} must start with '-'")

    def config_removal(self, data: Any, path: YamlPath, version: str) -> ConfigRemoval | None:
        fields = self.fields(data, path, _CONFIG_REMOVAL, "config removal")
        if fields is None:
            return None
        name = self.name(fields["path"], (*path, "path"), "removed config path")
        toml, cli = (
            [self.name(k, (*path, key, j), what) for j, k in enumerate(fields.get(key, []))]
            for key, what in (("toml", "TOML key"), ("cli", "command-line flag"))
        )
        self.flags((flag, (*path, "cli", j)) for j, flag in enumerate(cli))
        if name is None or None in toml or None in cli:
            return None
        reason = fields["reason"].strip()
        return ConfigRemoval(name, reason, tuple(map(str, toml)), tuple(map(str, cli)), version)

    def config_rename(self, data: Any, path: YamlPath) -> ConfigRename | None:
        fields = self.fields(data, path, _CONFIG_RENAME, "config rename")
        if fields is None:
            return None
        old = self.name(fields["old"], (*path, "old"), "old config path")
        new = self.name(fields["new"], (*path, "new"), "new config path")
        toml = self.renames(fields.get("toml", {}), (*path, "toml"), "TOML key")
        cli = self.renames(fields.get("cli", {}), (*path, "cli"), "command-line flag")
        pairs = (cli or {}).items()
        self.flags((flag, (*path, "cli", key)) for key, value in pairs for flag in (key, value))
        if old is None or new is None or toml is None or cli is None:
            return None
        deprecated = fields.get("deprecated", False)
        return ConfigRename(old, new, MappingProxyType(toml), MappingProxyType(cli), deprecated)


_WRONG = object()  # marks a value of the wrong type


def _coerce(value: Any, expected: type) -> Any:
    """The value as `expected`, accepting what YAML users write (`version: 3`, a quoted date)."""
    if isinstance(value, bool | dt.datetime):  # a bool is an int; a timestamp is not a day
        return value if expected is bool and isinstance(value, bool) else _WRONG
    if expected is str and isinstance(value, int):
        return str(value)
    if expected is dt.date and isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            return _WRONG
    return value if isinstance(value, expected) else _WRONG


def _unknown(key: Any, spec: Spec, what: str) -> str:
    close = difflib.get_close_matches(str(key), spec, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else f" (expected: {', '.join(spec)})"
    return f"unknown field {key!r} in {what}{hint}"
