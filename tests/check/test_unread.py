"""Old names in a spec the engine said nothing about still get a result; what the engine
judged (a change, a note, an old key kept beside its new one, a regex, its own note) gets
none from this pass."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES

from wbmigrate import find_mapping
from wbmigrate.check.model import Rule
from wbmigrate.check.targets import Targets, targets_for
from wbmigrate.check.unread import by_path, unread
from wbmigrate.engine.model import Mode, Options
from wbmigrate.rewrite import rewrite

MIGRATION = find_mapping("prime-rl").migration()


def targets(mode: Mode = Mode.DUAL) -> Targets:
    return targets_for(MIGRATION, Options(mode=mode))


def left(spec: dict, kind: str = "workspace", mode: Mode = Mode.DUAL) -> list[tuple]:
    """(path, key?, rule, name) of each result of the pass over `spec`."""
    found = targets(mode)
    result = rewrite(spec, MIGRATION, kind=kind, options=found.options)
    return [(u.path, u.key, u.rule, u.name) for u in unread(spec, kind, result, found, by_path)]


def panel(view_type: str, config: dict) -> dict:
    return {"viewType": view_type, "config": config}


def workspace(*panels: dict, **section: object) -> dict:
    return {"section": {"panelBankConfig": {"sections": [{"panels": list(panels)}]}, **section}}


PANELS = ("section", "panelBankConfig", "sections", 0, "panels")


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        (
            workspace(
                panel(
                    "Parallel Coordinates Plot",
                    {"columns": [{"accessor": {"name": "off_policy/max"}}]},
                )
            ),
            (*PANELS, 0, "config", "columns", 0, "accessor", "name"),
        ),
        (
            workspace(
                runSets=[
                    {
                        "sort": {
                            "keys": [
                                {"key": {"section": "summary", "name": "s::off_policy/dropped"}}
                            ]
                        }
                    }
                ]
            ),
            ("section", "runSets", 0, "sort", "keys", 0, "key", "name"),
        ),
        (workspace(extra={"accessor": "off_policy/max"}), ("section", "extra", "accessor")),
        (
            workspace(panel("Run History Line Plot", {"metrics": [{"name": "off_policy/max"}]})),
            (*PANELS, 0, "config", "metrics", 0, "name"),
        ),
    ],
    ids=["accessor-object", "s-prefix-in-sort", "unknown-member", "metric-as-object"],
)
def test_an_old_name_in_a_shape_the_engine_does_not_read_is_reviewed(spec, path):
    ((at, key, rule, _),) = left(spec)
    assert (at, key, rule) == (path, False, Rule.NEEDS_REVIEW)


def test_a_name_inside_a_longer_string_is_pointed_at_and_a_sentence_is_a_mention():
    spec = workspace(extra="s::off_policy/dropped", about="we watch off_policy/dropped")
    assert sorted(left(spec)) == [
        (("section", "about"), False, Rule.MENTION, "off_policy/dropped"),
        (("section", "extra"), False, Rule.NEEDS_REVIEW, "off_policy/dropped"),
    ]


def test_a_map_key_is_reviewed_as_a_key():
    spec = workspace(
        panel(
            "Run History Line Plot",
            {"metrics": ["loss"], "overrideColors": {"s::off_policy/dropped": "red"}},
        )
    )
    ((path, key, rule, _),) = left(spec)
    assert (path[-1], key, rule) == ("s::off_policy/dropped", True, Rule.NEEDS_REVIEW)


@pytest.mark.parametrize("mode", list(Mode))
def test_what_the_engine_judged_gets_nothing_here(mode):
    already_dual = panel(
        "Run History Line Plot", {"metrics": ["off_policy/max", "staleness/rollout/max"]}
    )
    per_run = panel(
        "Run History Line Plot",
        {"metrics": ["loss"], "overrideColors": {"run1:off_policy/max": "red"}},
    )
    regex = panel(
        "Run History Line Plot",
        {"useMetricRegex": True, "metricRegex": "^(?!(?:off_policy/max)$).*?|^staleness/"},
    )
    sorted_on = {"key": {"section": "summary", "name": "off_policy/mean"}, "ascending": True}
    new_sort = {"key": {"section": "summary", "name": "staleness/rollout/mean"}, "ascending": True}
    spec = workspace(
        already_dual, per_run, regex, runSets=[{"sort": {"keys": [sorted_on, new_sort]}}]
    )
    assert left(spec, mode=mode) == []


def test_the_boundary_note_and_a_disabled_alert_get_nothing_here():
    migrated = json.loads((FIXTURES / "cases/report/annotation/after.json").read_text())
    assert left(migrated, "report") == []
    for case in ("disabled", "already-disabled"):
        alert = json.loads((FIXTURES / f"cases/automation/{case}/before.json").read_text())
        assert left(alert, "automation") == []
