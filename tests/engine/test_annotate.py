"""The migration note is shaped as W&B's own SDK (wandb_workspaces) writes a markdown block
and a workspace section: its models read it and write back the very same JSON."""

from __future__ import annotations

import json
import warnings

import pytest
from helpers import rendered_markdown

from wbmigrate.engine.annotate import (
    EMPTY_PARAGRAPH,
    note_block,
    note_index,
    note_section,
    project_boundary,
)
from wbmigrate.engine.history import History, RunRef

with warnings.catch_warnings():  # the SDK's models use pydantic 1 validators
    warnings.simplefilter("ignore", DeprecationWarning)
    from wandb_workspaces.reports.v2 import internal


def sdk_dump(model: type, value: dict) -> str:
    """`value` read by an SDK model and written back, as the SDK saves it."""
    return model.model_validate(value).model_dump_json(by_alias=True, exclude_none=True)


def test_the_note_block_is_what_the_sdk_writes_back():
    block = note_block("### Note\n\n_Added by wbmigrate:m@1_")
    assert json.loads(sdk_dump(internal.MarkdownBlock, block)) == block
    assert sdk_dump(internal.MarkdownBlock, block) == json.dumps(block, separators=(",", ":"))


def test_the_note_section_is_what_the_sdk_writes_back_with_the_flags_it_computes():
    section = note_section("wbmigrate-m", "note")
    written = sdk_dump(internal.PanelBankConfigSectionsItem, section)
    assert written == json.dumps(section, separators=(",", ":"))
    settings = section["localPanelSettings"]
    assert (settings["smoothingActive"], settings["xAxisActive"]) == (True, False)


def test_the_note_section_takes_the_layout_of_the_section_it_goes_before():
    flow = {"snapToColumns": False, "columnsPerPage": 2}
    assert note_section("s", "note", flow)["flowConfig"] == flow
    assert note_section("s", "note", None)["flowConfig"]["columnsPerPage"] == 3


@pytest.mark.parametrize(
    ("blocks", "index"),
    [
        ([EMPTY_PARAGRAPH, {"type": "panel-grid"}], 1),
        ([{"type": "panel-grid"}, EMPTY_PARAGRAPH], 0),
        ([{"type": "paragraph", "children": [{"text": "Intro"}]}], 0),
        ([{"type": "paragraph", "children": [{"text": ""}], "id": "x"}], 0),
        ([], 0),
    ],
    ids=["after-the-sdk-paragraph", "no-leading-paragraph", "text", "not-the-sdk-s", "empty"],
)
def test_the_note_goes_after_the_empty_paragraph_the_sdk_puts_first(blocks, index):
    assert note_index(blocks) == index


# --- what a run's census entry may hold: no link or image of its own in the note ---------------

RUNS = "https://wandb.ai/team/async-rl/runs/"
NEW_RUN = RunRef("run-9", "r9", "2026-10-30T10:00:00Z", RUNS + "r9")
HOSTILE = {
    "link-breaks-out-into-an-image": RunRef(
        "run-7", "r7", "2026-09-01T10:00:00Z", RUNS + "r7) ![p](https://evil.example/p.png"
    ),
    "link-with-a-title": RunRef("run-7", "r7", "2026-09-01", RUNS + 'r7 "a title"'),
    "link-with-a-newline": RunRef("run-7", "r7", "2026-09-01", RUNS + "r7\n\n![p](//evil.example)"),
    "day-is-an-image": RunRef("run-7", "r7", "![](//e.x)T10:00:00Z", RUNS + "r7"),
    "day-is-a-link": RunRef("run-7", "r7", "[x](//e.x)", RUNS + "r7"),
    "script-link": RunRef("run-7", "r7", "2026-09-01", "javascript:alert(1)"),
}


@pytest.mark.parametrize("run", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_runs_link_and_day_stay_one_link_to_the_run(run):
    text = project_boundary(History(frozenset(), 2, None, run, NEW_RUN))
    links, images, _ = rendered_markdown(text)
    assert images == 0
    assert "\n" not in text
    assert all(link.startswith(RUNS) for link in links)
    assert RUNS + "r9" in links
    assert "javascript:" not in text


def test_an_honest_runs_link_is_written_as_it_is():
    run = RunRef("grpo old (v2)", "a b", "2026-09-01T10:00:00Z", RUNS + "a%20b")
    text = project_boundary(History(frozenset(), 2, None, run, NEW_RUN))
    assert f"[grpo old \\(v2\\)]({RUNS}a%20b) (2026-09-01)" in text
