"""`live_again:`: a name an earlier step retired, logged (or accepted) again from a later step on.
A migration never renames or removes a key its last step logs."""

from __future__ import annotations

import pytest

from wbmigrate.mapping import Action, MappingError
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
