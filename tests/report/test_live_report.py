"""What the live commands print: the per-object outcome table and the project census."""

from __future__ import annotations

import pytest

from wbmigrate.live.apply import Outcome, WriteStatus
from wbmigrate.live.objects import ObjectRef
from wbmigrate.live.project import Census
from wbmigrate.report.live import census, to_text

HEALTH = ObjectRef("report", "v1", "Async health")
DRAFT = ObjectRef("report", "v2", "Async health", is_draft=True)
OVERVIEW = ObjectRef("workspace", "v3", "Overview")
ALERT = ObjectRef("automation", "t1", "token-max")


def test_outcome_table():
    outcomes = [
        Outcome(HEALTH, WriteStatus.APPLIED, changes=16),
        Outcome(DRAFT, WriteStatus.APPLIED, changes=1),
        Outcome(ALERT, WriteStatus.UNCHANGED),
        Outcome(OVERVIEW, WriteStatus.FAILED, "no longer exists"),
    ]
    assert to_text(outcomes, "Applied to team/async-rl").splitlines() == [
        "Applied to team/async-rl:",
        '  applied    report "Async health"          16 changes',
        '  applied    report "Async health" (draft)  1 change',
        '  failed     workspace "Overview"           no longer exists',
        "Summary: 2 applied, 1 unchanged, 1 failed.",
    ]


def test_unchanged_outcomes_are_shown_only_with_a_message():
    outcomes = [
        Outcome(HEALTH, WriteStatus.RESTORED),
        Outcome(ALERT, WriteStatus.UNCHANGED),
        Outcome(OVERVIEW, WriteStatus.UNCHANGED, "already as it was"),
    ]
    lines = to_text(outcomes, "Rolled back team/async-rl").splitlines()
    assert lines == [
        "Rolled back team/async-rl:",
        '  restored   report "Async health"',
        '  unchanged  workspace "Overview"   already as it was',
        "Summary: 1 restored, 2 unchanged.",
    ]
    assert "token-max" not in "\n".join(lines)


def test_columns_align_to_the_longest_object_shown():
    hidden = ObjectRef("automation", "t9", "a-very-long-automation-name-not-shown")
    outcomes = [
        Outcome(ALERT, WriteStatus.SKIPPED, "changed since it was read; plan again"),
        Outcome(DRAFT, WriteStatus.APPLIED, changes=3),
        Outcome(hidden, WriteStatus.UNCHANGED),
    ]
    skipped, applied = to_text(outcomes, "Applied").splitlines()[1:-1]
    column = len('  unchanged  report "Async health" (draft)  ')
    assert skipped.index("changed since") == applied.index("3 changes") == column


@pytest.mark.parametrize(
    ("outcomes", "summary"),
    [
        ([], "Summary: nothing to do."),
        ([Outcome(HEALTH, WriteStatus.APPLIED, changes=2)] * 3, "Summary: 3 applied."),
        (
            [
                Outcome(HEALTH, WriteStatus.FAILED, "HTTP 500"),
                Outcome(DRAFT, WriteStatus.SKIPPED, "the changes differ from the saved plan"),
                Outcome(OVERVIEW, WriteStatus.RESTORED),
                Outcome(ALERT, WriteStatus.APPLIED, changes=1),
            ],
            "Summary: 1 applied, 1 restored, 1 skipped, 1 failed.",
        ),
    ],
    ids=["empty", "all-applied", "every-status-in-order"],
)
def test_summary_line(outcomes, summary):
    assert to_text(outcomes, "Applied").splitlines()[-1] == summary


@pytest.mark.parametrize(
    ("changes", "message", "detail"),
    [
        (1, "", "1 change"),
        (2, "", "2 changes"),
        (0, "", ""),
        (5, "no longer exists", "no longer exists"),
    ],
    ids=["one", "two", "none", "message-wins"],
)
def test_detail(changes, message, detail):
    outcome = Outcome(OVERVIEW, WriteStatus.APPLIED, message, changes)
    (heading, row, _) = to_text([outcome], "H").splitlines()
    assert heading == "H:"
    assert row == f'  applied    workspace "Overview"  {detail}'.rstrip()


def test_object_names():
    assert str(HEALTH) == 'report "Async health"'
    assert str(DRAFT) == 'report "Async health" (draft)'
    assert str(ALERT) == 'automation "token-max"'


@pytest.mark.parametrize(
    ("found", "expected"),
    [
        (Census(reports=4, drafts=1, workspaces=1, automations=6),
         "Found 4 reports (1 draft), 1 saved workspace, 6 automations."),
        (Census(), "Found 0 reports (0 drafts), 0 saved workspaces, 0 automations."),
        (Census(reports=1, drafts=1, workspaces=2, automations=1),
         "Found 1 report (1 draft), 2 saved workspaces, 1 automation."),
    ],
    ids=["readme", "empty", "singular-and-plural"],
)  # fmt: skip
def test_census(found, expected):
    assert census(found) == expected
