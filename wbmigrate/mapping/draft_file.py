"""A draft mapping (`mapping.infer`) as a file: `to_yaml` writes a mapping file with each
entry's evidence as comments, for a person to review; `to_json` the same as data, for scripts.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import asdict
from typing import Any

from wbmigrate.mapping.infer import InferredStep, Pair

_ASTRAL = re.compile("([\U00010000-\U0010ffff])")


def source_of(url: str, step: InferredStep) -> str:
    return f"{url}/pull/{step.pull}" if step.pull else f"{url}/commit/{step.rev}"


def to_yaml(steps: list[InferredStep], url: str, ident: str, span: str) -> str:
    """The draft as a mapping file, with each entry's evidence as comments."""
    out = [
        f"# Draft mapping inferred by `wbmigrate mappings infer` from {_comment(span)}.",
        "# Review every entry against its pull request before use: `# review:` marks a pair that",
        "# is not one key replaced in one function; say semantic changes in each annotation.",
        "format: 1",
        f"id: {ident}",
        f"title: {_q(f'{ident} renames inferred from {span}')}",
        "sources:",
        f"  - {_q(url)}",
        "steps:",
    ]
    for step in [s for s in steps if s.entries]:
        out += _yaml_step(step, url)
    quiet = [s for s in steps if not s.entries]
    if quiet:
        out += ["", "# Commits with nothing to write, only things to review:"]
    for step in quiet:
        out.append(f"# {source_of(url, step)} ({step.date.isoformat()}) {_comment(step.subject)}")
        out += [f"#   {_comment(line)}" for line in _remarks(step)]
    return "\n".join(out) + "\n"


def _yaml_step(step: InferredStep, url: str) -> list[str]:
    source = source_of(url, step)
    out = [
        "",
        f"  - version: {_q(step.version)}",
        f"    date: {step.date.isoformat()}",
        f"    source: {_q(source)}",
        f"    summary: {_q(step.subject)}",
    ]
    metrics = step.metrics
    if metrics.renamed or metrics.removed or step.live_again:
        out.append("    metrics:")
    if metrics.renamed:
        out.append("      renamed:")
        for p in metrics.renamed:
            out += [*_evidence(p), f"        {_q(p.old)}: {_q(p.new)}"]
    if metrics.removed:
        out.append("      removed:")
        for gone in metrics.removed:
            out += [
                f"        {_q(gone.name)}:",
                f"          # {gone.before}: {_comment(gone.before.code)}",
                "          # review: nothing found that replaces it; say why it is gone",
                f"          reason: {_q(f'No longer logged ({source}).')}",
            ]
    out += _live_again(step.live_again, step.retired_by)
    if step.config.renamed or step.config_live_again:
        out.append("    config:")
    if step.config.renamed:
        out.append("      renamed:")
        for p in step.config.renamed:
            out += _evidence(p) + _config_entry(p)
    out += _live_again(step.config_live_again, step.retired_by)
    out += [f"    # {_comment(line)}" for line in _remarks(step)]
    out += [
        "    annotation: |",
        f"      Draft from {_comment(step.subject)}: {source}",
        "      Review it, and say here what changed and why values across this boundary differ.",
    ]
    return out


def _live_again(names: tuple[str, ...], retired_by: dict[str, str]) -> list[str]:
    if not names:
        return []
    return ["      live_again:"] + [
        f"        - {_q(name)}  # retired by step {_comment(retired_by[name])}" for name in names
    ]


def _evidence(p: Pair) -> list[str]:
    lines = [
        f"# {p.before} -> {p.after}" + (f" in {p.after.scope}" if p.after.scope else ""),
        f"#   - {_comment(p.before.code)}",
        f"#   + {_comment(p.after.code)}",
    ]
    if p.review:
        lines.append(f"# review: {_comment(p.review)}")
    return ["        " + line for line in lines]


def _config_entry(p: Pair) -> list[str]:
    forms = [(p.old, p.new)]
    section, old = p.old.partition(".")[::2]
    if old and p.new.startswith(f"{section}.") and section not in (old, p.new[len(section) + 1 :]):
        # a section's own file (a standalone orchestrator config) names keys without it
        forms.append((old, p.new[len(section) + 1 :]))
    out = [f"        - old: {_q(p.old)}", f"          new: {_q(p.new)}"]
    if p.deprecation:
        out.append("          deprecated: true  # the old name still validates (an alias keeps it)")
    out.append("          toml:")
    out += [f"            {_q(old)}: {_q(new)}" for old, new in forms]
    out.append("          cli:")
    out += [f"            {_q(_flag(old))}: {_q(_flag(new))}" for old, new in forms]
    return out


def _flag(path: str) -> str:
    return "--" + path.replace("_", "-")


def _remarks(step: InferredStep) -> list[str]:
    added = [k for k in step.metrics.added if k not in step.live_again]  # those are entries
    config_added = [k for k in step.config.added if k not in step.config_live_again]
    lines = ["added (new keys, not renames): " + ", ".join(added)] if added else []
    lines += ["config added: " + ", ".join(config_added)] if config_added else []
    lines += [f"review: config key {g.name} removed ({g.before})" for g in step.config.removed]
    lines += [f"review: f-string key {c}: {key} ({at})" for c, key, at in step.patterns]
    return lines + [f"review: {note}" for note in step.notes]


def _q(text: str) -> str:
    """A YAML double-quoted scalar: JSON's escapes are YAML's, but for a character past U+FFFF,
    one escape in YAML (JSON's two surrogate escapes YAML reads as two characters, or refuses)."""
    pieces = _ASTRAL.split(text)  # odd ones: a character past U+FFFF
    escaped = (f"\\U{ord(p):08x}" if i % 2 else json.dumps(p)[1:-1] for i, p in enumerate(pieces))
    return f'"{"".join(escaped)}"'


def _comment(text: str) -> str:
    """Text safe inside one YAML comment line: no line breaks, control characters or others
    YAML does not allow (U+FFFE, U+FFFF)."""
    return re.sub(
        r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ufffe\uffff]", lambda m: f"\\x{ord(m[0]):02x}", text
    )


def to_json(steps: list[InferredStep], url: str, ident: str, span: str) -> str:
    """The same draft as data, for scripts."""
    data: dict[str, Any] = {"id": ident, "source": url, "range": span, "steps": []}
    for step in steps:
        patterns = [{"change": c, "pattern": key, "at": asdict(at)} for c, key, at in step.patterns]
        data["steps"].append({**asdict(step), "source": source_of(url, step), "patterns": patterns})
    return json.dumps(data, indent=2, default=dt.date.isoformat) + "\n"
