"""Strings read with the offset of each character and edited in their own style: JSON strings,
YAML quoted strings and block scalars."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate.check.embedded import json_string, yaml_string
from wbmigrate.edit.replacement import Replacement

# what strings holding JSON hold: quotes, backslashes, slashes, non-ASCII, emoji, tabs
CHARS = st.sampled_from([*"ab {}[]:,\"\\/'é—😀\t#-", "\n"])
VALUES = st.text(CHARS, min_size=1, max_size=30)


def read_back(text: str, found: list[tuple[int, int, str]] | None, load: object) -> object:
    out, at = [], 0
    for start, end, new in found or []:
        out += [text[at:start], new]
        at = end
    return load("".join(out) + text[at:])  # type: ignore[operator]


def yaml_value(text: str) -> object:
    return yaml.safe_load(text)["k"]


@settings(max_examples=300, deadline=None)
@given(VALUES, st.booleans(), st.data())
def test_a_json_string_is_read_char_by_char_and_edited_in_its_escapes(value, ascii_only, data):
    text = json.dumps({"k": value}, ensure_ascii=ascii_only)
    start = text.index('"', 5)
    string = json_string(text, start, len(text) - 1, value)
    assert string is not None
    assert len(string.offsets) == len(value) + 1
    for i, char in enumerate(value):  # each offset is where the character is written
        assert json.loads('"' + text[string.offsets[i] : string.offsets[i + 1]] + '"') == char
    a = data.draw(st.integers(0, len(value)))
    b = data.draw(st.integers(a, len(value)))
    piece = data.draw(VALUES)
    found = string.replacements(text, [Replacement(a, b, piece)])
    assert found is not None
    made = [(r.start, r.end, r.text) for r in found]
    assert read_back(text, made, json.loads)["k"] == value[:a] + piece + value[b:]
    if ascii_only:  # a file written in ASCII (escapes for the rest) stays so
        assert read_back(text, made, str).isascii()


@settings(max_examples=300, deadline=None)
@given(VALUES, st.sampled_from(['"', "'", "|", ">"]), st.data())
def test_a_yaml_string_is_edited_in_its_own_style(value, style, data):
    text = yaml.dump({"k": value}, default_style=style, allow_unicode=True)
    node = yaml.compose(text).value[0][1]
    string = yaml_string(text, node, value)
    if string is None:  # a style or a layout this is not safe for: never guessed
        return
    a = data.draw(st.integers(0, len(value)))
    b = data.draw(st.integers(a, len(value)))
    piece = data.draw(VALUES)
    found = string.replacements(text, [Replacement(a, b, piece)])
    if found is None:  # the piece does not fit the style (a line break in a folded block)
        return
    made = [(r.start, r.end, r.text) for r in found]
    assert read_back(text, made, yaml_value) == value[:a] + piece + value[b:]
    new_node = yaml.compose(read_back(text, made, str)).value[0][1]  # type: ignore[attr-defined]
    assert new_node.style == node.style


@pytest.mark.parametrize(
    ("text", "old", "new", "expected"),
    [
        ('k: "a \\u2014 b off"\n', "off", "on", 'k: "a \\u2014 b on"\n'),
        ("k: 'don''t off'\n", "off", "o'n", "k: 'don''t o''n'\n"),
        (
            'k: |\n  {\n    "m": ["x"]\n  }\n',
            '"x"',
            '"x", "y"',
            'k: |\n  {\n    "m": ["x", "y"]\n  }\n',
        ),
        ('k: |-\n  {\n  "m": 1\n  }\n', "1", "[\n1\n]", 'k: |-\n  {\n  "m": [\n  1\n  ]\n  }\n'),
        ('k: >-\n  {"a":\n  1}\n', "1", "2", 'k: >-\n  {"a":\n  2}\n'),
    ],
)
def test_edits_keep_the_bytes_around_them(text, old, new, expected):
    node = yaml.compose(text).value[0][1]
    value = yaml.safe_load(text)["k"]
    string = yaml_string(text, node, value)
    assert string is not None
    start = value.index(old)
    found = string.replacements(text, [Replacement(start, start + len(old), new)])
    assert found is not None
    assert read_back(text, [(r.start, r.end, r.text) for r in found], str) == expected


@pytest.mark.parametrize(
    "text",
    [
        "k: |2\n   x\n",  # an indentation indicator
        "k: >\n  a\n\n  b\n",  # a folded block with an empty line
        'k: "a\n  b"\n',  # a quoted string over two lines
        "k: plain\n",
    ],
)
def test_styles_not_edited_safely_are_left_alone(text):
    node = yaml.compose(text).value[0][1]
    assert yaml_string(text, node, yaml.safe_load(text)["k"]) is None
