"""What the live commands print: the per-object outcome table, the lines after it (an
interrupted batch, conflicts, an export) and what a project held."""

from __future__ import annotations

import pytest

from wbmigrate.live.export import Exported
from wbmigrate.live.objects import ObjectRef
from wbmigrate.live.outcomes import Outcome, WriteStatus
from wbmigrate.live.project import Counts
from wbmigrate.report.live import conflicts, export_line, found_line, interrupted, to_text

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
        (Counts(reports=4, drafts=1, workspaces=1, automations=6),
         "Found 4 reports (1 draft), 1 saved workspace, 6 automations."),
        (Counts(), "Found 0 reports (0 drafts), 0 saved workspaces, 0 automations."),
        (Counts(reports=1, drafts=1, workspaces=2, automations=1),
         "Found 1 report (1 draft), 2 saved workspaces, 1 automation."),
    ],
    ids=["readme", "empty", "singular-and-plural"],
)  # fmt: skip
def test_found_line(found, expected):
    assert found_line(found) == expected


def test_a_conflict_is_its_own_status_and_counts_in_the_summary():
    outcomes = [
        Outcome(HEALTH, WriteStatus.APPLIED, changes=2),
        Outcome(OVERVIEW, WriteStatus.CONFLICT, "saved by someone else while it was written"),
        Outcome(ALERT, WriteStatus.FAILED, "HTTP 500"),
    ]
    lines = to_text(outcomes, "Applied").splitlines()
    assert (
        lines[2]
        == '  conflict   workspace "Overview"    saved by someone else while it was written'
    )
    assert lines[-1] == "Summary: 1 applied, 1 conflict, 1 failed."


def test_conflicts_line_gives_the_undo_command_only_when_there_are_conflicts():
    clean = [Outcome(HEALTH, WriteStatus.APPLIED, changes=2)]
    assert conflicts(clean, "wbmigrate rollback b --yes") is None
    line = conflicts(
        [*clean, Outcome(OVERVIEW, WriteStatus.CONFLICT)], "wbmigrate rollback b --yes"
    )
    assert line.startswith("Conflicts: 1 object saved by someone else while being written;")
    assert line.endswith("put the originals back: wbmigrate rollback b --yes --force")
    assert "\n" not in line


@pytest.mark.parametrize(("count", "line"), [(1, "1 object"), (7, "7 objects"), (0, "0 objects")])
def test_interrupted_says_how_many_objects_were_not_started(count, line):
    assert interrupted(count) == f"Interrupted: {line} not started."


def test_names_and_messages_cannot_forge_lines_or_break_the_output():
    forged = ObjectRef("report", "v9", "evil\nSummary: 10 applied.\ud800")
    (_, row, _) = to_text(
        [Outcome(forged, WriteStatus.FAILED, "bad\rline")], "Applied"
    ).splitlines()
    assert row.startswith('  failed     report "evil\\nSummary: 10 applied.\\ud800"')
    assert row.endswith("bad\\rline")
    row.encode("utf-8")  # printable, whatever the title holds


def test_export_lines():
    from pathlib import Path

    assert export_line(Exported(HEALTH, Path("out/reports/a.json"))) == "out/reports/a.json"
    failed = Exported(ObjectRef("report", "v\ud800", "T\ud800"), None, "not exported")
    assert export_line(failed) == 'Error: report "T\\ud800" (v\\ud800): not exported'
