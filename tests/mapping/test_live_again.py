"""`live_again:`: a name an earlier step retired, logged (or accepted) again from a later step on.
A migration never renames or removes a key its last step logs."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate.mapping import Action, MappingError
from wbmigrate.mapping.compose import Composer, compose
from wbmigrate.mapping.diff import diff
from wbmigrate.mapping.file import Mapping
from wbmigrate.mapping.parse import parse_mapping

HEAD = "format: 1\nid: demo\ntitle: Demo\nsources: [https://example.com/demo]\nsteps:\n"


def step(n: int, body: str) -> str:
    """One step; `body` is its `metrics:`/`config:` lines, indented as a step's fields."""
    return (
        f'  - version: "{n}"\n    date: 2026-01-0{n}\n'
        f"    source: https://example.com/demo/pull/{n}\n    annotation: Boundary.\n{body}"
    )


def mapping(*bodies: str) -> Mapping:
    return parse_mapping(HEAD + "".join(step(n, b) for n, b in enumerate(bodies, 1)), "m.yaml")


def errors(*bodies: str) -> list[tuple[str, int]]:
    with pytest.raises(MappingError) as caught:
        mapping(*bodies)
    return [(p.code, p.line) for p in caught.value.problems]


RENAME_X_Y = "    metrics:\n      renamed:\n        a/x: a/y\n"
REMOVE_X = "    metrics:\n      removed:\n        a/x: {reason: Gone.}\n"
BACK_X_FROM_Y = "    metrics:\n      renamed:\n        a/y: a/x\n      live_again: [a/x]\n"
LIVE_X = "    metrics:\n      live_again:\n        - a/x  # logged again\n"


def test_a_step_lists_its_live_again_names() -> None:
    loaded = mapping(REMOVE_X, LIVE_X)
    assert loaded.steps[1].live_again == ("a/x",)
    assert loaded.steps[0].live_again == loaded.steps[1].config_live_again == ()


def test_a_name_no_earlier_step_retired_cannot_be_live_again() -> None:
    assert errors(RENAME_X_Y, "    metrics:\n      live_again: [a/y]\n") == [("not-retired", 18)]


def test_a_rename_into_a_retired_name_needs_it_listed_live_again() -> None:
    unlisted = "    metrics:\n      renamed:\n        a/y: a/x\n"
    assert errors(RENAME_X_Y, unlisted) == [("cycle", 19)]
    assert mapping(RENAME_X_Y, BACK_X_FROM_Y).steps[1].renamed == {"a/y": "a/x"}


def test_a_live_again_name_may_be_renamed_or_removed_anew_later() -> None:
    loaded = mapping(REMOVE_X, LIVE_X, "    metrics:\n      renamed:\n        a/x: a/z\n")
    assert loaded.migration().resolve("a/x").new == "a/z"
    assert errors(REMOVE_X, LIVE_X, REMOVE_X, REMOVE_X) == [("name-reused", 33)]


def test_a_step_cannot_both_bring_back_and_retire_a_name() -> None:
    both = "    metrics:\n      live_again: [a/x]\n      removed:\n        a/x: {reason: Gone.}\n"
    assert ("name-reused", 20) in errors(REMOVE_X, both)


def test_composing_through_a_live_again_step_leaves_its_name_alone() -> None:
    loaded = mapping(RENAME_X_Y, BACK_X_FROM_Y)
    composed = loaded.migration()
    assert composed.resolve("a/x").action is Action.UNTOUCHED
    assert composed.resolve("a/y").new == "a/x"
    assert loaded.migration(to="1").resolve("a/x").new == "a/y"  # an earlier --to keeps it


def test_a_removal_is_undone_by_live_again_and_later_renames_of_others_stay() -> None:
    rename_y = "    metrics:\n      renamed:\n        a/y: a/z\n"
    loaded = mapping(RENAME_X_Y, LIVE_X, rename_y)
    composed = loaded.migration()
    assert composed.resolve("a/x").action is Action.UNTOUCHED
    assert composed.resolve("a/y").new == "a/z"
    assert mapping(REMOVE_X, LIVE_X).migration().metrics == {}


