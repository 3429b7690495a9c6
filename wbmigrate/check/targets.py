"""What `check` looks for, derived once from the migration: names, keys, flags, and the cheap
substrings ("anchors") without which a file cannot hold any of them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from wbmigrate.engine.model import Mode, Options
from wbmigrate.mapping import Migration
from wbmigrate.names import cover

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
        """The last part of each dotted config key (a keyword argument, an attribute)."""
        return {
            old.rpartition(".")[2]: new.rpartition(".")[2] for old, new in self.config_keys.items()
        }

    @cached_property
    def flags(self) -> dict[str, str]:
        """Command-line flags: old -> new."""
        return {old: new for rename in self.migration.config for old, new in rename.cli.items()}

    @cached_property
    def flag_pattern(self) -> re.Pattern[str] | None:
        """A whole flag: `--max-off-policy-steps` but not `--max-off-policy-steps-hint`."""
        if not self.flags:
            return None
        alternatives = "|".join(map(re.escape, sorted(self.flags, key=len, reverse=True)))
        return re.compile(rf"(?<![\w.-])(?:{alternatives})(?![\w.-])")

    @cached_property
    def anchors(self) -> tuple[str, ...]:
        """Substrings every old name, key or flag contains at least one of: a file without any
        of them cannot need a change (but for regex fields, see REGEX_SPEC_KEYS)."""
        names = [*self.migration.old_names, *self.config_keys, *self.flags]
        return cover(sorted(names))

    def may_contain(self, text: str, spec_like: bool = False) -> bool:
        anchors = self.anchors + (REGEX_SPEC_KEYS if spec_like else ())
        return any(anchor in text for anchor in anchors)
