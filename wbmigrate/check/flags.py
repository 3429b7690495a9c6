"""Command-line flags (`--orchestrator.max-off-policy-steps 16`, and the underscore spelling
`--orchestrator.max_off_policy_steps=16` prime-rl accepts too) wherever a command line is
written: shell and sbatch scripts, Makefiles, justfiles, Dockerfiles, CI and Kubernetes YAML,
docker-compose files, and the code blocks of Markdown files. A flag is a whole token:
`--max-off-policy-steps-hint` is another flag (see `Targets.flag_pattern`).

In a YAML file a flag sits in a string (plain, quoted or a block scalar), so a fix is kept only
if the file still parses to the same data but for the flag: YAML is data, and a fix that moved
anything else (a duplicate key, say) would be a silent change of meaning.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import yaml

from wbmigrate.check.model import Checked, Finding, Lines, Place, apply_fixes
from wbmigrate.check.places import hash_comments
from wbmigrate.check.targets import Targets
from wbmigrate.edit.replacement import Replacement
from wbmigrate.engine.shapes import nodes

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
Load = Callable[[str], Any]  # a text -> its data, None when it does not parse


def check_flags(label: str, text: str, targets: Targets) -> Checked:
    checked = Checked(place=hash_comments(text, Place("a command")))
    checked.findings = flag_findings(label, Lines(text), targets)
    if label.endswith((".yaml", ".yml")) and checked.findings:
        checked.findings = keeping_data(text, checked.findings, _load_yaml, "YAML", targets)
    return checked


def flag_findings(
    label: str, lines: Lines, targets: Targets, within: Iterable[tuple[int, int]] = ()
) -> list[Finding]:
    """A finding, with its fix, for each old flag in the text (only `within` these spans,
    when given)."""
    pattern = targets.flag_pattern
    if pattern is None:
        return []
    findings = []
    for start, end in within or [(0, len(lines.text))]:
        for match in pattern.finditer(lines.text, start, end):
            (start, end), old = match.span(), match.group()
            new = targets.flags.get(old)
            if new is None:
                findings.append(targets.removed(label, lines, start, end, old, "flag"))
                continue
            fix, rule = (Replacement(start, end, new),), targets.config_rule(old)
            findings.append(lines.finding(label, start, end, rule, f"{old} -> {new} (flag)", fix))
    return findings


# --- data files: a fix keeps the data ---------------------------------------------------------


def keeping_data(
    text: str, findings: list[Finding], load: Load, kind: str, targets: Targets
) -> list[Finding]:
    """The findings, each keeping its fix only if the `kind` (YAML, TOML) text still means the
    same but for the renamed flag. All fixes are tried together first (one parse); only if that
    fails is each tried alone, so one bad spot never costs the others their fix."""
    fixable = [f for f in findings if f.fix]  # a removed flag has no fix to keep or lose
    if len(fixable) < len(findings):
        kept = keeping_data(text, fixable, load, kind, targets) if fixable else []
        return sorted(kept + [f for f in findings if not f.fix], key=lambda f: f.span)
    before = load(text)
    if before is None:
        return [_unfixed(f, f"the file is not valid {kind}") for f in findings]

    def keeps(chosen: list[Finding]) -> bool:
        fixed = apply_fixes(text, chosen)
        after = load(fixed) if fixed is not None else None
        return after is not None and same_but_flags(before, after, targets)

    try:
        if keeps(findings):
            return findings
        why = f"renaming it here would change the {kind}'s data"
        return [f if keeps([f]) else _unfixed(f, why) for f in findings]
    except RecursionError:  # read, but too deep to compare: raised, it lost the file's results
        return [_unfixed(f, f"the {kind} is nested too deeply to compare") for f in findings]


def _load_yaml(text: str) -> list[Any] | None:
    """Every document of a YAML stream (a Kubernetes manifest often holds several), or None
    when it does not parse. Loaded safely: YAML's own types only."""
    try:
        return list(yaml.load_all(text, Loader=_LOADER))
    except (yaml.YAMLError, RecursionError):
        return None


def same_but_flags(before: Any, after: Any, targets: Targets) -> bool:
    """Whether parsed data (YAML, TOML) is the same after fixes but for old flags made new in
    its strings (keys too): every table keeps as many members, in the same order (a renamed
    key that collides with another is a change), and every other value is equal and of the
    same type."""
    if isinstance(before, str) and isinstance(after, str):
        return _renamed(before, targets) == _renamed(after, targets)
    if isinstance(before, dict) and isinstance(after, dict):
        return len(before) == len(after) and all(
            same_but_flags(k1, k2, targets) and same_but_flags(v1, v2, targets)
            for (k1, v1), (k2, v2) in zip(before.items(), after.items(), strict=True)
        )
    if isinstance(before, list) and isinstance(after, list):
        return len(before) == len(after) and all(
            same_but_flags(x, y, targets) for x, y in zip(before, after, strict=True)
        )
    if isinstance(before, float) and isinstance(after, float) and math.isnan(before):
        return math.isnan(after)  # NaN equals nothing, not even itself
    return type(before) is type(after) and bool(before == after)


def _renamed(text: str, targets: Targets) -> str:
    pattern = targets.flag_pattern
    assert pattern is not None
    return pattern.sub(lambda m: targets.flags.get(m.group(), m.group()), text)


def holds_flag(data: Any, targets: Targets) -> bool:
    """Whether a string in parsed data (keys too: the last part of a value's path) holds an
    old flag."""
    pattern = targets.flag_pattern
    texts = (part for path, node in nodes(data) for part in (*path[-1:], node))
    return pattern is not None and any(
        isinstance(text, str) and pattern.search(text) is not None for text in texts
    )


def _unfixed(finding: Finding, why: str) -> Finding:
    return replace(finding, message=f"{finding.message} (not fixed: {why})", fix=())
