"""Run sets: sort keys are a key list (dual mode keeps the old entry and adds the new one after
it); the legacy single `sort.key` holds one key."""

from __future__ import annotations

import pytest

from wbmigrate import find_mapping
from wbmigrate.edit.edits import materialize
from wbmigrate.engine.model import ChangeAction, Mode, NoteKind, Options
from wbmigrate.engine.runsets import walk_runset
from wbmigrate.engine.walk import Walk

MIGRATION = find_mapping("prime-rl").migration()
DUAL, REPLACE = Mode.DUAL, Mode.REPLACE


def walk(runset: dict, mode: Mode) -> tuple[dict, Walk]:
    w = Walk(MIGRATION, Options(mode=mode))
    walk_runset(w, (), runset)
    return materialize(runset, w.edits), w


def sorted_by(*entries: tuple[str, str, bool]) -> dict:
    """A run set sorted by `(section, name, ascending)` entries, in order."""
    keys = [{"key": {"section": s, "name": n}, "ascending": a} for s, n, a in entries]
    return {"name": "Run set", "sort": {"keys": keys}}


def check_transformed(before: dict, after: dict, mode: Mode) -> None:
    result, _ = walk(before, mode)
    assert result == after
    again, w = walk(result, mode)  # a second rewrite changes nothing
    assert (again, w.changes) == (result, [])


def check_noop(before: dict, mode: Mode) -> None:
    result, w = walk(before, mode)
    assert (result, w.changes) == (before, [])


MAX = ("summary", "off_policy/max", False)
NEW_MAX = ("summary", "staleness/rollout/max", False)
MEAN = ("summary", "off_policy/mean", True)
NEW_MEAN = ("summary", "staleness/rollout/mean", True)
CREATED = ("run", "createdAt", False)
GAUGE = ("summary", "dispatcher/off_policy/mean", True)


@pytest.mark.parametrize(
    ("before", "after", "mode"),
    [
        (sorted_by(MAX, CREATED), sorted_by(MAX, NEW_MAX, CREATED), DUAL),
        (
            sorted_by(("keys_info", "off_policy/mean", True)),
            sorted_by(("keys_info", "off_policy/mean", True),
                      ("keys_info", "staleness/rollout/mean", True)),
            DUAL,
        ),
        (sorted_by(MEAN, MAX), sorted_by(MEAN, NEW_MEAN, MAX, NEW_MAX), DUAL),
        (
            sorted_by(MAX, ("summary", "off_policy/token/max", False)),
            sorted_by(MAX, NEW_MAX, ("summary", "off_policy/token/max", False)),
            DUAL,
        ),
        (sorted_by(MAX, CREATED), sorted_by(NEW_MAX, CREATED), REPLACE),
        (sorted_by(MEAN, NEW_MEAN, CREATED), sorted_by(NEW_MEAN, CREATED), REPLACE),
        (sorted_by(GAUGE, CREATED), sorted_by(CREATED), REPLACE),
        (
            {"name": "Old", "sort": {"key": {"section": "summary", "name": "off_policy/mean"}}},
            {"name": "Old", "sort": {"key": {"section": "summary",
                                             "name": "staleness/rollout/mean"}}},
            DUAL,
        ),
    ],
    ids=["dual-adds-after-old", "dual-keeps-section-and-direction", "dual-two-old-keys",
         "dual-two-old-keys-one-new-key", "replace-renames-in-place",
         "replace-drops-old-when-new-listed", "replace-drops-removed-key", "legacy-one-key"],
)  # fmt: skip
def test_transformed(before, after, mode):
    check_transformed(before, after, mode)


@pytest.mark.parametrize(
    ("before", "mode"),
    [
        (sorted_by(MEAN, NEW_MEAN), DUAL),
        (sorted_by(GAUGE, CREATED), DUAL),
        (sorted_by(("config", "off_policy/mean", True)), DUAL),
        (sorted_by(("config", "off_policy/mean", True)), REPLACE),
        (sorted_by(("tags", "off_policy/max", True)), REPLACE),
        (sorted_by(NEW_MAX, CREATED), REPLACE),
        ({"name": "Odd", "sort": {"keys": ["off_policy/max", {"key": "off_policy/max"}]}}, DUAL),
    ],
    ids=["dual-new-key-already-listed", "dual-keeps-removed-key", "config-section-dual",
         "config-section-replace", "tags-section", "already-new", "malformed-entries"],
)  # fmt: skip
def test_noop(before, mode):
    check_noop(before, mode)


def test_dual_records_an_added_key_at_the_old_entry_without_a_history_warning():
    _, w = walk(sorted_by(CREATED, MAX), DUAL)
    [change] = w.changes
    assert (change.action, change.pointer, change.old, change.new, change.field) == (
        ChangeAction.ADDED,
        "/sort/keys/1",
        "off_policy/max",
        "staleness/rollout/max",
        "sort.keys[1]",
    )
    assert w.notes == []


def test_dual_keeps_a_removed_key_with_an_info_note():
    _, w = walk(sorted_by(GAUGE), DUAL)
    [note] = w.notes
    assert (note.kind, note.pointer) == (NoteKind.INFO, "/sort/keys/0")
    assert "kept for runs from before the boundary" in note.message


def test_replace_records_a_removed_key():
    _, w = walk(sorted_by(GAUGE, CREATED), REPLACE)
    [change] = w.changes
    assert (change.action, change.pointer) == (ChangeAction.REMOVED, "/sort/keys/0")


def test_the_legacy_single_key_still_warns_that_it_hides_history():
    _, w = walk({"sort": {"key": {"section": "summary", "name": "off_policy/max"}}}, DUAL)
    assert [n.kind for n in w.notes] == [NoteKind.WARNING]
    assert [c.action for c in w.changes] == [ChangeAction.RENAMED]
