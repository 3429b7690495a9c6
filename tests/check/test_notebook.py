"""Notebooks: each cell's source checked as what it is; findings placed through the JSON
string's escapes; fixes that re-encode only the changed strings and leave outputs alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate import find_mapping
from wbmigrate.check.model import FileReport, Rule
from wbmigrate.check.notebook import blanked, magics, read_source
from wbmigrate.check.run import check_file
from wbmigrate.check.suppress import Ignores
from wbmigrate.check.targets import Targets
from wbmigrate.edit.json import JsonText
from wbmigrate.edit.replacement import apply
from wbmigrate.engine.model import Mode, Options

TARGETS = Targets(find_mapping("prime-rl").migration(), Options(mode=Mode.DUAL))
PATH = ("cells", 0, "source")


def notebook(*cells: dict[str, Any], ensure_ascii: bool = False, indent: int | None = 1) -> str:
    """A notebook as nbformat writes one (or, with other settings, as another tool might)."""
    document = {"cells": list(cells), "metadata": {"kernelspec": {"name": "python3"}}}
    document |= {"nbformat": 4, "nbformat_minor": 5}
    return json.dumps(document, sort_keys=True, indent=indent, ensure_ascii=ensure_ascii) + "\n"


def code(source: str, outputs: list[Any] | None = None, lines: bool = True) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {},
        "outputs": outputs or [],
        "source": source.splitlines(True) if lines else source,
    }


def markdown(source: str, lines: bool = True) -> dict[str, Any]:
    return {
        "cell_type": "markdown",
        "metadata": {},
        "source": source.splitlines(True) if lines else source,
    }


def check(tmp_path: Path, text: str) -> FileReport:
    path = tmp_path / "analysis.ipynb"
    path.write_bytes(text.encode())
    report = check_file(path, TARGETS, Ignores(), fixes=True)
    assert report is not None
    return report


def at(report: FileReport, line: int, column: int) -> str:
    return report.text.split("\n")[line - 1][column - 1 :]


# --- offsets through JSON escapes -------------------------------------------------------------

CELL_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@settings(max_examples=200, deadline=None)
@given(
    text=CELL_TEXT,
    lines=st.booleans(),
    ensure_ascii=st.booleans(),
    indent=st.sampled_from([None, 1, 2]),
)
def test_each_character_of_a_source_is_where_the_file_spells_it(text, lines, ensure_ascii, indent):
    document = notebook(code(text, lines=lines), ensure_ascii=ensure_ascii, indent=indent)
    source = read_source(JsonText(document), PATH, json.loads(document)["cells"][0]["source"])
    if source is None:  # an empty list: nothing to read
        assert lines
        assert not text
        return
    assert source.text == text
    for i, character in enumerate(text):
        start, end = source.outer(i), source.outer(i + 1, end=True)
        assert json.loads(f'"{document[start:end]}"') == character


@settings(max_examples=200, deadline=None)
@given(
    text=CELL_TEXT,
    lines=st.booleans(),
    ensure_ascii=st.booleans(),
    cut=st.tuples(st.integers(0, 60), st.integers(0, 60)),
    piece=st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
)
def test_a_new_source_is_spliced_in_and_nothing_else_changes(text, lines, ensure_ascii, cut, piece):
    document = notebook(code(text, lines=lines), ensure_ascii=ensure_ascii)
    source = read_source(JsonText(document), PATH, json.loads(document)["cells"][0]["source"])
    if source is None:  # an empty list: nothing to read
        assert lines
        assert not text
        return
    start, end = sorted(min(c, len(text)) for c in cut)
    new = text[:start] + piece + text[end:]
    edits = source.encode(new)
    written = apply(document, edits)
    after = json.loads(written)
    value = after["cells"][0]["source"]
    assert ("".join(value) if lines else value) == new
    if lines:  # nbformat's lines: one string a line
        assert value == new.splitlines(True)
    value_start, value_end = source.span
    assert written[:value_start] == document[:value_start]
    assert written[len(written) - (len(document) - value_end) :] == document[value_end:]


def test_a_finding_after_escapes_is_at_its_column_in_the_file(tmp_path):
    text = notebook(
        code('label = "caf\\u00e9\\t"; wandb.log({"off_policy/mean": 1})', lines=False),
        ensure_ascii=True,
    )
    assert '\\"caf\\\\u00e9\\\\t\\"' in text  # the source escapes, escaped again by JSON
    report = check(tmp_path, text)
    (finding,) = report.findings
    assert at(report, finding.line, finding.column).startswith('\\"off_policy/mean\\"')
    assert report.text[finding.span[0] : finding.span[1]] == '\\"off_policy/mean\\"'


# --- fixes ------------------------------------------------------------------------------------

OUTPUT = {
    "name": "stdout",
    "output_type": "stream",
    "text": ["logged off_policy/mean = 0.4\n"],
}


def analysis() -> str:
    return notebook(
        markdown(
            "# Staleness\n\nWe plot `off_policy/{mean,max}`.\n\n"
            "```toml\n[orchestrator]\nmax_off_policy_steps = 8\n```"
        ),
        code(
            'import wandb\n\nx = 0.4\nwandb.log({"off_policy/mean": x})\n'
            "print('logged off_policy/mean =', x)",
            outputs=[OUTPUT],
        ),
        code(
            "import wandb_workspaces.reports.v2 as wr\n\n"
            'plot = wr.LinePlot(\n    y=[\n        "off_policy/mean",\n    ],\n)'
        ),
    )


def test_fix_round_trip(tmp_path):
    text = analysis()
    report = check(tmp_path, text)
    assert [f.rule for f in report.findings if f.fixable] == [
        Rule.RENAMED_CONFIG_KEY,
        Rule.RENAMED_METRIC,
        Rule.RENAMED_METRIC,
    ]
    assert report.fixed is not None
    before, after = json.loads(text), json.loads(report.fixed)
    assert len(after["cells"]) == len(before["cells"])
    assert [c.get("outputs") for c in after["cells"]] == [c.get("outputs") for c in before["cells"]]
    assert after["metadata"] == before["metadata"]
    assert "max_staleness = 8\n" in after["cells"][0]["source"]
    assert '        "staleness/rollout/mean",\n' in after["cells"][2]["source"]
    assert "".join(after["cells"][1]["source"]).count("staleness/rollout/mean") == 1
    for cell in after["cells"]:  # nbformat's lines still
        assert cell["source"] == "".join(cell["source"]).splitlines(True)
    assert report.fixed == notebook(*after["cells"])  # as nbformat would write the new cells
    assert check(tmp_path, report.fixed).fixed is None  # a second fix changes nothing


def test_outputs_are_never_read_nor_changed(tmp_path):
    text = notebook(code("x = 1", outputs=[OUTPUT]), code('wandb.log({"off_policy/max": 1})'))
    report = check(tmp_path, text)
    assert [f.line for f in report.findings if f.rule is not Rule.MENTION] == [
        i + 1 for i, line in enumerate(text.split("\n")) if "wandb.log" in line
    ]
    notes = [f for f in report.findings if f.rule is Rule.MENTION]  # printed names: a note
    assert notes
    assert all(f.message.endswith("in a cell's output (never changed)") for f in notes)
    assert report.fixed is not None
    assert json.loads(report.fixed)["cells"][0] == json.loads(text)["cells"][0]


def test_a_single_string_source_keeps_its_escapes(tmp_path):
    text = notebook(
        code('s = "\\u00e9"\nwandb.log({"off_policy/max": 1})  # caf\u00e9 \U0001f600', False),
        ensure_ascii=True,
    )
    report = check(tmp_path, text)
    assert report.fixed == text.replace("off_policy/max", "staleness/rollout/max")


def test_a_markdown_cell_is_markdown(tmp_path):
    text = notebook(markdown("Prose: off_policy/mean.\n\n```sh\nrun --max-off-policy-steps 2\n```"))
    report = check(tmp_path, text)
    assert [f.rule.value for f in report.findings] == ["mention", "renamed-config-key"]
    assert "is mentioned in prose" in report.findings[0].message
    assert report.fixed == text.replace("--max-off-policy-steps", "--max-staleness")


def test_a_raw_cell_is_text_for_review(tmp_path):
    text = notebook({"cell_type": "raw", "metadata": {}, "source": ["off_policy/mean\n"]})
    (finding,) = check(tmp_path, text).findings
    assert finding.rule is Rule.NEEDS_REVIEW
    assert "a raw cell" in finding.message


# --- IPython syntax ---------------------------------------------------------------------------

CELL = (
    "%matplotlib inline\n"
    "!uv run rl --orchestrator.max-off-policy-steps 16\n"
    "files = !ls configs\n"
    "wandb.log?\n"
    "if files:\n"
    "    !uv run orchestrator \\\n"
    "        --max-off-policy-steps 8\n"
    'wandb.log({"off_policy/max": 3})'
)


def test_magics_are_blanked_keeping_every_offset():
    regions = magics(CELL)
    text = blanked(CELL, regions)
    assert len(text) == len(CELL)
    compile(text, "cell", "exec")
    assert [CELL[s:e] for s, e, _ in regions] == [
        "%matplotlib inline",
        "!uv run rl --orchestrator.max-off-policy-steps 16",
        "!ls configs",
        "wandb.log?",
        "!uv run orchestrator \\",
        "        --max-off-policy-steps 8",
    ]


@pytest.mark.parametrize(
    "cell",
    [
        'message = ("staleness: %s"\n           % "off_policy/mean")\n',
        'doc = """\n%(name)s and !important\n"""\n',
        "total = (1 +  # a comment \\\n         2)\n",
    ],
)
def test_only_a_line_that_starts_a_statement_is_ipython_syntax(cell):
    assert magics(cell) == []


def test_shell_lines_get_their_flags_fixed_and_the_rest_is_python(tmp_path):
    report = check(tmp_path, notebook(code(CELL)))
    assert [f.message.split(" ->")[0] for f in report.findings] == [
        "--orchestrator.max-off-policy-steps",
        "--max-off-policy-steps",
        "off_policy/max",
    ]
    assert report.fixed is not None
    source = "".join(json.loads(report.fixed)["cells"][0]["source"])
    assert source == CELL.replace("max-off-policy-steps", "max-staleness").replace(
        "off_policy/max", "staleness/rollout/max"
    )


@pytest.mark.parametrize(
    ("cell", "rules"),
    [
        ("%%bash\nuv run rl --max-off-policy-steps 4", ["renamed-config-key"]),
        ('%%time\nwandb.log({"off_policy/max": 3})', ["renamed-metric"]),
        ("%%html\n<b>off_policy/max</b>", ["needs-review"]),
        ('wandb.log({"off_policy/max": })', ["needs-review"]),
    ],
)
def test_cell_magics_and_cells_that_do_not_parse(tmp_path, cell, rules):
    report = check(tmp_path, notebook(code(cell)))
    assert [f.rule.value for f in report.findings] == rules


# --- files that are not notebooks -------------------------------------------------------------


def test_invalid_json_is_a_parse_error(tmp_path):
    report = check(tmp_path, '{"cells": [off_policy/mean')
    assert [f.rule for f in report.findings] == [Rule.PARSE_ERROR, Rule.NEEDS_REVIEW]


def test_json_without_cells_is_for_review(tmp_path):
    (finding,) = check(tmp_path, '{"worksheets": [{"input": "off_policy/mean"}]}').findings
    assert finding.rule is Rule.NEEDS_REVIEW
    assert "nbformat 4" in finding.message


# --- what is fine, and what is suppressed -----------------------------------------------------


def test_an_old_key_beside_its_new_one_is_fine_in_a_cell(tmp_path):
    cell = (
        "import wandb_workspaces.reports.v2 as wr\n"
        'wr.LinePlot(y=["off_policy/mean", "staleness/rollout/mean"])'
    )
    assert check(tmp_path, notebook(code(cell))).findings == ()


def test_a_suppression_comment_in_a_cell_line(tmp_path):
    cell = 'wandb.log({"off_policy/max": 1})  # wbmigrate: ignore[renamed-metric] old dashboards\n'
    report = check(tmp_path, notebook(code(cell + 'wandb.log({"off_policy/mean": 1})')))
    assert report.suppressed == 1
    assert [f.message.split(" ->")[0] for f in report.findings] == ["off_policy/mean"]
    assert report.fixed is not None
    assert "off_policy/max" in report.fixed


@pytest.mark.parametrize(
    ("comment", "suppressed"),
    [
        ("# wbmigrate: ignore[renamed-metric] compared with old runs", True),
        ("# wbmigrate: ignore[renamed-metric]", False),
    ],
    ids=["with-a-reason", "without-one"],
)
def test_a_suppression_in_a_cell_needs_a_reason_too(tmp_path, comment, suppressed):
    """The JSON string around a cell's line (`\\n",`) is no reason."""
    text = notebook(code(f'wandb.log({{"off_policy/max": 1}})  {comment}\nx = 1'))
    report = check(tmp_path, text)
    assert (report.findings == ()) is suppressed
    if not suppressed:
        assert report.findings[0].message.endswith("(the suppression on this line needs a reason)")
