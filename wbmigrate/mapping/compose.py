"""Compose a range of steps into one lookup: A->B then B->C gives A->C; A->B then B removed gives A
removed. A name a step lists as live again loses what earlier steps made of it: a migration never
renames or removes a key its last step logs. Assumes a validated mapping (no name is reused
after a step renamed or removed it, unless a later step lists it as live again).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from collections.abc import Mapping as MappingABC
from dataclasses import replace
from types import MappingProxyType

from wbmigrate.mapping import Action, ConfigRemoval, ConfigRename, Fate, Migration, Step

Following = dict[str, dict[str, None]]  # a name a step may move -> old names (an ordered set)


def compose(
    mapping_id: str,
    steps: tuple[Step, ...],
    distinct: tuple[tuple[frozenset[str], ...], ...] = (),
) -> Migration:
    """The steps as one lookup; `distinct` is the mapping's groups, already expanded to every
    name of each member (`mapping.distinct.expand`), carried as they are."""
    composed = Composer()
    for step in steps:
        composed.add(step)
    return Migration(
        mapping_id=mapping_id,
        steps=steps,
        metrics=MappingProxyType(composed.metrics),
        config=tuple(composed.config),
        irreversible=MappingProxyType(many_to_one(steps)),
        config_removed=tuple(composed.config_removed),
        distinct_members=distinct,
    )


class Composer:
    """Steps composed one at a time: after each `add`, `metrics` and `config` are what
    composing every step added so far gives. Validation asks what the steps before each step
    compose to; recomposing them for every step was quadratic in the number of steps."""

    def __init__(self) -> None:
        self.metrics: dict[str, Fate] = {}
        self.config: list[ConfigRename] = []
        self.config_removed: list[ConfigRemoval] = []
        # a name a step may move -> the old names whose fate it is
        self._following: Following = defaultdict(dict)

    def add(self, step: Step) -> None:
        """Compose one more step after those added so far."""
        metrics, following = self.metrics, self._following
        for old in _moved_by(step, following):
            metrics[old] = _advance(metrics[old], step)
            _follow(following, metrics[old])
        for fate in _introduced(step):
            if fate.old not in metrics:
                metrics[fate.old] = fate
                _follow(following, fate)
        for name in step.live_again:  # logged again: no earlier step's fate applies to it
            dropped = metrics.pop(name, None)
            if dropped and dropped.new:
                following[dropped.new].pop(name, None)
        if step.config or step.config_removed or step.config_live_again or step.aliases_removed:
            self.config, self.config_removed = _advance_config(
                self.config, self.config_removed, step
            )


def _introduced(step: Step) -> Iterator[Fate]:
    """What `step` alone does to each name it renames or removes."""
    version = (step.version,)
    for old, new in step.renamed.items():
        yield Fate(old, Action.RENAMED, new, "", version, (old, new))
    for old, removal in step.removed.items():
        yield Fate(old, Action.REMOVED, removal.equivalent, removal.reason, version, (old,))


def _moved_by(step: Step, following: Following) -> list[str]:
    """The old names whose fate `step` can change, taken out of `following`: only those are
    advanced, so composing is linear in the mapping's size (advancing every name through every
    step was quadratic when the steps grow with the mapping)."""
    names = dict.fromkeys((*step.renamed, *step.removed))  # once, if a broken step has both
    touched = [name for name in names if name in following]
    return [old for name in touched for old in following.pop(name)]


def _follow(following: Following, fate: Fate) -> None:
    """Index a fate under the name a later step could move: its current name, or the
    equivalent of a removed name."""
    if fate.new is not None:
        following[fate.new][fate.old] = None


def _advance(fate: Fate, step: Step) -> Fate:
    """Carry one name's fate through one more step, which renames or removes the name it is
    followed by (`_moved_by` gives no other). A removed name's equivalent follows a later rename,
    and a later removal (to that removal's own equivalent, or none): the advice never names a
    metric no longer logged."""
    versions = (*fate.versions, step.version)
    current = fate.new
    assert current is not None  # a fate is followed by its current name alone
    if current in step.renamed:
        new = step.renamed[current]
        chain = fate.chain if fate.removed else (*fate.chain, new)
        return replace(fate, new=new, chain=chain, versions=versions)
    removal = step.removed[current]
    reason = fate.reason if fate.removed else removal.reason
    return replace(
        fate, action=Action.REMOVED, new=removal.equivalent, reason=reason, versions=versions
    )


def _advance_config(
    config: list[ConfigRename], removed: list[ConfigRemoval], step: Step
) -> tuple[list[ConfigRename], list[ConfigRemoval]]:
    """Config renames and removals through one more step. A->B then B removed is A removed
    (B's reason, A's own forms); a removal is final unless the path is live again; a dropped
    alias makes the rename of that old path breaking from this step on."""
    later = {rename.old: rename for rename in step.config}
    moved = _forms(step.config)
    gone = {removal.path: removal for removal in step.config_removed}
    dropped = set(step.aliases_removed)
    advanced, removed = [], [*removed]
    for rename in config:
        if rename.new in gone:
            why, forms = gone[rename.new].reason, (tuple(rename.toml), tuple(rename.cli))
            removed.append(ConfigRemoval(rename.old, why, *forms, step.version))
            continue
        then = later.get(rename.new)
        if then is not None or _moves(moved, rename):  # (most renames: neither, left as they are)
            rename = _chain_config(rename, then, moved)
        advanced.append(replace(rename, deprecated=False) if rename.old in dropped else rename)
    known = {rename.old for rename in advanced}
    added = advanced + [rename for rename in step.config if rename.old not in known]
    removed += step.config_removed
    live = set(step.config_live_again)  # accepted again: no earlier rename or removal applies
    return [r for r in added if r.old not in live], [r for r in removed if r.path not in live]


def _forms(renames: tuple[ConfigRename, ...]) -> tuple[dict[str, str], dict[str, str]]:
    """The TOML keys and the flags a step's renames move, each to where it goes."""
    toml = {old: new for rename in renames for old, new in rename.toml.items()}
    cli = {old: new for rename in renames for old, new in rename.cli.items()}
    return toml, cli


def _moves(forms: tuple[dict[str, str], dict[str, str]], rename: ConfigRename) -> bool:
    """Whether `forms` move a TOML key or a flag `rename` renames into."""
    toml, cli = forms
    return not toml.keys().isdisjoint(rename.toml.values()) or not cli.keys().isdisjoint(
        rename.cli.values()
    )


def _chain_config(
    first: ConfigRename, then: ConfigRename | None, forms: tuple[dict[str, str], dict[str, str]]
) -> ConfigRename:
    """`first` through a step that renames its new path (`then`) or only some of its forms:
    a form follows `then` where `then` has it, else any rename of the step that moves it
    (`trainer.monitor.wandb -> trainer.wandb`, then `trainer.wandb -> trainer.monitors.wandb`
    of the rename of `trainer.wandb`, not of `wandb`'s)."""
    toml = _chain(first.toml, then.toml if then else {}, forms[0])
    cli = _chain(first.cli, then.cli if then else {}, forms[1])
    if then is None:
        return replace(first, toml=toml, cli=cli)
    # the old spelling still loads only if every step kept it: one breaking rename breaks it
    deprecated = first.deprecated and then.deprecated
    return ConfigRename(first.old, then.new, toml, cli, deprecated)


def _chain(
    first: MappingABC[str, str], then: MappingABC[str, str], moved: MappingABC[str, str]
) -> MappingABC[str, str]:
    return MappingProxyType(
        {old: then[new] if new in then else moved.get(new, new) for old, new in first.items()}
    )


def many_to_one(steps: tuple[Step, ...]) -> dict[str, tuple[str, ...]]:
    """New names that two or more old names were renamed into: such renames cannot be undone."""
    into: dict[str, dict[str, None]] = defaultdict(dict)  # a name live again may merge twice
    for step in steps:
        for old, new in step.renamed.items():
            into[new][old] = None
    return {new: tuple(olds) for new, olds in into.items() if len(olds) > 1}
