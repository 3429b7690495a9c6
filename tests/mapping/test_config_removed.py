"""Config fields removed (`config: removed:`) and deprecation aliases dropped
(`config: aliases_removed:`): read, validated, composed, and given their fates."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import yaml
from helpers import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate.mapping import Action, ConfigRemoval, ConfigRename, Fate, MappingError, Step
from wbmigrate.mapping.compose import Composer, compose
from wbmigrate.mapping.diff import diff
from wbmigrate.mapping.load import load_mapping
from wbmigrate.mapping.parse import parse_mapping
from wbmigrate.report import mapping_table as table

PATH = FIXTURES / "mappings/valid/config-removed.yaml"
MAPPING = load_mapping(PATH)
REASON = "The async barrier is hardcoded; there is no bound to set."


def test_a_removal_is_read_with_its_forms_and_step():
    (gone,) = MAPPING.steps[2].config_removed
    assert gone == ConfigRemoval(
        "orchestrator.max_async_level",
        REASON,
        ("orchestrator.max_async_level", "max_async_level"),
        ("--orchestrator.max-async-level", "--max-async-level"),
        "2026.05.25",
    )
    assert MAPPING.steps[3].aliases_removed == ("orchestrator.rollouts_per_example",)


def test_a_rename_then_a_removal_is_a_removal_of_the_old_path_in_its_own_forms():
    removed = {r.path: r for r in MAPPING.migration().config_removed}
    assert removed["orchestrator.async_level"] == ConfigRemoval(
        "orchestrator.async_level",
        REASON,
        ("orchestrator.async_level", "async_level"),
        ("--orchestrator.async-level", "--async-level"),
        "2026.05.25",
    )
    assert "orchestrator.max_async_level" in removed
    # and no longer a rename into a dead key
    assert "orchestrator.async_level" not in {c.old for c in MAPPING.migration().config}


def test_before_the_removal_the_rename_stands():
    migration = MAPPING.migration(to="2025.11.01")
    assert migration.config_removed == ()
    assert migration.config[0].new == "orchestrator.max_async_level"


def test_a_dropped_alias_makes_the_rename_breaking_from_that_step_on():
    def deprecated(migration):
        return {c.old: c.deprecated for c in migration.config}["orchestrator.rollouts_per_example"]

    assert deprecated(MAPPING.migration()) is False
    assert deprecated(MAPPING.migration(to="2026.05.25")) is True  # the range ends before it


def test_config_fates_give_removed_keys_a_removed_fate_with_the_step():
    fates = MAPPING.migration().config_fates
    removed = Fate("max_async_level", Action.REMOVED, None, REASON, ("2026.05.25",))
    assert fates["max_async_level"] == removed
    assert fates["orchestrator.async_level"].removed
    assert fates["orchestrator.rollouts_per_example"].new == "orchestrator.group_size"
    assert MAPPING.migration().step_label("2026.05.25") == "2026.05.25 (#2631)"


def _with_step(extra: str) -> str:
    return PATH.read_text() + extra


LIVE_AGAIN = """  - version: "2026.07.01"
    date: 2026-07-01
    source: https://github.com/PrimeIntellect-ai/prime-rl/pull/4000
    annotation: max_async_level is back.
    config:
      live_again: [orchestrator.max_async_level]
