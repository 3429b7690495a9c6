"""`wbmigrate mappings show`: a composed mapping as a text table, Markdown or JSON."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from wbmigrate.mapping import Fate, Migration, Step
from wbmigrate.mapping.file import Mapping
from wbmigrate.report.words import plural

# a config rename whose old spelling still loads (`deprecated: true`)
_DEPRECATED = " (deprecated: the old key still loads)"


def to_json(mapping: Mapping, migration: Migration) -> str:
    document = {
        "id": mapping.id,
        "title": mapping.title,
        "format": mapping.format,
        "from": migration.start.version,
        "to": migration.end.version,
        "steps": [_step_dict(s) for s in migration.steps],
        "metrics": {name: _fate_dict(r) for name, r in migration.metrics.items()},
        "config": [vars(c) for c in migration.config],
        "config_removed": [vars(r) for r in migration.config_removed],
        "irreversible": {new: list(olds) for new, olds in migration.irreversible.items()},
        "distinct": [
            [{"metric": name, "names": sorted(names)} for name, names in group]
            for group in _distinct(mapping)
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False, default=_plain) + "\n"


def _step_dict(step: Step) -> dict[str, Any]:
    """A step's own fields but its metric and config entries (the document shows them composed),
    its config removals by path alone."""
    fields = {k: v for k, v in vars(step).items() if k not in ("renamed", "removed", "config")}
    return {**fields, "config_removed": [r.path for r in step.config_removed]}


def _plain(value: Any) -> Any:
    """A date, or a read-only mapping (a config rename's forms), as JSON has them."""
    return value.isoformat() if isinstance(value, dt.date) else dict(value)


def _fate_dict(fate: Fate) -> dict[str, Any]:
    entry: dict[str, Any] = {"action": fate.action.value}
    if fate.removed:
        entry.update(reason=fate.reason, equivalent=fate.new)
    else:
        entry["new"] = fate.new
    return {**entry, "chain": list(fate.chain), "versions": list(fate.versions)}


def to_text(mapping: Mapping, migration: Migration) -> str:
    renamed, removed = _split(migration)
    labels = _step_labels(migration)
    notes = {reason: n for n, reason in enumerate(dict.fromkeys(r.reason for r in removed), 1)}
    moved = [(r, f"-> {r.new}") for r in renamed]
    dropped = [(r, f"removed, use {r.equivalent}" if r.equivalent else "removed") for r in removed]
    name_width = max((len(r.old) for r, _ in moved + dropped), default=0)
    outcome_width = max((len(outcome) for _, outcome in moved + dropped), default=0)
    lines = [f"{mapping.id}: {mapping.title}", _range(mapping, migration), ""]
    for title, group in (("Renamed metrics", moved), ("Removed metrics", dropped)):
        if not group:
            continue
        lines.append(f"{title} ({len(group)})")
        for r, outcome in group:
            steps = ", ".join(labels[v] for v in r.versions)
            note = f"  [{notes[r.reason]}]" if r.removed else ""
            lines.append(f"  {r.old:<{name_width}}  {outcome:<{outcome_width}}  {steps}{note}")
        lines.append("")
    if notes:
        lines += [f"  [{n}] {reason}" for reason, n in notes.items()]
        lines.append("")
    if migration.config:
        lines.append(f"Renamed config keys ({len(migration.config)})")
        for c in migration.config:
            lines.append(f"  {c.old}  -> {c.new}{_DEPRECATED if c.deprecated else ''}")
            lines += [f"      TOML  {old} -> {new}" for old, new in c.toml.items()]
            lines += [f"      flag  {old} -> {new}" for old, new in c.cli.items()]
        lines.append("")
    if migration.config_removed:
        lines.append(f"Removed config keys ({len(migration.config_removed)})")
        for gone in migration.config_removed:
            lines.append(f"  {gone.path}  removed  {labels[gone.version]}")
            lines.append(f"      {gone.reason}")
            lines += [f"      TOML  {', '.join(gone.toml)}"] if gone.toml else []
            lines += [f"      flag  {', '.join(gone.cli)}"] if gone.cli else []
        lines.append("")
    lines += _distinct_text(mapping)
    for new, olds in migration.irreversible.items():
        lines.append(f"Irreversible: {', '.join(olds)} all become {new}")
    lines.append("Steps")
    for s in migration.steps:
        lines.append(f"  {s.version}  {s.date}  {s.source}")
        lines += [f"      {s.summary}"] if s.summary else []
        lines += [f"      logged again: {', '.join(_live(s))}"] if _live(s) else []
        lines += [f"      {what}: {', '.join(names)}" for what, names in _config_changes(s)]
    return "\n".join(lines) + "\n"


def to_markdown(mapping: Mapping, migration: Migration) -> str:
    renamed, removed = _split(migration)
    labels = _step_labels(migration)
    out = [f"## `{mapping.id}`: {mapping.title}", "", _range(mapping, migration), ""]
    if renamed:
        out += ["| Old metric | New metric | Steps |", "|---|---|---|"]
        out += [
            f"| `{r.old}` | `{r.new}` | {', '.join(labels[v] for v in r.versions)} |"
            for r in renamed
        ]
        out.append("")
    if removed:
        out += ["| Removed metric | Use instead | Why | Steps |", "|---|---|---|---|"]
        for r in removed:
            instead = f"`{r.equivalent}`" if r.equivalent else "none"
            steps = ", ".join(labels[v] for v in r.versions)
            out.append(f"| `{r.old}` | {instead} | {_cell(r.reason)} | {steps} |")
        out.append("")
    if migration.config:
        out += ["| Old config key | New config key | TOML | Flags |", "|---|---|---|---|"]
        for c in migration.config:
            toml = "<br>".join(f"`{o}` → `{n}`" for o, n in c.toml.items())
            cli = "<br>".join(f"`{o}` → `{n}`" for o, n in c.cli.items())
            new = f"`{c.new}`{_DEPRECATED if c.deprecated else ''}"
            out.append(f"| `{c.old}` | {new} | {toml} | {cli} |")
        out.append("")
    if migration.config_removed:
        out += ["| Removed config key | Why | TOML | Flags | Step |", "|---|---|---|---|---|"]
        for gone in migration.config_removed:
            toml, cli = ("<br>".join(f"`{k}`" for k in keys) for keys in (gone.toml, gone.cli))
            step = labels[gone.version]
            out.append(f"| `{gone.path}` | {_cell(gone.reason)} | {toml} | {cli} | {step} |")
        out.append("")
    if mapping.distinct:
        out += ["| Distinct group | Metric | Also named |", "|---|---|---|"]
        for n, group in enumerate(_distinct(mapping), start=1):
            for k, (name, names) in enumerate(group):
                also = ", ".join(f"`{other}`" for other in _also(name, names))
                out.append(f"| {n if k == 0 else ''} | `{name}` | {also} |")
        out.append("")
    out += ["| Version | Date | Source | Summary |", "|---|---|---|---|"]
    for s in migration.steps:
        again = f" Logged again: {', '.join(f'`{name}`' for name in _live(s))}." if _live(s) else ""
        again += "".join(
            f" {what.capitalize()}: {', '.join(f'`{name}`' for name in names)}."
            for what, names in _config_changes(s)
        )
        out.append(f"| {s.version} | {s.date} | {s.source} | {_cell(s.summary)}{again} |")
    return "\n".join(out) + "\n"


def _live(step: Step) -> list[str]:
    """The names a step brings back (`live_again:`), config paths marked as such."""
    return [*step.live_again, *(f"config {name}" for name in step.config_live_again)]


def _config_changes(step: Step) -> list[tuple[str, list[str]]]:
    """The config paths a step removes, and the old paths whose alias it drops."""
    found = [
        ("config removed", [r.path for r in step.config_removed]),
        ("alias dropped, the old key no longer loads", list(step.aliases_removed)),
    ]
    return [(what, names) for what, names in found if names]


def _distinct(mapping: Mapping) -> list[list[tuple[str, frozenset[str]]]]:
    """Each `distinct:` group: its members as the file names them, each with all its names (a
    group holds whatever range of steps is shown)."""
    return [
        list(zip(group, members, strict=True))
        for group, members in zip(mapping.distinct, mapping.distinct_members, strict=True)
    ]


def _also(name: str, names: frozenset[str]) -> list[str]:
    return sorted(names - {name})


def _distinct_text(mapping: Mapping) -> list[str]:
    groups = _distinct(mapping)
    if not groups:
        return []
    width = max(len(name) for group in groups for name, _ in group)
    lines = [f"Distinct series ({len(groups)}): each group's metrics are never merged into one"]
    for n, group in enumerate(groups, start=1):
        for k, (name, names) in enumerate(group):
            number = str(n) if k == 0 else ""
            also = f"also {', '.join(_also(name, names))}" if len(names) > 1 else ""
            lines.append(f"  {number:<2} {name:<{width}}  {also}".rstrip())
    return [*lines, ""]


def _step_labels(migration: Migration) -> dict[str, str]:
    """Each step's short name: its pull request (`#4253`) when known, else its version."""
    return {step.version: step.pull or step.version for step in migration.steps}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _range(mapping: Mapping, migration: Migration) -> str:
    count = f"{len(migration.steps)} of {plural(len(mapping.steps), 'step')}"
    return f"Composed {migration.start.label} .. {migration.end.label} ({count})"


def _split(migration: Migration) -> tuple[list[Fate], list[Fate]]:
    fates = migration.metrics.values()
    return [r for r in fates if not r.removed], [r for r in fates if r.removed]
