"""W&B sweep configs (`method`, `metric: {name, goal}`, `parameters`), in YAML or JSON.

A sweep optimises one metric, so an old `metric.name` must move to the new key in dual mode
too: the sweep cannot optimise two. Runs the sweep already made keep the old key, which the
message says. Its parameters are config keys of the program it runs (`max_off_policy_steps`,
dotted `orchestrator.max_off_policy_steps`, or nested `parameters`), renamed like any config.
"""

from __future__ import annotations

from typing import Any

from wbmigrate.check.model import Pending, Rule
from wbmigrate.check.targets import Targets
from wbmigrate.edit.edits import Path, RenameKey, Set
from wbmigrate.mapping import Fate

ONE_METRIC = (
    "a sweep optimises one metric, so it moves in dual mode too; "
    "runs it already made keep the old key"
)


def check_sweep(sweep: dict[str, Any], path: Path, targets: Targets) -> list[Pending]:
    """The findings of one sweep config found at `path`."""
    metric = sweep.get("metric")
    name = metric.get("name") if isinstance(metric, dict) else None
    fate = targets.migration.fate(name) if isinstance(name, str) else None
    found = [_metric(fate, (*path, "metric", "name"))] if fate is not None else []
    return found + _parameters(sweep["parameters"], (*path, "parameters"), targets)


def _metric(fate: Fate, path: Path) -> Pending:
    if fate.new is None:
        message = (
            f"{fate.old} is no longer logged and nothing replaces it ({fate.reason}); choose "
            "another metric for this sweep to optimise [metric.name]"
        )
        return Pending(path, False, Rule.NEEDS_REVIEW, message)
    removed = "removed; the new key carries the same values; " if fate.removed else ""
    message = f"{fate.old} -> {fate.new} ({removed}{ONE_METRIC}) [metric.name]"
    rule = Rule.REMOVED_METRIC if fate.removed else Rule.RENAMED_METRIC
    return Pending(path, False, rule, message, [Set(path, fate.new)])


def _parameters(parameters: dict[Any, Any], path: Path, targets: Targets) -> list[Pending]:
    """Parameters by their dotted config key; nested `parameters` add to the key's prefix."""
    found = []
    stack: list[tuple[dict[Any, Any], Path, tuple[str, ...]]] = [(parameters, path, ())]
    while stack:
        members, at, outer = stack.pop()
        for key, spec in members.items():
            dotted = (*outer, *str(key).split("."))
            why = targets.removed_keys.get(".".join(dotted))
            if why is not None:  # a sweep over a removed key: no right key to write
                message = f"{'.'.join(dotted)} (sweep parameter: a config key) was {why}"
                found.append(Pending((*at, key), True, Rule.REMOVED_CONFIG_KEY, message))
            new = targets.config_keys.get(".".join(dotted))
            if new is None and len(dotted) == 1:  # a standalone key: the leaf's rename
                new = targets.config_leaves.get(dotted[0])
            if new is not None:
                rule = targets.config_rule(".".join(dotted))
                found.append(_parameter(members, (*at, key), str(key), outer, new, rule))
            if isinstance(spec, dict) and isinstance(spec.get("parameters"), dict):
                stack.append((spec["parameters"], (*at, key, "parameters"), dotted))
    return found


def _parameter(
    members: dict[Any, Any], path: Path, key: str, outer: tuple[str, ...], new: str, rule: Rule
) -> Pending:
    head = ".".join(outer)
    new_key = new[len(head) + 1 :] if head and new.startswith(head + ".") else new
    message = f"{'.'.join((*outer, key))} -> {new} (sweep parameter: a config key)"
    if head and not new.startswith(head + "."):
        return Pending(path, True, rule, message + "; move it by hand")
    if new_key in members:
        message += f"; {new_key} is set too, so remove this one by hand"
        return Pending(path, True, rule, message)
    return Pending(path, True, rule, message, [RenameKey(path, new_key)])
