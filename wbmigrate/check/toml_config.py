"""TOML configs (prime-rl's rl.toml, orchestrator.toml): renamed config keys, fixed in place,
and command-line flags inside string values (a task runner's command in pyproject.toml).

`tomllib` says whether the file is valid; a small scanner then finds where each key is, in
every form TOML allows (`[orchestrator]` tables, dotted keys, inline tables, quoted keys,
arrays of tables), so a fix replaces only the key's characters and every comment and layout
stays. A fix is only as good as the scanner's positions, so they are cross-checked: the keys the
scanner places must be exactly the keys `tomllib` parsed (every dotted path, and how many
times each value-holding key occurs). A file where they disagree is not fixed at all; it gets
one `needs-review` finding instead, never a wrong fix.

The scanner and the key counts it is cross-checked with are `toml_keys`.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from typing import Any

from wbmigrate.check.documents import parse_error
from wbmigrate.check.flags import flag_findings, holds_flag, keeping_data
from wbmigrate.check.model import Checked, Finding, Lines, Place, Rule
from wbmigrate.check.places import COMMENT, Places, hash_comments, spans
from wbmigrate.check.targets import Targets
from wbmigrate.check.toml_keys import Key, KeyPath, Scan, parsed_keys, scan, scanned_keys
from wbmigrate.edit.replacement import Replacement

TOML_VALUE = Place("a TOML key or value")
TOML_STRING = Place("a TOML string")
TOML_TEXT = Place("text in a TOML string", prose=True)  # a sentence, not a key or a command
UNPLACED = (
    "this file holds a renamed key or flag, but wbmigrate's TOML scanner could not place its "
    "keys exactly (it disagrees with the TOML parser), so nothing here is fixed: review it"
)


def check_toml(label: str, text: str, targets: Targets) -> Checked:
    lines = Lines(text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"at line (\d+), column (\d+)", str(exc))
        offset = lines.starts[int(match[1]) - 1] + int(match[2]) - 1 if match else 0
        return parse_error(label, text, offset, f"not valid TOML: {str(exc).split(' (at')[0]}")
    scan = placed(text, data)
    if scan is None:
        checked = Checked(place=hash_comments(text, TOML_VALUE))
        if _needs_places(data, targets):
            checked.findings.append(lines.finding(label, 0, 0, Rule.NEEDS_REVIEW, UNPLACED))
        return checked
    checked = Checked(place=_places(text, scan))
    checked.findings += _check_keys(label, lines, scan, targets)
    checked.findings += _check_flags(label, lines, scan, targets)
    return checked


def _check_keys(label: str, lines: Lines, scan: Scan, targets: Targets) -> Iterator[Finding]:
    """A finding for each key at a path the mapping renames, over the key as written (all of
    a dotted key: one result), its fix on the last part. A key spelled like an old one at
    another path (`trainer.max_off_policy_steps`, a key in an array of tables, one quoted key
    holding dots) is not that key, and not changed: it is for a person to review."""
    wanted = {tuple(old.split(".")): (old, new) for old, new in targets.config_keys.items()}
    removed = {tuple(old.split(".")): old for old in targets.removed_keys}
    pattern = targets.spelling_pattern
    for key in scan.keys:
        if key.path in removed:
            old = removed[key.path]
            yield targets.removed(label, lines, key.written, key.end, old, "config key")
        elif key.path in wanted:
            old, new = wanted[key.path]
            yield _renamed(label, lines, key, old, new, targets.config_rule(old))
        elif pattern is not None and pattern.search(lines.text, key.written, key.end):
            message = _other_key(key.path, targets)
            yield lines.finding(label, key.written, key.end, Rule.NEEDS_REVIEW, message)


def _renamed(label: str, lines: Lines, key: Key, old: str, new: str, rule: Rule) -> Finding:
    prefix, _, leaf = new.rpartition(".")
    fix: tuple[Replacement, ...] = ()
    if prefix == old.rpartition(".")[0]:
        fix = (Replacement(key.start, key.end, f"{key.quote}{leaf}{key.quote}"),)
    message = f"{old} -> {new} (config key)"
    return lines.finding(label, key.written, key.end, rule, message, fix)


def _other_key(path: KeyPath, targets: Targets) -> str:
    shown = ".".join(f'"{part}"' if "." in part else part for part in path)
    # the renamed keys it is spelled like, not all of a mapping's hundreds
    leaf = path[-1].rpartition(".")[2]
    alike = [k for k in targets.config_keys if k.rpartition(".")[2] == leaf] or targets.config_keys
    renamed = ", ".join(k if "." in k else f"{k} at a file's top" for k in alike)
    return (
        f"{shown} is spelled like a renamed config key but is another key (the mapping renames "
        f"{renamed}): not changed; review it"
    )


def _check_flags(label: str, lines: Lines, scan: Scan, targets: Targets) -> list[Finding]:
    """Old flags inside string values, renamed in place; kept fixable only if the file still
    parses to the same data but for the flags."""
    found = flag_findings(label, lines, targets, scan.strings)
    return keeping_data(lines.text, found, _load, "TOML", targets) if found else found


def _load(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _needs_places(data: Any, targets: Targets) -> bool:
    """Whether the parsed document holds a key the mapping renames, or an old flag in a string:
    only then does it matter that the scanner could not place the keys."""
    wanted = {tuple(old.split(".")) for old in [*targets.config_keys, *targets.removed_keys]}
    paths, _ = parsed_keys(data)
    return bool(paths & wanted) or holds_flag(data, targets)


def _places(text: str, scan: Scan) -> Places:
    """Comments (notes), string values (a sentence is a note, anything else is reviewed) and
    keys and other values (reviewed), from the scanner's own positions."""
    regions = [(start, end, COMMENT) for start, end in scan.comments]
    for start, end in scan.strings:
        regions.append((start, end, TOML_TEXT if " " in text[start:end] else TOML_STRING))
    return spans(regions, TOML_VALUE)


def placed(text: str, data: dict[str, Any]) -> Scan | None:
    """The scan of a valid TOML text, if it agrees with `data` (what tomllib parsed from it);
    None if the scanner failed or placed other keys than the parser found."""
    try:
        found = scan(text)
    except (ValueError, IndexError, AssertionError, RecursionError):
        return None
    return found if scanned_keys(found) == parsed_keys(data) else None