"""


def test_a_removed_path_may_be_live_again_and_then_nothing_removes_it():
    mapping = parse_mapping(_with_step(LIVE_AGAIN), "m.yaml")
    removed = {r.path for r in mapping.migration().config_removed}
    assert removed == {"orchestrator.async_level"}  # what earlier steps made of the old path


def test_removing_a_path_twice_is_name_reused():
    again = LIVE_AGAIN.replace(
        "live_again: [orchestrator.max_async_level]",
        "removed:\n        - {path: orchestrator.max_async_level, reason: Again.}",
    )
    with pytest.raises(MappingError) as caught:
        parse_mapping(_with_step(again), "m.yaml")
    assert [p.code for p in caught.value.problems] == ["name-reused"]


def test_an_alias_dropped_twice_is_not_deprecated():
    again = LIVE_AGAIN.replace(
        "live_again: [orchestrator.max_async_level]",
        "aliases_removed: [orchestrator.rollouts_per_example]",
    )
    with pytest.raises(MappingError) as caught:
        parse_mapping(_with_step(again), "m.yaml")
    assert [p.code for p in caught.value.problems] == ["not-deprecated"]


def test_a_mapping_without_the_fields_reads_as_before():
    mapping = load_mapping(FIXTURES / "mappings/valid/deprecated-config.yaml")
    assert all(s.config_removed == () and s.aliases_removed == () for s in mapping.steps)
    assert mapping.migration().config_removed == ()


# --- property: composing step by step is composing at once ----------------------------------

PATHS = [f"c.k{i}" for i in range(6)]


def _rename(old: str, new: str, deprecated: bool) -> ConfigRename:
    return ConfigRename(old, new, {old: new}, {f"--{old}": f"--{new}"}, deprecated)


ANY_STEP = st.tuples(
    st.dictionaries(st.sampled_from(PATHS), st.tuples(st.sampled_from(PATHS), st.booleans())),
    st.lists(st.sampled_from(PATHS), unique=True, max_size=2),
    st.lists(st.sampled_from(PATHS), unique=True, max_size=2),
    st.lists(st.sampled_from(PATHS), unique=True, max_size=1),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(ANY_STEP, min_size=1, max_size=6))
def test_composing_config_step_by_step_is_composing_the_steps_so_far(tables):
    steps = tuple(
        Step(
            str(i),
            dt.date(2026, 1, 1 + i),
            "",
            "",
            {},
            {},
            tuple(_rename(o, n, d) for o, (n, d) in renamed.items() if o != n),
            "",
            config_live_again=tuple(live),
            config_removed=tuple(ConfigRemoval(p, "gone", (p,), (), str(i)) for p in removed),
            aliases_removed=tuple(dropped),
        )
        for i, (renamed, removed, dropped, live) in enumerate(tables)
    )
    composed = Composer()
    for i, step in enumerate(steps):
        at_once = compose("m", steps[:i])
        assert (composed.config, composed.config_removed) == (
            list(at_once.config),
            list(at_once.config_removed),
        )
        composed.add(step)
    at_once = compose("m", steps)
    assert (tuple(composed.config), tuple(composed.config_removed)) == (
        at_once.config,
        at_once.config_removed,
    )


# --- mappings show and diff -------------------------------------------------------------------


def test_show_lists_removed_keys_and_each_steps_removals_and_dropped_aliases():
    text = table.to_text(MAPPING, MAPPING.migration())
    assert (
        "Removed config keys (2)\n"
        "  orchestrator.async_level  removed  #2631\n"
        f"      {REASON}\n"
        "      TOML  orchestrator.async_level, async_level\n"
        "      flag  --orchestrator.async-level, --async-level\n" in text
    )
    assert (
        "  2026.05.25  2026-05-25  https://github.com/PrimeIntellect-ai/prime-rl/pull/2631\n"
        "      config removed: orchestrator.max_async_level\n"
        "  2026.06.10  2026-06-10  https://github.com/PrimeIntellect-ai/prime-rl/pull/3156\n"
        "      alias dropped, the old key no longer loads: orchestrator.rollouts_per_example\n"
    ) in text
    markdown = table.to_markdown(MAPPING, MAPPING.migration())
    assert "| `orchestrator.max_async_level` | The async barrier is hardcoded;" in markdown
    assert "Alias dropped, the old key no longer loads: `orchestrator.rollouts_per_example`." in (
        markdown
    )


def test_show_json_has_the_removals_and_each_steps_changes():
    data = json.loads(table.to_json(MAPPING, MAPPING.migration()))
    assert data["config_removed"][0] == {
        "path": "orchestrator.async_level",
        "reason": REASON,
        "toml": ["orchestrator.async_level", "async_level"],
        "cli": ["--orchestrator.async-level", "--async-level"],
        "version": "2026.05.25",
    }
    assert data["steps"][2]["config_removed"] == ["orchestrator.max_async_level"]
    assert data["steps"][3]["aliases_removed"] == ["orchestrator.rollouts_per_example"]


def test_diff_shows_a_removal_and_a_dropped_alias_only_in_one():
    bare = parse_mapping(
        PATH.read_text().replace(
            "      aliases_removed:\n        - orchestrator.rollouts_per_example\n",
            "      aliases_removed: []\n",
        ),
        "b.yaml",
    )
    assert diff(MAPPING, bare) == [
        "step 2026.06.10 (#3156) | 2026.06.10 (#3156)",
        "  - config orchestrator.rollouts_per_example alias removed",
    ]
    assert diff(bare, MAPPING)[1] == "  + config orchestrator.rollouts_per_example alias removed"


CONFIG_NAMES = [f"c.k{i}" for i in range(30)]


@st.composite
def config_steps(draw):
    """Valid config tables of 1-5 steps: (renamed {old: (new, deprecated)}, removed, dropped
    aliases, live again), never reusing a retired path but through `live_again`."""
    fresh, alive, retired, aliased = list(CONFIG_NAMES), [], set(), set()
    steps = []
    for _ in range(draw(st.integers(1, 5))):
        alive += [fresh.pop(0) for _ in range(draw(st.integers(0, 3)))]
        live = draw(st.lists(st.sampled_from(sorted(retired)), unique=True)) if retired else []
        olds = draw(st.lists(st.sampled_from(alive), unique=True)) if alive else []
        staying = [n for n in alive if n not in olds]
        renamed, removed = {}, []
        for old in olds:
            targets = [fresh[0], *staying] if fresh else staying
            if draw(st.booleans()) and targets:
                new = draw(st.sampled_from(targets))
                fresh.remove(new) if new in fresh else None
                renamed[old] = (new, draw(st.booleans()))
            else:
                removed.append(old)
        dropped = draw(st.lists(st.sampled_from(sorted(aliased)), unique=True)) if aliased else []
        aliased = (aliased - {*dropped, *live}) | {o for o, (_, d) in renamed.items() if d}
        retired = (retired - set(live)) | set(olds)
        alive = [n for n in staying if n not in retired] + live
        alive += [n for n, _ in renamed.values() if n not in alive]
        steps.append((renamed, removed, dropped, live))
    return steps


def _config_yaml(steps) -> str:
    body = {
        "format": 1,
        "id": "random",
        "title": "Random",
        "sources": ["https://example.com"],
        "steps": [
            {
                "version": str(i),
                "date": dt.date(2026, 1, 1 + i),
                "source": "https://example.com",
                "annotation": "Boundary.",
                "config": {
                    "renamed": [
                        {"old": o, "new": n, "toml": {o: n}, "deprecated": d}
                        for o, (n, d) in renamed.items()
                    ],
                    "removed": [
                        {"path": p, "reason": f"gone in {i}", "toml": [p]} for p in removed
                    ],
                    "aliases_removed": dropped,
                    "live_again": live,
                },
            }
            for i, (renamed, removed, dropped, live) in enumerate(steps)
        ],
    }
    return yaml.safe_dump(body, sort_keys=False)


def _followed(steps, path, first):
    """The oracle: one path followed step by step, as (new, deprecated) or ("removed", step)."""
    state = None
    for i, (renamed, removed, dropped, live) in enumerate(steps, start=first):
        if path in live:
            state = None
        elif state is None and path in renamed:
            state = renamed[path]
        elif state is None and path in removed:
            state = ("removed", str(i))
        elif state is not None and state[0] != "removed":
            current, deprecated = state
            if current in renamed:
                state = (renamed[current][0], deprecated and renamed[current][1])
            elif current in removed:
                state = ("removed", str(i))
            if path in dropped and state[0] != "removed":
                state = (state[0], False)
    return state


def _composed(migration, path):
    renames = {c.old: (c.new, c.deprecated) for c in migration.config}
    removed = {r.path: ("removed", r.version) for r in migration.config_removed}
    return renames.get(path) or removed.get(path)


@settings(max_examples=300, deadline=None)
@given(config_steps(), st.data())
def test_any_range_of_config_steps_composes_like_following_each_path(steps, data):
    mapping = parse_mapping(_config_yaml(steps), "random.yaml")
    first = data.draw(st.integers(0, len(steps) - 1))
    last = data.draw(st.integers(first, len(steps) - 1))
    migration = mapping.migration(str(first), str(last))
    for path in CONFIG_NAMES:
        assert _composed(migration, path) == _followed(steps[first : last + 1], path, first), path
