"""Text from a server in every report: a hostile title (a newline, a carriage return, an ANSI
escape, a table's `|`, a right-to-left override) is shown escaped, in every command and format,
and never forges a line, a table cell or a GitHub annotation."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from helpers import TARGET

from testserver import Fault
from wbmigrate.cli import cli
from wbmigrate.report.words import STYLED

HOSTILE = "Evil\nVerify: FORGED everything holds.\r\x1b[2J|cell|\u202eright-to-left"
FORGED = re.compile(r"^\W*(?:Verify: FORGED|error +old-name-left +FORGED)", re.MULTILINE)


@pytest.fixture
def hostile(live):
    """The demo project, its report with old names titled HOSTILE."""
    report = live.state.find("Async health")
    live.state.views[report]["displayName"] = HOSTILE
    return live


def assert_escaped(output: str) -> None:
    """Nothing but printable characters and line ends (and, at a terminal, our own colours),
    and no line the title forged."""
    output = re.sub("|".join(map(re.escape, STYLED.values())), "", output)
    assert [ch for ch in output if not (ch.isprintable() or ch == "\n")] == []
    assert FORGED.search(output) is None


def strings(value):
    """Every string in a JSON value."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return [value] if isinstance(value, str) else []


def assert_table_cells(markdown: str) -> None:
    """Every row of every table has its header's number of cells."""
    cells = 0
    for line in markdown.splitlines():
        if not line.startswith("|"):
            cells = 0
            continue
        count = len(re.findall(r"(?<!\\)\|", line.replace("\\\\", "")))  # `\\` is a `\`
        cells = cells or count
        assert count == cells, line


COMMANDS = {
    "plan-text": ("plan", TARGET),
    "plan-markdown": ("plan", TARGET, "--format", "markdown"),
    "plan-entity-text": ("plan", "team"),
    "plan-entity-markdown": ("plan", "team", "--format", "markdown"),
    "verify-text": ("verify", TARGET),
    "verify-markdown": ("verify", TARGET, "--format", "markdown"),
    "verify-github": ("verify", TARGET, "--format", "github"),
    "export": ("export", TARGET, "out"),
}


@pytest.mark.parametrize("args", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_hostile_title_is_escaped(run, hostile, args):
    result = run(*args)
    assert "Traceback" not in result.output
    assert_escaped(result.stdout + result.stderr)
    assert "FORGED" in result.output or args[0] == "export"  # shown, escaped (export: in a file)
    if "markdown" in args:
        assert_table_cells(result.stdout)


@pytest.mark.parametrize("format_", ["text", "markdown"])
def test_show_escapes_a_hostile_title(run, hostile, format_):
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    result = run("show", "plan.json", "--format", format_)
    assert_escaped(result.stdout + result.stderr)
    assert "FORGED" in result.stdout


@pytest.mark.parametrize("format_", ["text", "json"])
def test_apply_and_rollback_escape_a_hostile_title(run, hostile, format_):
    applied = run("apply", TARGET, "--yes", "--backup-dir", "b", "--format", format_)
    assert applied.exit_code == 0
    rolled = run("rollback", "b", "--yes", "--format", format_)
    assert rolled.exit_code == 0
    for result in (applied, rolled):
        if format_ == "json":  # JSON is exact, and escapes what it must itself
            assert HOSTILE in strings(json.loads(result.stdout))
            assert_escaped(result.stderr)
        else:
            assert_escaped(result.output)
            assert "FORGED" in result.stdout


@pytest.mark.parametrize("format_", ["json", "sarif"])
def test_json_and_sarif_keep_the_title_exact(run, hostile, format_):
    commands = [("verify", TARGET)]
    commands += [("plan", TARGET), ("plan", "team")] if format_ == "json" else []
    for args in commands:
        document = json.loads(run(*args, "--format", format_).stdout)
        assert any(HOSTILE in text for text in strings(document)), args


def test_github_annotations_stay_one_command_each(run, hostile):
    result = run("verify", TARGET, "--format", "github")
    lines = result.stdout.splitlines()
    assert lines
    assert all(line.startswith("::") for line in lines)
    assert_escaped(result.stdout)
    assert any("FORGED" in line for line in lines)


LINKS = "Evil](https://evil.example) ![x](https://evil.example/x.png) `code"


def assert_inert(markdown: str) -> None:
    """No link or image of the server's, its backticks escaped (ours pair up on each line),
    and every table row whole."""
    assert re.search(r"(?<!\\)\]\(", markdown) is None
    for line in markdown.splitlines():
        assert len(re.findall(r"(?<!\\)`", line)) % 2 == 0, line
    assert_table_cells(markdown)


@pytest.mark.parametrize(
    "args",
    [("plan", TARGET), ("plan", "team"), ("verify", TARGET)],
    ids=["plan", "plan-entity", "verify"],
)
def test_markdown_from_a_server_opens_no_link_image_or_code_span(run, live, args):
    report = live.state.find("Async health")
    live.state.views[report]["displayName"] = LINKS
    result = run(*args, "--format", "markdown")
    assert "evil.example" in result.stdout
    assert_inert(result.stdout)


def test_an_error_ending_in_a_backslash_cannot_split_a_table_cell(run, live):
    """`\\` before the cell's `|` would escape it: the row would gain the server's cells."""
    message = "denied \\| forged | cells \\"
    body = json.dumps({"errors": [{"message": message}]}).encode()
    live.faults.append(Fault(operation="WbmigrateViews", status=400, body=body, sticky=True))
    result = run("plan", "team", "--format", "markdown", "--retries", "0")
    assert "forged" in result.stdout
    assert_table_cells(result.stdout)


@pytest.mark.parametrize(
    ("operation", "args"),
    [
        pytest.param("WbmigrateViews", ("plan", TARGET, "--retries", "0"), id="error"),
        pytest.param("WbmigrateRuns", ("plan", TARGET, "--retries", "0"), id="census-warning"),
        pytest.param("WbmigrateViews", ("plan", "team", "--retries", "0"), id="org-status"),
    ],
)
def test_a_servers_error_text_reaches_the_terminal_escaped(live, operation, args):
    """Error and status lines quote the server: its ANSI escapes, carriage returns and bidi
    overrides were printed raw (a `\\x1b[2J` clears the screen of the log reader). Run as at a
    terminal (`color=True`: click strips ANSI escapes only from what is not a terminal)."""
    body = json.dumps({"errors": [{"message": "no\x1b[2J\r\u202eFORGED\nError: forged"}]})
    live.faults.append(Fault(operation=operation, status=400, body=body.encode(), sticky=True))
    result = CliRunner().invoke(cli, list(args), color=True)
    assert "FORGED" in result.stderr
    assert_escaped(result.stdout + result.stderr)
    assert "no\\x1b[2J\\r\\u202eFORGED\\nError: forged" in result.stderr  # escaped where read
    assert not any(line.startswith("Error: forged") for line in result.stderr.splitlines())
