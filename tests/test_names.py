"""Whole names: the anchors that let the walk and `check` skip text."""

from __future__ import annotations

from wbmigrate import find_mapping
from wbmigrate.check.targets import Targets
from wbmigrate.engine.model import Options
from wbmigrate.names import cover

TARGETS = Targets(find_mapping("prime-rl").migration(), Options())


def test_anchors_cover_every_name_with_few_substrings():
    assert TARGETS.anchors == ("off_policy", "max-off-policy-steps")
    assert cover(["a/loss", "b/loss", "c/acc"]) == ("loss", "acc")
    for name in [*TARGETS.migration.old_names, *TARGETS.flags, *TARGETS.config_keys]:
        assert any(anchor in name for anchor in TARGETS.anchors)
