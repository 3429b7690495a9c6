"""`[tool.wbmigrate]` in pyproject.toml: the defaults a repository sets for `check`.

    [tool.wbmigrate]
    mapping = "prime-rl"          # or a path, relative to the pyproject.toml
    mode = "dual"                 # or "replace"
    to = "2026.10.25"
    exclude = ["vendor/", "*.generated.json"]
    select = ["renamed-metric", "renamed-config-key"]   # only these rules (default: all)
    ignore = ["needs-review"]
    per-file-ignores = { "dashboards/archive/*" = ["removed-metric"] }

Command-line options win over the file (`--select` replaces `select`; `--ignore` adds to
`ignore`). `internal-error` is in no list: a bug in wbmigrate is always reported.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wbmigrate.check.model import Rule
from wbmigrate.errors import WbmigrateError

KEYS = {"mapping", "mode", "from", "to", "exclude", "select", "ignore", "per-file-ignores"}
# the rules a setting may name: an internal error is a bug, never to be hidden
CONFIGURABLE = {rule.value: rule for rule in Rule if rule is not Rule.INTERNAL_ERROR}


class ConfigError(WbmigrateError):
    """A `[tool.wbmigrate]` table wbmigrate cannot use."""


@dataclass(frozen=True)
class CheckConfig:
    path: Path | None = None  # the pyproject.toml it came from
    mapping: str | None = None
    mode: str | None = None
    start: str | None = None
    to: str | None = None
    exclude: tuple[str, ...] = ()
    select: frozenset[Rule] | None = None  # None: every rule
    ignore: frozenset[Rule] = frozenset()
    per_file_ignores: dict[str, frozenset[Rule]] = field(default_factory=dict)

    def ignored(self, select: tuple[str, ...], ignore: tuple[str, ...]) -> set[Rule]:
        """The rules not to report: those outside `select` (else the configured select) and
        those of `ignore` (the configured ignores apply too). Internal errors are never among
        them."""
        selected = {Rule(r) for r in select} or self.select or set(CONFIGURABLE.values())
        return (set(CONFIGURABLE.values()) - selected) | {Rule(r) for r in ignore}


def find_config(start: Path) -> CheckConfig:
    """The first pyproject.toml with a [tool.wbmigrate] table, from `start` up to the
    repository root; an empty config when there is none."""
    folder = start.resolve()
    for parent in [folder, *folder.parents]:
        candidate = parent / "pyproject.toml"
        table = _table(candidate) if candidate.is_file() else None
        if table is not None:
            return parse_config(table, candidate)
        if (parent / ".git").exists():
            break
    return CheckConfig()


def _table(path: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})") from None
    table = data.get("tool", {}).get("wbmigrate")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.wbmigrate] must be a table")
    return table


def parse_config(table: dict[str, Any], path: Path) -> CheckConfig:
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {unknown[0]!r} in [tool.wbmigrate] "
            f"(known: {', '.join(sorted(KEYS))})"
        )
    mapping = _string(table, "mapping", path)
    if mapping and (path.parent / mapping).is_file():
        mapping = str(path.parent / mapping)
    mode = _string(table, "mode", path)
    if mode not in (None, "dual", "replace"):
        raise ConfigError(f"{path}: [tool.wbmigrate] mode must be 'dual' or 'replace'")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{path}: [tool.wbmigrate] per-file-ignores must be a table")
    return CheckConfig(
        path=path,
        mapping=mapping,
        mode=mode,
        start=_string(table, "from", path),
        to=_string(table, "to", path),
        exclude=tuple(_strings(table.get("exclude", []), path, "exclude")),
        select=_select(table, path),
        ignore=_rules(table.get("ignore", []), path, "ignore"),
        per_file_ignores={g: _rules(r, path, "per-file-ignores") for g, r in per_file.items()},
    )


def _string(table: dict[str, Any], key: str, path: Path) -> str | None:
    value = table.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{path}: [tool.wbmigrate] {key} must be a string")
    return value


def _strings(value: Any, path: Path, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.wbmigrate] {key} must be a list of strings")
    return value


def _select(table: dict[str, Any], path: Path) -> frozenset[Rule] | None:
    """None when absent; an empty list is refused rather than silently reporting nothing."""
    if "select" not in table:
        return None
    rules = _rules(table["select"], path, "select")
    if not rules:
        raise ConfigError(
            f"{path}: [tool.wbmigrate] select must name at least one rule "
            "(leave it out to report every rule)"
        )
    return rules


def _rules(value: Any, path: Path, key: str) -> frozenset[Rule]:
    """The rules a list of the table names (`key` says which list, when it is no list)."""
    names = _strings(value, path, key)
    for name in names:
        if name == Rule.INTERNAL_ERROR.value:
            raise ConfigError(
                f"{path}: {name!r} cannot be selected or ignored: it is always reported "
                "(a bug in wbmigrate)"
            )
        if name not in CONFIGURABLE:
            raise ConfigError(f"{path}: unknown rule {name!r} (rules: {', '.join(CONFIGURABLE)})")
    return frozenset(CONFIGURABLE[name] for name in names)
