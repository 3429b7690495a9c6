"""The escaping of text from elsewhere before a report lays it out."""

from __future__ import annotations

import json

import pytest

from wbmigrate.report.words import code, markdown, terminal_safe


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("train/loss", "train/loss"),
        ("a|b", "a\\|b"),
        ("ends in \\", "ends in \\\\"),  # else it would escape the cell's closing `|`
        ("[x](https://evil.example)", "[x]\\(https://evil.example)"),
        ("![i](https://evil.example/i.png)", "![i]\\(https://evil.example/i.png)"),
        ("`code`", "\\`code\\`"),
        ("<img src=x>", "&lt;img src=x>"),
        ("two\nlines\u202e", "two\\\\nlines\\\\u202e"),
    ],
)
def test_markdown_text_is_inert(text, expected):
    assert markdown(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("VmlldzoxMDc=", "`VmlldzoxMDc=`"),
        ("a`b", "``a`b``"),
        ("``x", "``` ``x ```"),
    ],
)
def test_a_code_span_is_fenced_by_more_backticks_than_it_holds(text, expected):
    assert code(text) == expected


def test_terminal_safe_escapes_what_a_terminal_acts_on_and_json_reads_it_back():
    value = {"title": "a\x1b[2J\r\u202e\x7f\U000e0041\u2028b", "tab": "\t"}
    printed = terminal_safe(json.dumps(value, ensure_ascii=False) + "\n\tkept\n")
    assert all(ch.isprintable() or ch in "\n\t" for ch in printed)
    assert json.loads(printed.splitlines()[0]) == value
    assert printed.endswith("\n\tkept\n")
