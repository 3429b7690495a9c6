"""A config rename whose old key still loads (`deprecated: true`): read, composed, shown."""

from __future__ import annotations

import json

from helpers import FIXTURES

from wbmigrate.mapping.diff import diff
from wbmigrate.mapping.load import load_mapping
from wbmigrate.mapping.parse import parse_mapping
from wbmigrate.report import mapping_table as table

MAPPING = load_mapping(FIXTURES / "mappings/valid/deprecated-config.yaml")


def test_deprecated_is_read_and_defaults_to_false():
    group, staleness, seed = MAPPING.steps[0].config
    assert (group.deprecated, staleness.deprecated, seed.deprecated) == (True, False, True)
    assert MAPPING.steps[1].config[0].deprecated is False  # not written: a breaking rename


def test_deprecated_then_breaking_is_breaking():
    composed = {c.old: c for c in MAPPING.migration().config}
    seed = composed["orchestrator.seed"]
    assert (seed.new, seed.deprecated) == ("orchestrator.random_seed", False)
    assert dict(seed.toml) == {"orchestrator.seed": "orchestrator.random_seed"}
    assert composed["orchestrator.rollouts_per_example"].deprecated is True
    # within the first step alone the seed's old key still loads
    first = {c.old: c for c in MAPPING.migration(to="1.0").config}
    assert first["orchestrator.seed"].deprecated is True


def test_mapping_json_text_and_markdown_say_it():
    migration = MAPPING.migration()
    data = json.loads(table.to_json(MAPPING, migration))
    assert [(c["old"], c["deprecated"]) for c in data["config"]] == [
        ("orchestrator.rollouts_per_example", True),
        ("orchestrator.max_off_policy_steps", False),
        ("orchestrator.seed", False),
        ("orchestrator.sampling_seed", False),
    ]
    text = table.to_text(MAPPING, migration)
    assert (
        "  orchestrator.rollouts_per_example  -> orchestrator.group_size"
        " (deprecated: the old key still loads)\n" in text
    )
    assert "  orchestrator.seed  -> orchestrator.random_seed\n" in text
    markdown = table.to_markdown(MAPPING, migration)
    assert (
        "| `orchestrator.rollouts_per_example` | `orchestrator.group_size`"
        " (deprecated: the old key still loads) |" in markdown
    )
    assert "| `orchestrator.max_off_policy_steps` | `orchestrator.max_staleness` |" in markdown


def test_a_mapping_without_the_field_reads_as_before():
    text = (FIXTURES / "mappings/valid/chains.yaml").read_text()
    mapping = parse_mapping(text, "chains.yaml")
    assert not any(c.deprecated for s in mapping.steps for c in s.config)


def test_mappings_diff_tells_a_deprecation_from_a_breaking_rename():
    text = (FIXTURES / "mappings/valid/deprecated-config.yaml").read_text()
    breaking = parse_mapping(text.replace("deprecated: true", "deprecated: false"), "b.yaml")
    assert diff(MAPPING, breaking) == [
        "step 1.0 (#1) | 1.0 (#1)",
        "  ! config orchestrator.rollouts_per_example: -> orchestrator.group_size (deprecated)"
        " | -> orchestrator.group_size",
        "  ! config orchestrator.seed: -> orchestrator.sampling_seed (deprecated)"
        " | -> orchestrator.sampling_seed",
    ]
