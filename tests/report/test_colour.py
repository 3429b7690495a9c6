"""Colour at a terminal: the change marks and the levels, through `words.coloured`; off when
piped (click strips it), off with NO_COLOR, on with FORCE_COLOR even when piped; never in JSON,
SARIF, GitHub annotations or Markdown; and a server's text never brings an escape of its own."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner, Result
from helpers import FIXTURES, TARGET

from wbmigrate.cli import cli
from wbmigrate.report.words import STYLED

OURS = re.compile("|".join(map(re.escape, STYLED.values())))
DEMO = FIXTURES / "demo-project"
CHECKED = FIXTURES / "demo-repo"


@pytest.fixture(autouse=True)
def no_colour_settings(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def shown(*args: str, terminal: bool) -> Result:
    """`wbmigrate ARGS` as it prints at a terminal (`terminal`) or into a pipe."""
    runner = CliRunner()
    return runner.invoke(cli, list(args), prog_name="wbmigrate", color=terminal)


def styles(text: str) -> set[str]:
    return set(OURS.findall(text))


def assert_no_escape_but_ours(text: str) -> None:
    assert "\x1b" not in OURS.sub("", text)


def test_marks_and_levels_are_coloured_at_a_terminal(live):
    plan = shown("plan", TARGET, terminal=True).stdout
    assert {STYLED["~"], STYLED["+"], STYLED["-"], STYLED["!"], STYLED["?"]} <= styles(plan)
    assert f"    {STYLED['~']} " in plan  # the mark alone, the field after it as before
    verify = shown("verify", TARGET, terminal=True).stdout
    assert STYLED["error"] in styles(verify)
    check = shown("check", str(CHECKED), terminal=True).stdout
    assert {STYLED["error"], STYLED["warning"]} <= styles(check)
    for text in (plan, verify, check):
        assert_no_escape_but_ours(text)


def test_a_colourless_run_prints_what_it_printed_before(live):
    """Piped, the text is byte for byte the plain one: the styles are all that click strips."""
    coloured = shown("plan", TARGET, terminal=True).stdout
    piped = shown("plan", TARGET, terminal=False).stdout
    assert "\x1b" not in piped
    assert OURS.sub(lambda m: re.sub(r"\x1b\[[0-9;]*m", "", m[0]), coloured) == piped


@pytest.mark.parametrize(
    "args",
    [("plan", str(DEMO)), ("check", str(CHECKED)), ("check", str(CHECKED), "--statistics")],
    ids=["plan", "check", "check-statistics"],
)
def test_no_colour_when_piped(args):
    assert "\x1b" not in shown(*args, terminal=False).output


def test_no_color_turns_it_off_at_a_terminal(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b" not in shown("plan", str(DEMO), terminal=True).output


def test_force_color_keeps_it_when_piped(monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert STYLED["~"] in shown("plan", str(DEMO), terminal=False).stdout


@pytest.mark.parametrize(
    "args",
    [
        ("plan", str(DEMO), "--format", "json"),
        ("plan", str(DEMO), "--format", "markdown"),
        ("check", str(CHECKED), "--format", "json"),
        ("check", str(CHECKED), "--format", "sarif"),
        ("check", str(CHECKED), "--format", "github"),
        ("check", str(CHECKED), "--format", "markdown"),
    ],
    ids=["plan-json", "plan-markdown", "check-json", "sarif", "github", "check-markdown"],
)
def test_machine_and_markdown_formats_are_never_coloured(monkeypatch, args):
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b" not in shown(*args, terminal=True).stdout


@pytest.mark.parametrize("title", ["\x1b[31mred", STYLED["~"]], ids=["an-escape", "ours"])
@pytest.mark.parametrize("command", ["plan", "verify", "apply"])
def test_a_title_never_brings_an_escape_even_one_of_ours(live, title, command):
    """A title that is exactly one of our styled marks is still text: escaped."""
    report = live.state.find("Async health")
    live.state.views[report]["displayName"] = title
    args = (command, TARGET, "--yes") if command == "apply" else (command, TARGET)
    result = shown(*args, terminal=True)
    assert result.exit_code in (0, 1), result.output
    assert f'"{title}"' not in result.stdout
    assert f'"{title}"'.replace("\x1b", "\\x1b") in result.stdout
    assert_no_escape_but_ours(result.stdout)


def test_the_marks_of_an_entity_planned_in_threads_are_coloured_too(org):
    text = shown("plan", "team", terminal=True).stdout
    assert f"    {STYLED['~']} " in text
    assert_no_escape_but_ours(text)
