"""The plan report: text, Markdown and JSON, streamed object by object."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from helpers import FIXTURES, rendered_markdown
from markdown_it import MarkdownIt

from wbmigrate import find_mapping
from wbmigrate.engine.history import History, RunRef
from wbmigrate.engine.model import Change, ChangeAction, Mode, NoteKind, Options
from wbmigrate.plan import Plan, Source, Tally, plan_one
from wbmigrate.plan_json import mapping_entry, object_entry, summary_entry
from wbmigrate.report import plan as report

MAPPING = find_mapping("prime-rl")
MIGRATION = MAPPING.migration()
CASES = FIXTURES / "cases" / "report"
UNREADABLE = Source(name="x", origin="x.json", error="not UTF-8 text")
NAMES = ["off_policy/mean", "staleness/rollout/mean"]
SLOW_KEYS = frozenset({"a" * 40 + "!", "loss"})  # the catastrophic case's project keys


def case(name: str, title: str | None = None) -> Source:
    text = (CASES / name / "before.json").read_text()
    return Source(name=title or name, origin=f"{name}/before.json", text=text)


def sources() -> list[Source]:
    return [case("line-metrics"), case("line-metric-regex-inactive"), UNREADABLE]


def make_plan(sources, migration, options) -> Plan:
    return Plan(migration, options, tuple(plan_one(s, migration, options) for s in sources))


PLAN = make_plan(sources(), MIGRATION, Options())
SUMMARY = (
    "Summary: 3 objects: 1 to change, 1 unchanged, 1 unreadable. "
    "3 changes (2 added, 1 annotated). 0 warnings, 0 need review."
)


@pytest.mark.parametrize(
    ("migration", "mode", "expected"),
    [
        (MIGRATION, Mode.DUAL, "Plan: prime-rl 2025.07.07 .. 2026.10.25, dual mode"),
        (MAPPING.migration(start="2026.08.21", to="2026.08.21"), Mode.REPLACE,
         "Plan: prime-rl 2026.08.21 .. 2026.08.21, replace mode"),
    ],
    ids=["all-steps", "one-step-replace"],
)  # fmt: skip
def test_header(migration, mode, expected):
    assert report.header(migration, Options(mode=mode)) == expected


def test_text_report():
    lines = report.to_text(PLAN).splitlines()
    assert lines[:3] == [report.header(MIGRATION, Options()), report.LEGEND, ""]
    assert lines[3:11] == [
        'report "line-metrics"  (line-metrics/before.json)',
        '  panel grid (block 1) › panel "Staleness" (Run History Line Plot)',
        "    + metrics[0]  staleness/rollout/mean (beside off_policy/mean)",
        "    + metrics[1]  staleness/rollout/max (beside off_policy/max)",
        "  (the report itself)",
        "    * migration note  note added at the top",
        "",
        '"x"  (x.json)',
    ]
    assert lines[11:] == ["  error: not UTF-8 text", "", SUMMARY]


def test_unchanged_objects_are_hidden_unless_verbose():
    assert "line-metric-regex-inactive" not in report.to_text(PLAN)
    assert (
        'report "line-metric-regex-inactive"  (line-metric-regex-inactive/before.json)\n'
        in report.to_text(PLAN, True)
    )
    assert "line-metric-regex-inactive" not in report.to_markdown(PLAN)


def test_an_unchanged_object_needing_review_is_shown(engine_match_budget):
    options = Options(project_keys=SLOW_KEYS)
    plan = make_plan([case("line-metric-regex-catastrophic")], MIGRATION, options)
    text = report.to_text(plan)
    assert "    ? metricRegex: regex '(a|aa)+$' could not be checked against the" in text
    assert text.endswith("0 to change, 1 unchanged, 0 unreadable. 0 warnings, 1 needs review.\n")


def test_info_notes_only_when_verbose():
    plan = make_plan([case("equivalent")], MIGRATION, Options())
    info = "    i metrics[0]: off_policy/token/max is no longer logged; staleness/rollout/max"
    assert info not in report.to_text(plan)
    assert info in report.to_text(plan, verbose=True)
    assert "<details>" not in report.to_markdown(plan)
    assert "<details><summary>2 notes</summary>" in report.to_markdown(plan, verbose=True)


NONE = "0 objects: 0 to change, 0 unchanged, 0 unreadable."


@pytest.mark.parametrize(
    ("tally", "expected"),
    [
        (Tally(), f"{NONE} 0 warnings, 0 need review."),
        (Tally(notes=Counter({NoteKind.WARNING: 1, NoteKind.REVIEW: 1, NoteKind.INFO: 4})),
         f"{NONE} 1 warning, 1 needs review."),
        (Tally(actions=Counter({ChangeAction.DISABLED: 2, ChangeAction.RENAMED: 1})),
         f"{NONE} 3 changes (1 renamed, 2 disabled). 0 warnings, 0 need review."),
        (PLAN.tally, SUMMARY.removeprefix("Summary: ")),
    ],
    ids=["empty", "singular-notes", "actions-in-enum-order", "plan"],
)  # fmt: skip
def test_summary(tally, expected):
    assert report.summary(tally) == "Summary: " + expected


def change(action: ChangeAction, old, new) -> Change:
    return Change("/x", action, old, new, (), "field")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (change(ChangeAction.RENAMED, "a", "b"), "a -> b"),
        (change(ChangeAction.ADDED, "a", "b"), "b (beside a)"),
        (change(ChangeAction.REMOVED, "a", None), "a dropped"),
        (change(ChangeAction.REMOVED, {"viewType": "Run History Line Plot"}, None),
         "the whole panel deleted"),
        (change(ChangeAction.REMOVED, {"key": "a"}, None), "an object deleted"),
        (change(ChangeAction.DISABLED, True, False), "true -> false"),
        (change(ChangeAction.ANNOTATED, None, "note"), "note added at the top"),
        (change(ChangeAction.ANNOTATED, "old note", "note"), "note brought up to date"),
        (change(ChangeAction.RENAMED, "two\nlines", "x" * 80), "two lines -> " + "x" * 71 + "…"),
    ],
    ids=["renamed", "added", "dropped", "panel", "object", "disabled", "annotated", "updated",
         "brief"],
)  # fmt: skip
def test_describe(change, expected):
    assert report.describe(change) == expected


def test_markdown_report():
    lines = report.to_markdown(PLAN).splitlines()
    assert lines[:4] == [
        "## wbmigrate plan: prime-rl 2025.07.07 .. 2026.10.25, dual mode",
        "",
        SUMMARY.removeprefix("Summary: "),
        "",
    ]
    assert lines[4:8] == ['### report "line-metrics"', "", "`line-metrics/before.json`", ""]
    assert "| Where | Field | Change |" in lines
    assert "| — | `migration note` | annotated: note added at the top |" in lines
    assert (
        '| panel grid (block 1) › panel "Staleness" (Run History Line Plot) | `metrics[0]` '
        "| added: staleness/rollout/mean (beside off_policy/mean) |"
    ) in lines
    assert lines[-6:] == ['### "x"', "", "`x.json`", "", "**Error:** not UTF-8 text", ""]


def test_markdown_escapes_pipes_and_angle_brackets(engine_match_budget):
    bad = Source(name="y", origin="y.json", error="bad | <x>")
    options = Options(project_keys=SLOW_KEYS)
    plan = make_plan([case("line-metric-regex-catastrophic", "a|b <c>"), bad], MIGRATION, options)
    markdown = report.to_markdown(plan)
    assert '### report "a\\|b &lt;c>"\n' in markdown
    assert "**Error:** bad \\| &lt;x>\n" in markdown
    assert "<details><summary>1 note</summary>" in markdown
    assert "metricRegex: regex '(a\\|aa)+$' could not be checked" in markdown
    assert "<c>" not in markdown


@pytest.mark.parametrize("verbose", [False, True], ids=["quiet", "verbose"])
def test_streamed_chunks_join_to_the_whole_document(verbose):
    def streamed(chunks, *args):
        return "".join(
            chunks(
                MIGRATION, Options(), (plan_one(s, MIGRATION, Options()) for s in sources()), *args
            )
        )

    assert streamed(report.text_chunks, verbose) == report.to_text(PLAN, verbose)
    assert streamed(report.markdown_chunks, verbose) == report.to_markdown(PLAN, verbose)
    assert streamed(report.json_chunks) == report.to_json(PLAN)


def test_text_is_written_as_objects_are_planned():
    taken = []

    def planned():
        for source in sources():
            taken.append(source.name)
            yield plan_one(source, MIGRATION, Options())

    chunks = report.text_chunks(MIGRATION, Options(), planned())
    assert next(chunks).startswith("Plan: prime-rl")
    assert taken == []
    assert next(chunks).startswith('report "line-metrics"')
    assert taken == ["line-metrics"]


@pytest.mark.parametrize("plan", [PLAN, Plan(MIGRATION, Options(mode=Mode.REPLACE))],
                         ids=["objects", "empty"])  # fmt: skip
def test_json_report(plan):
    expected = {
        **mapping_entry(plan.migration, plan.options),
        "objects": [object_entry(planned) for planned in plan.objects],
        "summary": summary_entry(plan.tally),
    }
    text = report.to_json(plan)
    assert json.loads(text) == expected
    assert text == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"


def test_json_entries():
    data = json.loads(report.to_json(PLAN))
    assert data["mapping"] == {"id": "prime-rl", "from": "2025.07.07", "to": "2026.10.25"}
    error = {"name": "x", "origin": "x.json", "kind": None, "status": "error"}
    assert data["objects"][2] == {**error, "error": "not UTF-8 text"}
    added = data["objects"][0]["changes"][0]
    assert [added[k] for k in ("action", "old", "new")] == ["added", *NAMES]
    assert [o["status"] for o in data["objects"]] == ["changes", "unchanged", "error"]
    assert (data["summary"]["objects"], data["summary"]["actions"]["added"]) == (3, 2)


def test_the_json_summary_counts_objects_and_changes_apart():
    """The text says "3 objects: 1 to change, 1 unchanged, 1 unreadable. 3 changes"; the JSON
    says the same, under the same words."""
    summary = json.loads(report.to_json(PLAN))["summary"]
    counts = {k: summary[k] for k in ("objects", "to_change", "unchanged", "unreadable", "changes")}
    assert counts == {"objects": 3, "to_change": 1, "unchanged": 1, "unreadable": 1, "changes": 3}
    assert summary["changes"] == sum(summary["actions"].values())


@pytest.mark.parametrize(
    ("runs", "total", "expected"),
    [(7, 7, "Runs: 7 read."), (1, None, "Runs: 1 read."), (2, 7, "Runs: the 2 newest of 7 read.")],
    ids=["all", "one", "the-newest"],
)
def test_the_runs_line_reads_as_english(runs, total, expected):
    run = RunRef("r", "r1", "2026-09-01T10:00:00Z")
    (line,) = report.history_lines(Options(history=History(frozenset(), runs, total, None, run)))
    assert line.startswith(expected + " Boundary: ")


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (("1.0 (#1)", "2.0 (#2)"), "Runs: 7 read, logging the keys of steps 1.0 (#1) .. 2.0 (#2)."),
        (("2.0 (#2)", "2.0 (#2)"), "Runs: 7 read, logging the keys of step 2.0 (#2)."),
    ],
    ids=["steps", "one-step"],
)
def test_the_runs_line_says_which_steps_the_runs_span(steps, expected):
    run = RunRef("r", "r1", "2026-09-01T10:00:00Z")
    history = History(frozenset(), 7, 7, None, run, steps=steps)
    (line,) = report.history_lines(Options(history=history))
    assert line.startswith(expected + " Boundary: ")


def test_one_change_is_one_change():
    one = Tally()
    one.actions[ChangeAction.RENAMED] = 1
    assert " 1 change (1 renamed). " in report.summary(one)


LIVE = Source(
    name="Async health",
    origin="VmlldzoxMDc=",
    text=(CASES / "line-metrics" / "before.json").read_text(),
    kind="report",
    url="https://wandb.ai/team/async-rl/reports/Async-health--VmlldzoxMDc",
)


def test_a_live_object_is_shown_with_its_link():
    plan = make_plan([LIVE, case("line-metrics")], MIGRATION, Options())
    text = report.to_text(plan)
    assert f'report "Async health"  (VmlldzoxMDc=)  {LIVE.url}\n' in text
    assert text.count("https://") == 1  # a file has no link
    markdown = report.to_markdown(plan)
    assert f"`VmlldzoxMDc=` <{LIVE.url}>\n" in markdown
    assert rendered_markdown(markdown)[0] == [LIVE.url]


def test_a_link_is_escaped_in_markdown_and_text():
    """A link is ours (made of percent-encoded parts), but is escaped all the same."""
    odd = Source(name="n", origin="o", text="{}", kind="report", url="https://w.example/a b>\n<c")
    plan = make_plan([odd], MIGRATION, Options(annotate=False))
    assert '"n"  (o)  https://w.example/a b>\\n<c\n' in report.to_text(plan, verbose=True)
    markdown = report.to_markdown(plan, verbose=True)
    assert rendered_markdown(markdown)[0] == ["https://w.example/a%20b%3E%0A%3Cc"]


def test_a_name_with_a_newline_cannot_forge_a_line_of_the_report():
    spec = (CASES / "line-metrics" / "before.json").read_text()
    forged = Source(name="x\nSummary: 0 objects", origin="o.json", text=spec)
    text = report.to_text(make_plan([forged], MIGRATION, Options()))
    assert [line for line in text.splitlines() if line.startswith("Summary:")] == [
        text.splitlines()[-1]
    ]
    assert 'report "x\\nSummary: 0 objects"' in text


# --- server text in Markdown: never a link, image, table cell or code span of its own ---------

LINK = "[click](https://evil.example/a)"
IMAGE = "![p](https://evil.example/p.png)"
HOSTILE = f"{LINK} {IMAGE} \\| \\[{LINK}"  # a backslash before our own escape, too


def hostile_plan() -> Plan:
    text = (CASES / "line-metrics" / "before.json").read_text()
    text = text.replace('"chartTitle": "Staleness"', f'"chartTitle": {json.dumps(HOSTILE)}')
    source = Source(name=HOSTILE, origin=f"V1` {LINK} `", text=text)
    broken = Source(name="y", origin="``y``", error=HOSTILE)
    run = RunRef(HOSTILE, "r1", "2026-09-01T10:00:00Z")
    history = History(frozenset(), 2, None, run, run)
    return make_plan([source, broken], MIGRATION, Options(history=history))


def test_markdown_makes_no_link_image_or_cell_of_server_text():
    links, images, cells = rendered_markdown(report.to_markdown(hostile_plan(), verbose=True))
    assert (links, images) == ([], 0)
    assert set(cells) == {3}


def test_markdown_shows_server_text_as_it_is():
    markdown = report.to_markdown(hostile_plan(), verbose=True)
    text = "".join(
        t.content for b in MarkdownIt("commonmark").enable("table").parse(markdown)
        for t in b.children or () if t.type in ("text", "code_inline")
    )  # fmt: skip
    assert HOSTILE in text
    assert f"V1` {LINK} `" in text


def test_a_value_is_redacted_before_it_is_cut():
    """A long value holding the key is cut at 72 characters: cut first, 30 characters of the
    key would be left for the redactor to miss in a long report."""
    from wbmigrate.redact import REDACTED, forget, register

    key = "3f9a0c7e51b2d84a6e0f9c3b7d2a5e8f1c4b0a9d"
    register(key)
    try:
        old = "x" * 40 + key + "y" * 20
        described = report.describe(change(ChangeAction.RENAMED, old, "z"))
        assert described.startswith("x" * 40 + REDACTED)
        assert key[:8] not in described
    finally:
        forget()
