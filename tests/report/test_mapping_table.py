"""`mappings show`: a composed mapping as a text table, Markdown and JSON."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES

from wbmigrate import find_mapping
from wbmigrate.mapping import Action
from wbmigrate.report import mapping_table as table

# the 3-step prime-rl mapping of 2026: these tests are about the tables' shape, not the history
MAPPING = find_mapping(FIXTURES / "mappings/valid/prime-rl-2026.yaml")
MIGRATIONS = [MAPPING.migration(), MAPPING.migration(to="2026.08.21")]
IDS = ["all-steps", "to-2026.08.21"]
SMALL = """\
format: 1
id: small
title: small renames
sources: [https://example.com]
steps:
  - version: "1.0"
    date: 2026-01-01
    source: https://example.com/release/1.0
    summary: "a | b merged"
    metrics:
      renamed: {loss/a: loss, loss/b: loss}
      removed: {ema: {reason: "gone | for good"}}
    annotation: A note.
"""


def of(migration, action: Action) -> list:
    return [r for r in migration.metrics.values() if r.action is action]


@pytest.mark.parametrize("migration", MIGRATIONS, ids=IDS)
def test_json_lists_what_the_migration_does(migration):
    data = json.loads(table.to_json(MAPPING, migration))
    assert (data["id"], data["title"], data["format"]) == ("prime-rl-2026", MAPPING.title, 1)
    assert (data["from"], data["to"]) == (migration.start.version, migration.end.version)
    assert [s["version"] for s in data["steps"]] == [s.version for s in migration.steps]
    assert [s["date"] for s in data["steps"]] == [s.date.isoformat() for s in migration.steps]
    assert list(data["metrics"]) == list(migration.metrics)
    for name, resolution in migration.metrics.items():
        entry = data["metrics"][name]
        assert entry["action"] == resolution.action.value
        assert entry["chain"] == list(resolution.chain)
        assert entry["versions"] == list(resolution.versions)
        if resolution.action is Action.RENAMED:
            assert entry["new"] == resolution.new
            assert "reason" not in entry
        else:
            assert entry["reason"] == resolution.reason
            assert entry["equivalent"] == resolution.equivalent
            assert "new" not in entry
    config = [(c.old, c.new, dict(c.toml), dict(c.cli)) for c in migration.config]
    assert [(c["old"], c["new"], c["toml"], c["cli"]) for c in data["config"]] == config
    assert data["irreversible"] == {}


def test_json_of_every_step():
    data = json.loads(table.to_json(MAPPING, MIGRATIONS[0]))
    assert data["metrics"]["off_policy/mean"] == {
        "action": "renamed",
        "new": "staleness/rollout/mean",
        "chain": ["off_policy/mean", "staleness/rollout/mean"],
        "versions": ["2026.10.25"],
    }
    token_max = data["metrics"]["off_policy/token/max"]
    assert (token_max["action"], token_max["equivalent"]) == ("removed", "staleness/rollout/max")
    gauge = data["metrics"]["dispatcher/off_policy_level_max"]
    assert (gauge["action"], gauge["equivalent"]) == ("removed", None)
    assert gauge["versions"] == ["2026.08.19", "2026.08.21", "2026.10.25"]
    assert data["config"][0]["cli"]["--max-off-policy-steps"] == "--max-staleness"


def test_json_of_a_range_stops_at_its_last_step():
    data = json.loads(table.to_json(MAPPING, MIGRATIONS[1]))
    assert data["metrics"]["dispatcher/off_policy_level_max"]["new"] == "dispatcher/off_policy/max"
    assert {m["action"] for m in data["metrics"].values()} == {"renamed", "removed"}
    assert data["metrics"]["dispatcher/groups_in_flight"]["action"] == "removed"  # #3285
    assert data["config"] == []


@pytest.mark.parametrize("migration", MIGRATIONS, ids=IDS)
def test_text_names_every_old_metric_and_its_outcome(migration):
    lines = table.to_text(MAPPING, migration).splitlines()
    assert lines[0] == "prime-rl-2026: prime-rl off-policy -> staleness metrics"
    assert lines[1].startswith(f"Composed {migration.start.label} .. {migration.end.label} (")
    rows = {line.split()[0]: line for line in lines if line.startswith("  ") and "  " in line[2:]}
    for name, resolution in migration.metrics.items():
        row = rows[name]
        if resolution.action is Action.RENAMED:
            assert f"-> {resolution.new} " in row
        else:
            assert "  removed" in row
    renamed, removed = of(migration, Action.RENAMED), of(migration, Action.REMOVED)
    assert f"Renamed metrics ({len(renamed)})" in lines
    assert (f"Removed metrics ({len(removed)})" in lines) is bool(removed)
    assert ("Renamed config keys (1)" in lines) is bool(migration.config)
    assert lines[-2 * len(migration.steps) - 1] == "Steps"


def test_text_aligns_columns_and_numbers_removal_reasons():
    lines = table.to_text(MAPPING, MIGRATIONS[0]).splitlines()
    start, end = lines.index("Renamed metrics (11)"), lines.index("Removed metrics (8)")
    renamed, removed = lines[start + 1 : end - 1], lines[end + 1 : end + 9]
    assert len({row.index("->") for row in renamed}) == 1
    assert len({row.index("#") for row in renamed + removed}) == 1
    assert removed[5].startswith("  off_policy/token/max              removed, use staleness/")
    assert removed[5].endswith("#4253  [3]")
    assert removed[2].endswith("#3285  [2]")  # dispatcher/groups_in_flight, a reason of its own
    assert all(row.endswith("  [1]") for row in removed[:2] + removed[3:5] + removed[6:])
    assert "  [3] It always equalled the maximum rollout staleness, which is now logged once." in (
        lines
    )
    assert "      flag  --max-off-policy-steps -> --max-staleness" in lines


@pytest.mark.parametrize("migration", MIGRATIONS, ids=IDS)
def test_markdown_tables(migration):
    lines = table.to_markdown(MAPPING, migration).splitlines()
    assert lines[0] == "## `prime-rl-2026`: prime-rl off-policy -> staleness metrics"
    for r in of(migration, Action.RENAMED):
        steps = ", ".join(f"#{s.source.rpartition('/')[2]}" for s in migration.steps
                          if s.version in r.versions)  # fmt: skip
        assert f"| `{r.old}` | `{r.new}` | {steps} |" in lines
    removed = of(migration, Action.REMOVED)
    assert ("| Removed metric | Use instead | Why | Steps |" in lines) is bool(removed)
    assert ("| Old config key | New config key | TOML | Flags |" in lines) is bool(migration.config)
    assert lines[-len(migration.steps) - 2 :][:2] == [
        "| Version | Date | Source | Summary |",
        "|---|---|---|---|",
    ]
    for step in migration.steps:
        assert f"| {step.version} | {step.date} | {step.source} | {step.summary} |" in lines


def test_markdown_of_removed_metrics_and_config():
    markdown = table.to_markdown(MAPPING, MIGRATIONS[0])
    assert (
        "| `off_policy/token/max` | `staleness/rollout/max` | It always equalled the maximum "
        "rollout staleness, which is now logged once. | #4253 |\n"
    ) in markdown
    assert "| `dispatcher/off_policy/max` | none | The live dispatcher gauge is gone;" in markdown
    assert "<br>`max_off_policy_steps` → `max_staleness` | `--orch" in markdown


def test_irreversible_merges_escaping_and_steps_without_a_pull_request(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    mapping = find_mapping(path)
    migration = mapping.migration()
    text = table.to_text(mapping, migration)
    assert "Irreversible: loss/a, loss/b all become loss\n" in text
    assert "  loss/a  -> loss  1.0\n" in text
    assert "  ema     removed  1.0  [1]\n" in text
    markdown = table.to_markdown(mapping, migration)
    assert "| `ema` | none | gone \\| for good | 1.0 |" in markdown
    assert "| 1.0 | 2026-01-01 | https://example.com/release/1.0 | a \\| b merged |" in markdown
    data = json.loads(table.to_json(mapping, migration))
    assert data["irreversible"] == {"loss": ["loss/a", "loss/b"]}


def test_one_step_is_one_step(run, tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    mapping = find_mapping(path)
    assert "(1 of 1 step)" in table.to_text(mapping, mapping.migration())
    result = run("mappings", "validate", str(path))
    assert f"{path}: valid (small, 1 step, 3 old metric names, latest 1.0)" in result.stdout


def test_every_format_shows_live_again_names_in_their_step(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(
        "format: 1\nid: demo\ntitle: Demo\nsources: [https://example.com/demo]\nsteps:\n"
        '  - version: "1"\n    date: 2026-01-01\n    source: https://example.com/demo/pull/1\n'
        "    annotation: A.\n    metrics: {renamed: {a/x: a/y}}\n"
        "    config: {renamed: [{old: t.lr, new: t.rate}]}\n"
        '  - version: "2"\n    date: 2026-01-02\n    source: https://example.com/demo/pull/2\n'
        "    summary: Back.\n    annotation: B.\n"
        "    metrics: {renamed: {a/y: a/x}, live_again: [a/x]}\n"
        "    config: {live_again: [t.lr]}\n"
    )
    mapping = find_mapping(str(path))
    migration = mapping.migration()
    text = table.to_text(mapping, migration)
    assert "  a/y  -> a/x  #2\n" in text
    assert "a/x  ->" not in text
    assert "      Back.\n      logged again: a/x, config t.lr\n" in text
    assert "| Back. Logged again: `a/x`, `config t.lr`. |" in table.to_markdown(mapping, migration)
    steps = json.loads(table.to_json(mapping, migration))["steps"]
    live = [(s["live_again"], s["config_live_again"]) for s in steps]
    assert live == [([], []), (["a/x"], ["t.lr"])]