def test_a_config_path_is_accepted_again() -> None:
    rename = (
        "    config:\n      renamed:\n        - old: t.lr\n          new: t.rate\n"
        "          toml: {t.lr: t.rate}\n"
    )
    back = (
        "    config:\n      renamed:\n        - old: t.rate\n          new: t.lr\n"
        "      live_again: [t.lr]\n"
    )
    loaded = mapping(rename, back)
    assert [(c.old, c.new) for c in loaded.migration().config] == [("t.rate", "t.lr")]
    assert [(c.old, c.new) for c in loaded.migration(to="1").config] == [("t.lr", "t.rate")]
    assert errors(rename, "    config:\n      live_again: [t.x]\n") == [("not-retired", 20)]


def test_mappings_diff_compares_live_again_names() -> None:
    one, other = mapping(REMOVE_X, LIVE_X), mapping(REMOVE_X, "    summary: none\n")
    assert diff(one, other) == ["step 2 (#2) | 2 (#2)", "  - a/x live again"]


NAMES = [f"k{i}" for i in range(12)]


@st.composite
def histories(draw):
    """1-5 steps, each renaming or removing live names and bringing back retired ones (alone, or
    as the new name of a rename); with the names each step leaves live (logged)."""
    alive, retired, fresh = ["k0", "k1", "k2"], [], NAMES[3:]
    steps, live_after = [], []
    for _ in range(draw(st.integers(1, 5))):
        back = draw(st.lists(st.sampled_from(retired), unique=True)) if retired else []
        olds = draw(st.lists(st.sampled_from(alive), unique=True)) if alive else []
        staying = [n for n in alive if n not in olds]
        renamed, removed = {}, {}
        for old in olds:
            targets = [*fresh[:1], *staying, *back]
            if targets and draw(st.booleans()):
                renamed[old] = new = draw(st.sampled_from(targets))
                fresh = [n for n in fresh if n != new]
            else:
                removed[old] = draw(st.sampled_from([None, *staying]))
        retired = [n for n in retired if n not in back] + olds
        alive = list(dict.fromkeys([*staying, *back, *renamed.values()]))
        steps.append((renamed, removed, back))
        live_after.append(set(alive))
    return steps, live_after


def _document(steps) -> str:
    return yaml.safe_dump(
        {
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
                    "metrics": {
                        "renamed": renamed,
                        "removed": {
                            old: {"reason": "Gone.", **({"equivalent": e} if e else {})}
                            for old, e in removed.items()
                        },
                        "live_again": back,
                    },
                }
                for i, (renamed, removed, back) in enumerate(steps)
            ],
        },
        sort_keys=False,
    )


@settings(max_examples=300, deadline=None)
@given(histories(), st.data())
def test_no_range_renames_or_removes_a_name_its_last_step_leaves_live(history, data):
    steps, live_after = history
    mapping = parse_mapping(_document(steps), "random.yaml")
    first = data.draw(st.integers(0, len(steps) - 1))
    last = data.draw(st.integers(first, len(steps) - 1))
    migration = mapping.migration(str(first), str(last))
    assert not live_after[last] & migration.metrics.keys()
    for name in NAMES:
        got = migration.resolve(name)
        renamed = None if got.removed else got.new  # a removed name's `new` is its equivalent
        assert (got.action, renamed, got.equivalent) == _followed(steps[first : last + 1], name)


@settings(max_examples=200, deadline=None)
@given(histories())
def test_composing_step_by_step_is_composing_at_once(history):
    steps = parse_mapping(_document(history[0]), "random.yaml").steps
    composed = Composer()
    for i, step in enumerate(steps):
        assert composed.metrics == dict(compose("m", steps[:i]).metrics)
        composed.add(step)
    assert composed.metrics == dict(compose("m", steps).metrics)


def _followed(steps, name):
    """The oracle: `name` followed one step at a time; a step that brings it back forgets it."""
    fate = None  # (current name, removed) once a step renamed or removed it
    for renamed, removed, back in steps:
        if name in back:
            fate = None
        elif fate is None and (name in renamed or name in removed):
            fate = (renamed[name], False) if name in renamed else (removed[name], True)
        elif fate is not None and fate[0] in renamed:
            fate = (renamed[fate[0]], fate[1])
        elif fate is not None and fate[0] in removed:  # a removed equivalent follows too
            fate = (removed[fate[0]], True)
    if fate is None:
        return (Action.UNTOUCHED, None, None)
    return (Action.REMOVED, None, fate[0]) if fate[1] else (Action.RENAMED, fate[0], None)
