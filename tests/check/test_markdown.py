"""Markdown: code blocks found as CommonMark finds them, each checked as its language, with
findings and fixes moved to their place in the file; prose left to the residual pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate import find_mapping
from wbmigrate.check.markdown import LANGUAGES, check_markdown, code_blocks
from wbmigrate.check.model import FileReport, Rule
from wbmigrate.check.run import check_file
from wbmigrate.check.suppress import Ignores
from wbmigrate.check.targets import Targets
from wbmigrate.engine.model import Mode, Options

TARGETS = Targets(find_mapping("prime-rl").migration(), Options(mode=Mode.DUAL))


def check(tmp_path: Path, text: str, name: str = "README.md") -> FileReport:
    path = tmp_path / name
    path.write_bytes(text.encode())
    report = check_file(path, TARGETS, Ignores(), fixes=True)
    assert report is not None
    return report


def found(report: FileReport) -> list[tuple[int, int, str]]:
    return [(f.line, f.column, f.rule.value) for f in report.findings]


# --- finding the blocks ----------------------------------------------------------------------


def test_fences_of_backticks_and_tildes_with_info_strings():
    text = '# T\n\n```toml title="rl.toml"\na = 1\n```\n\n~~~~{.python}\nx = 1\n~~~~\n'
    assert [(b.language, b.text) for b in code_blocks(text)] == [
        ("toml", "a = 1\n"),
        ("python", "x = 1\n"),
    ]


def test_a_fence_closes_only_on_a_long_enough_run_of_its_own_character():
    text = "````md\n```toml\n~~~\n```\n````\nafter\n"
    (block,) = code_blocks(text)
    assert block.language == "md"
    assert block.text == "```toml\n~~~\n```\n"


def test_an_unclosed_fence_runs_to_the_end():
    (block,) = code_blocks("```sh\nrun --x\nmore")
    assert block.text == "run --x\nmore"


def test_backticks_on_one_line_are_inline_code_not_a_fence():
    assert list(code_blocks("```a``` and more\ntext\n")) == []


def test_a_fence_in_a_list_item_is_read_without_its_indentation():
    text = "1. Step:\n\n   ```python\n   if x:\n       y = 1\n   ```\n"
    (block,) = code_blocks(text)
    assert block.text == "if x:\n    y = 1\n"
    assert block.prefix == "   "
    offset = block.text.index("y")
    assert text[block.outer(offset) :].startswith("y = 1")


def test_a_fence_in_a_block_quote_is_read_without_its_markers():
    text = "> Quote:\n>\n> ```yaml\n> a:\n>   b: 1\n> ```\nafter\n"
    (block,) = code_blocks(text)
    assert block.text == "a:\n  b: 1\n"
    assert block.prefix == "> "


def test_a_block_quote_ending_ends_its_fence():
    (block,) = code_blocks("> ```sh\n> run\nprose\n")
    assert block.text == "run\n"


def test_doctest_prompts_in_a_fence_are_code_not_quotes():
    (block,) = code_blocks("```python\n>>> run.summary\n```\n")
    assert block.text == ">>> run.summary\n"


def test_indented_code_after_a_blank_line():
    text = "Run:\n\n    uv run rl --x\n      --y\n\n    more\n\nprose\n"
    (block,) = code_blocks(text)
    assert (block.language, block.text) == ("", "uv run rl --x\n  --y\n\nmore\n")


def test_indented_text_that_continues_a_paragraph_or_a_list_item_is_not_code():
    text = "para\n    still para\n\n- item\n\n    item paragraph\n\n      item code\n"
    blocks = list(code_blocks(text))
    assert [b.text for b in blocks] == ["item code\n"]


def test_crlf_lines():
    text = "```toml\r\n[orchestrator]\r\nmax_off_policy_steps = 8\r\n```\r\n"
    (block,) = code_blocks(text)
    assert block.text == "[orchestrator]\r\nmax_off_policy_steps = 8\r\n"
    fixed = check_markdown("r.md", text, TARGETS).fix_text(
        check_markdown("r.md", text, TARGETS).findings
    )
    assert fixed == text.replace("max_off_policy_steps", "max_staleness")


# --- every language ---------------------------------------------------------------------------

SNIPPETS = {  # language: (block, the old name in it, what the fixed block holds)
    "toml": (
        "[orchestrator]\nmax_off_policy_steps = 8\n",
        "max_off_policy_steps",
        "max_staleness =",
    ),
    "python": ('run.log({"off_policy/mean": 1})\n', "off_policy/mean", '"staleness/rollout/mean"'),
    "yaml": (
        "orchestrator:\n  max_off_policy_steps: 8\n",
        "max_off_policy_steps",
        "max_staleness:",
    ),
    "json": (
        '{"orchestrator": {"max_off_policy_steps": 8}}\n',
        "max_off_policy_steps",
        '"max_staleness"',
    ),
    "shell": (
        "uv run rl --orchestrator.max-off-policy-steps 8\n",
        "--orchestrator.max-off-policy-steps",
        "--orchestrator.max-staleness 8",
    ),
}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_every_fence_language_is_checked_and_fixed_in_place(tmp_path, language):
    snippet, name, fixed_part = SNIPPETS[LANGUAGES[language][0].lower()]
    text = f"# Doc\n\nSome prose.\n\n```{language}\n{snippet}```\n\nMore prose.\n"
    report = check(tmp_path, text)
    (finding,) = report.findings
    assert finding.fixable
    start, end = finding.span
    assert text[start:end].strip('"') == name  # quotes are part of a literal's span
    line_start = text.rfind("\n", 0, start) + 1
    assert (finding.line, finding.column) == (
        text.count("\n", 0, start) + 1,
        start - line_start + 1,
    )
    assert report.fixed is not None
    assert fixed_part in report.fixed
    head, tail = text.split(snippet)
    assert report.fixed.startswith(head)
    assert report.fixed.endswith(tail)
    assert check(tmp_path, report.fixed).fixed is None  # a second fix changes nothing


def test_a_yaml_block_gets_its_keys_and_its_flags_fixed(tmp_path):
    text = (
        "```yaml\norchestrator:\n  max_off_policy_steps: 8\n"
        "run: uv run rl --orchestrator.max-off-policy-steps 4\n```\n"
    )
    report = check(tmp_path, text)
    assert found(report) == [(3, 3, "renamed-config-key"), (4, 16, "renamed-config-key")]
    assert report.fixed == text.replace("max_off_policy_steps", "max_staleness").replace(
        "max-off-policy-steps", "max-staleness"
    )


def test_a_block_of_a_language_wbmigrate_does_not_read_is_for_review(tmp_path):
    report = check(tmp_path, "```text\nstep off_policy/mean\n```\n")
    (finding,) = report.findings
    assert finding.rule is Rule.NEEDS_REVIEW
    assert "a `text` code block" in finding.message
    assert report.fixed is None


@pytest.mark.parametrize(
    ("language", "snippet"),
    [
        ("toml", "max_off_policy_steps = ..."),
        ("json", '{"metrics": ["off_policy/mean", ...]}'),
        ("yaml", "a: [off_policy/mean"),
        ("python", '>>> run.summary["off_policy/max"]'),
    ],
)
def test_a_block_that_does_not_parse_is_no_error_of_the_file(tmp_path, language, snippet):
    report = check(tmp_path, f"Intro.\n\n```{language}\n{snippet}\n```\n")
    assert [f.rule for f in report.findings] == [Rule.NEEDS_REVIEW]
    assert "that is not valid" in report.findings[0].message
    assert report.fixed is None


# --- prose, places and suppressions -----------------------------------------------------------


def test_prose_and_inline_code_are_notes(tmp_path):
    report = check(tmp_path, "Logs `off_policy/{mean,max}` and --max-off-policy-steps.\n")
    assert found(report) == [(1, 7, "mention"), (1, 34, "mention")]
    assert all("is mentioned in prose" in f.message for f in report.findings)


def test_a_comment_in_a_block_is_a_note_and_its_code_for_review(tmp_path):
    text = "```toml\n# max_off_policy_steps was 8\nnote = 'off_policy/mean'\n```\n"
    report = check(tmp_path, text)
    assert [(f.line, f.rule.value) for f in report.findings] == [
        (2, "mention"),
        (3, "needs-review"),
    ]
    assert "a `toml` code block" not in report.findings[1].message  # the TOML checker's place


def test_an_old_key_beside_its_new_one_is_fine_in_a_block(tmp_path):
    text = (
        "```python\nimport wandb_workspaces.reports.v2 as wr\n"
        'wr.LinePlot(y=["off_policy/mean", "staleness/rollout/mean"])\n```\n'
    )
    assert check(tmp_path, text).findings == ()


def test_suppressions_in_prose_and_in_a_block(tmp_path):
    text = (
        "Mind off_policy/mean. <!-- wbmigrate: ignore[mention] history -->\n\n"
        "```toml\n[orchestrator]\n"
        "max_off_policy_steps = 8  # wbmigrate: ignore[renamed-config-key] pinned\n```\n"
    )
    report = check(tmp_path, text)
    assert report.findings == ()
    assert report.suppressed == 2
    assert report.fixed is None


def test_a_multi_line_fix_in_a_quoted_block_keeps_the_markers(tmp_path):
    text = (
        "> ```python\n> import wandb_workspaces.reports.v2 as wr\n"
        '> wr.LinePlot(y=[\n>     "off_policy/mean",\n> ])\n> ```\n'
    )
    report = check(tmp_path, text)
    assert report.fixed == text.replace(
        '>     "off_policy/mean",\n', '>     "off_policy/mean",\n>     "staleness/rollout/mean",\n'
    )


# --- the rest of the file stays ---------------------------------------------------------------

PROSE = st.text(st.characters(blacklist_characters="`~>\r", blacklist_categories=("Cs",)))


@settings(max_examples=60, deadline=None)
@given(before=PROSE, after=PROSE, indent=st.sampled_from(["", "  ", "   "]))
def test_a_fix_changes_only_the_old_key(before, after, indent):
    block = (
        f"{indent}```toml\n{indent}[orchestrator]\n{indent}max_off_policy_steps = 8\n{indent}```\n"
    )
    text = f"{before}\n\n{block}\n{after}"
    checked = check_markdown("r.md", text, TARGETS)
    fixable = [f for f in checked.findings if f.fixable]
    assert len(fixable) == 1
    fixed = checked.fix_text(fixable)
    assert fixed == text.replace(
        f"{indent}max_off_policy_steps = 8", f"{indent}max_staleness = 8", 1
    )
    (finding,) = fixable
    assert text[finding.span[0] : finding.span[1]] == "max_off_policy_steps"


@pytest.mark.parametrize("odd", ["\f", "\v", "\x1c", "\x85", "\u2028", "\u2029"])
def test_a_block_ends_at_its_fence_whatever_else_breaks_a_line_in_it(tmp_path, odd):
    """CommonMark's lines end at line feeds; a form feed or `\u2028` in a block (three of
    them once put its end past the file's last line: an internal error) moves nothing."""
    text = (
        "# T\n\n```python\nimport wandb  # W&B{odd}\nwandb.log({{'off_policy/mean': 1}})\n```\n"
        "Set max_off_policy_steps in rl.toml.\n"
    )
    plain, odd_one = (check(tmp_path, text.format(odd=o)) for o in ("", odd * 3))
    assert found(odd_one) == found(plain) == [(5, 12, "renamed-metric"), (7, 5, "mention")]
    assert odd_one.fixed == plain.fixed.replace("W&B", f"W&B{odd * 3}")
