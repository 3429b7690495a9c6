"""What `check` looks for, derived once from the migration: names, keys, flags, and the cheap
substrings ("anchors") without which a file cannot hold any of them.

Which forms are looked for where: a metric name everywhere; a config form outside a config
file's own structure (Python strings, keywords and identifiers, JSON/YAML specs, Markdown prose,
the residual pass) only when it is distinctive, a dotted path (`orchestrator.seed`) or a leaf of
at least two words (`max_off_policy_steps`). A one-word form (`wandb`, `name`, `id`, `env`) is
no name the mapping knows there: it is matched only where the structure says it is that key, a
TOML or JSON/YAML config key at its path (`config_keys`), or a flag in a command line (`flags`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property

from wbmigrate.check.model import Finding, Lines, Rule
from wbmigrate.check.prefilter import Prefilter
from wbmigrate.engine.model import Mode, Options
from wbmigrate.mapping import WORDS, ConfigRemoval, Migration, part_cover
from wbmigrate.names import AFTER_NAME, NOT_IN_NAME, trie

# Spec fields whose regexes can match old keys without spelling them out.
REGEX_SPEC_KEYS = ("metricRegex", "searchQuery", "searchHistory")


@dataclass(frozen=True)
class Targets:
    migration: Migration
    options: Options

    @property
    def dual(self) -> bool:
        return self.options.mode is Mode.DUAL

    @cached_property
    def config_keys(self) -> dict[str, str]:
        """Dotted config keys (TOML, JSON and YAML configs): old -> new."""
        return {old: new for rename in self.migration.config for old, new in rename.toml.items()}

    @cached_property
    def config_leaves(self) -> dict[str, str]:
        """The last part of each dotted config key (a keyword argument, an attribute), when it
        is distinctive and the rename changes it: `max_off_policy_steps`, never `name` (see the
        module's docstring), nor the `max_norm` of `loss.max_norm -> optim.max_norm`: a key
        that only moved is spelled as much like the new key as the old one."""
        pairs = ((_leaf(old), _leaf(new)) for old, new in self.config_keys.items())
        return {old: new for old, new in pairs if distinctive(old) and old != new}

    @cached_property
    def one_word_flags(self) -> tuple[str, ...]:
        """Flags of one word (`--wandb`): matched in command lines only, never as a name."""
        return tuple(flag for flag in self.flags if not distinctive(flag))

    @cached_property
    def key_parts(self) -> tuple[tuple[str, ...], ...]:
        """The parts of each config key whose leaf is no name of its own: one word
        (`inference`, `model`, `name`), or not in `config_leaves` (a key that only moved): a
        config file holding that key at its path holds every one of them."""
        keys = (key for key in self.config_keys if _leaf(key) not in self.config_leaves)
        return tuple(tuple(dict.fromkeys(key.split("."))) for key in keys)

    @cached_property
    def flags(self) -> dict[str, str]:
        """Command-line flags: old -> new, in both spellings prime-rl's CLI accepts: as the
        mapping writes them (`--orchestrator.max-off-policy-steps`) and with underscores
        (`--orchestrator.max_off_policy_steps`), which fix to the new flag with underscores."""
        found: dict[str, str] = {}
        for rename in self.migration.config:
            for old, new in rename.cli.items():
                found[old] = new
                found.setdefault(_underscored(old), _underscored(new))
        return found

    @cached_property
    def removed_keys(self) -> dict[str, str]:
        """Dotted config keys (the path and its TOML forms) of removed config fields, each with
        when and why it was removed. A form without a dot (a standalone config's top-level
        key) is also looked for as a keyword of one of prime-rl's config classes."""
        return self._removed(lambda gone: (gone.path, *gone.toml))

    @cached_property
    def removed_flags(self) -> dict[str, str]:
        """The flags of removed config fields, in both spellings (see `flags`)."""
        return self._removed(lambda gone: (*gone.cli, *map(_underscored, gone.cli)))

    def _removed(self, forms: Callable[[ConfigRemoval], Iterable[str]]) -> dict[str, str]:
        found: dict[str, str] = {}
        for gone in self.migration.config_removed:
            why = f"removed in step {self.migration.step_label(gone.version)}: {gone.reason}"
            found |= dict.fromkeys(forms(gone), why)
        return found

    def removed(
        self, label: str, lines: Lines, start: int, end: int, old: str, what: str
    ) -> Finding:
        """A removed config key or flag: an error without a fix (no value is right to write)."""
        why = {**self.removed_keys, **self.removed_flags}[old]
        message = f"{old} ({what}) was {why}"
        return lines.finding(label, start, end, Rule.REMOVED_CONFIG_KEY, message)

    @cached_property
    def flag_pattern(self) -> re.Pattern[str] | None:
        """A whole flag: `--max-off-policy-steps` but not `--max-off-policy-steps-hint` nor
        `x--max-off-policy-steps`. It ends where its value or the next word starts (`=`,
        whitespace, the end of the text), at a quote (`"--flag", "8"` in a YAML or JSON list,
        a Dockerfile's exec form), at what ends a shell word or a list item (a comma,
        semicolon, closing bracket, pipe, ampersand, backtick or backslash), or at a YAML
        key's colon (`--flag: 8`, the string "--flag" as a key)."""
        flags = [*self.flags, *self.removed_flags]
        if not flags:
            return None
        alternatives = "|".join(map(re.escape, sorted(flags, key=len, reverse=True)))
        end = r"""(?=[\s="'`,;)\]}|&\\]|:(?:\s|$)|$)"""
        return re.compile(rf"(?<![\w./-])(?:{alternatives}){end}")

    @cached_property
    def deprecated(self) -> frozenset[str]:
        """Old config keys, leaves and flags whose old spelling still loads (every rename that
        gives them is `deprecated`): `check` warns about them rather than failing."""
        kept: set[str] = set()
        broken: set[str] = set()
        for rename in self.migration.config:
            olds = [*rename.toml, *map(_leaf, rename.toml), *rename.cli]
            olds += [_underscored(flag) for flag in rename.cli]
            (kept if rename.deprecated else broken).update(olds)
        return frozenset(kept - broken)

    def config_rule(self, old: str) -> Rule:
        """The rule of an old config key or flag: deprecated if its old spelling still loads."""
        return Rule.DEPRECATED_CONFIG if old in self.deprecated else Rule.RENAMED_CONFIG_KEY

    @cached_property
    def spellings(self) -> dict[str, str]:
        """Every spelling of an old name the residual pass looks for, with what it became:
        metric names, and the distinctive forms of config keys: dotted keys and last parts of
        two words or more (snake and kebab case), and flags in both spellings
        (`--orchestrator.max_off_policy_steps` is accepted too). `name` or `--wandb` is none."""
        found: dict[str, str] = {}
        for name in self.migration.old_names:
            found[name] = _fate_text(self.migration, name)
        for old, new in {**self.config_keys, **self.config_leaves}.items():
            if distinctive(old):
                found[old] = f"renamed to {new}"
                found[old.replace("_", "-")] = f"renamed to {new.replace('_', '-')}"
        for old, new in self.flags.items():
            if distinctive(old):
                found[old] = f"renamed to {new}"
                found[_underscored(old)] = f"renamed to {_underscored(new)}"
        # the forms the mapping lists, never a bare last part it does not (`path` of
        # `orchestrator.weights.path` is in every other file)
        for old, why in self.removed_keys.items():
            if distinctive(old):
                found.setdefault(old, why)
                found.setdefault(old.replace("_", "-"), why)
        for old, why in self.removed_flags.items():
            if distinctive(old):
                found.setdefault(old, why)
        return found

    @cached_property
    def new_keys(self) -> frozenset[str]:
        """The dotted config keys renames give that are no old key themselves."""
        return frozenset(self.config_keys.values()) - self.config_keys.keys()

    @cached_property
    def new_key_paths(self) -> frozenset[tuple[str, ...]]:
        """`new_keys` as the paths of parts a TOML file's keys are compared by."""
        return frozenset(tuple(key.split(".")) for key in self.new_keys)

    @cached_property
    def new_names_ending(self) -> dict[str, tuple[str, ...]]:
        """Each spelling of an old name that a new key or flag ends with after a dot, and those
        new names: in `--train.sampling.max-completion-tokens`, what `--fix` writes for
        `--sampling.max-tokens`, `sampling.max-completion-tokens` is part of the new name, not
        the old key of that spelling."""
        news = {*self.config_keys.values(), *self.flags.values()}
        ending: dict[str, set[str]] = {}
        for new in {*news, *(new.replace("_", "-") for new in news)}:
            for at, char in enumerate(new):
                if char == "." and new[at + 1 :] in self.spellings:
                    ending.setdefault(new[at + 1 :], set()).add(new)
        return {old: tuple(names) for old, names in ending.items()}

    @cached_property
    def spelling_pattern(self) -> re.Pattern[str] | None:
        """A whole spelling of an old name: `eval/off_policy/mean`, `off_policy/mean_smoothed`
        and `max_off_policy_steps_hint` are other names; `run.summary.off_policy/mean` and
        `self.max_off_policy_steps` are not."""
        if not self.spellings:
            return None
        # the boundary before a name is looked at after its first character: a search for a
        # pattern that starts with a lookbehind tries every offset, this one skips ahead
        words = trie(self.spellings, after_first=NOT_IN_NAME, end=AFTER_NAME)
        return re.compile("|".join(words))

    @cached_property
    def anchors(self) -> tuple[str, ...]:
        """Substrings every old name, key or flag contains at least one of: a file without any
        of them cannot need a change (but for regex fields, see REGEX_SPEC_KEYS)."""
        return part_cover(self.spellings)

    @cached_property
    def prefilter(self) -> Prefilter:
        """The first look at a file's bytes: whether anything in it can give a result."""
        return Prefilter(
            self.spellings,
            self.anchors,
            REGEX_SPEC_KEYS,
            self.one_word_flags,
            self.key_parts,
        )

    def may_contain(self, text: str, spec_like: bool = False) -> bool:
        """Whether a piece of a file (a code block, a cell, a string) may hold anything."""
        anchors = self.anchors + (REGEX_SPEC_KEYS if spec_like else ()) + self.one_word_flags
        return any(anchor in text for anchor in anchors) or any(
            all(part in text for part in parts) for parts in self.key_parts
        )


_MADE: dict[tuple[int, Options], Targets] = {}


def targets_for(migration: Migration, options: Options) -> Targets:
    """The Targets of `migration` and `options`, made once per process: building the patterns of
    the whole-history prime-rl mapping takes about 0.3 s, and the test suite runs some 1,000
    `check`s in one process with the same mapping (see `mapping.load`)."""
    key = (id(migration), options)
    found = _MADE.get(key)
    if found is None or found.migration is not migration:  # an id is reused only once freed
        if len(_MADE) >= 8:
            _MADE.clear()
        found = _MADE[key] = Targets(migration, options)
    return found


def distinctive(form: str) -> bool:
    """Whether a config form is a name outside a config file's own structure: a dotted path or
    a last part of two words or more (`max_off_policy_steps`, `--max-off-policy-steps`)."""
    bare = form.lstrip("-")
    return "." in bare or len(WORDS.findall(bare)) > 1


def _fate_text(migration: Migration, name: str) -> str:
    fate = migration.fate(name)
    assert fate is not None
    if not fate.removed:
        return f"renamed to {fate.new}"
    return f"no longer logged; use {fate.new}" if fate.new else "no longer logged"


def _leaf(key: str) -> str:
    return key.rpartition(".")[2]


def _underscored(flag: str) -> str:
    """`--orchestrator.max-off-policy-steps` -> `--orchestrator.max_off_policy_steps`."""
    dashes = len(flag) - len(flag.lstrip("-"))
    return flag[:dashes] + flag[dashes:].replace("-", "_")
