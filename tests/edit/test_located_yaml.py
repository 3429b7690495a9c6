"""libyaml reads YAML for `check` and `plan DIR` as the pure-Python parser would: the same nodes
at the same marks, offsets in characters included, and the pure-Python parser's errors."""

from __future__ import annotations

import pytest
import yaml
from helpers import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate.edit import located_yaml
from wbmigrate.edit.located_yaml import FAST_LOADER, load_located_all

pytestmark = pytest.mark.skipif(FAST_LOADER is yaml.SafeLoader, reason="pyyaml without libyaml")


def at(node: yaml.Node) -> tuple[int, ...]:
    """A node's start and end marks: offset, line, column."""
    start, end = node.start_mark, node.end_mark
    return (start.index, start.line, start.column, end.index, end.line, end.column)


def nodes(text: str, loader: type[yaml.SafeLoader]) -> list[tuple[object, ...]]:
    """Every node of every document, in order: kind, tag, scalar value and style, flow style
    and both marks. A plain scalar's style is "" from libyaml, None from Python, and an
    indentless sequence's flow style False and None: the readers ask only whether they are
    set."""
    found: list[tuple[object, ...]] = []

    def walk(node: yaml.Node) -> None:
        if isinstance(node, yaml.ScalarNode):
            found.append(("scalar", node.tag, node.value, node.style or None, *at(node)))
            return
        found.append((type(node).__name__, node.tag, bool(node.flow_style), *at(node)))
        for item in node.value:
            for part in item if isinstance(node, yaml.MappingNode) else (item,):
                walk(part)

    for document in yaml.compose_all(text, Loader=loader):
        if document is not None:
            walk(document)
    return found


def same_nodes(text: str) -> None:
    assert nodes(text, FAST_LOADER) == nodes(text, yaml.SafeLoader)


TEXTS = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\t\n:-#'\""))
DATA = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXTS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXTS, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(DATA, min_size=1, max_size=3),
    st.sampled_from([None, True, False]),
    st.booleans(),
    st.sampled_from([2, 4]),
    st.sampled_from([20, 80]),
)
def test_both_parsers_give_the_same_nodes(documents, flow, unicode, indent, width):
    text = yaml.safe_dump_all(
        documents, default_flow_style=flow, allow_unicode=unicode, indent=indent, width=width
    )
    same_nodes(text)


@pytest.mark.parametrize(
    "text",
    [
        'a: "é😀x"\nb: héllo😀 wörld\nc: [1, "😀"]\n---\nd: {e: f}\n',
        "a: b\r\nc:\r\n  - d\r\n",
        "k: v\rz: w\n",
        'x:\n  - "a\\u00e9"\n  - |\n    multi 😀\n    line\n  - >-\n    folded é\n    text\n',
        "base: &b\n  k: 1\nm:\n  <<: *b\n  j: 2 # a comment 😀\n",
        "k: 'it''s'\nj: !!str 1\nl: ~\n...\n",
        "%YAML 1.1\n---\n? complex key\n: value\n? [a, b]\n: c\nplain: this is\n  a multi"
        '\n  line\nind: |2\n    indented\n  text\nflow: {a: 1, b: [x, {c: d}], "q": e}\n',
    ],
    ids=[
        "unicode",
        "crlf",
        "lone-cr",
        "block-scalars",
        "anchors-merge",
        "quotes-tags-end",
        "directive-explicit-keys-flow",
    ],
)
def test_named_texts_give_the_same_nodes(text):
    same_nodes(text)


def located(text: str) -> list[tuple[object, ...]]:
    """What `load_located_all` gives, as comparable data: each document's values, lines, and
    the marks of every node and key it records."""
    return [
        (
            repr(document.data),
            document.key_lines,
            document.value_lines,
            {path: at(node) for path, node in document.nodes.items()},
            {path: at(node) for path, node in document.key_nodes.items()},
            [(path, at(node)) for path, node in document.aliases],
            document.problems,
        )
        for document in load_located_all(text)
    ]


def located_or_error(text: str) -> object:
    try:
        return located(text)
    except yaml.YAMLError as exc:
        return str(exc)


def as_python_reads(text: str, monkeypatch: pytest.MonkeyPatch) -> object:
    """`located_or_error(text)` from the pure-Python parser alone."""
    with monkeypatch.context() as patch:
        patch.setattr(located_yaml, "FAST_LOADER", yaml.SafeLoader)
        return located_or_error(text)


@pytest.mark.parametrize(
    "text",
    ["\ufeffa: b\n", "a: \ufeffb\n", "a: b", "a: [b]\n---", "a: 'x\ty'\n"],
    ids=[
        "byte-order-mark",
        "inner-byte-order-mark",
        "no-last-line-break",
        "empty-last-document",
        "tab",
    ],
)
def test_what_libyaml_places_otherwise_is_read_by_python(text, monkeypatch):
    """libyaml counts no offset for a byte-order mark, and puts the end of a text without a
    last line break on a line after it."""
    assert located(text) == as_python_reads(text, monkeypatch)


def test_every_yaml_file_of_the_fixtures_is_read_as_python_reads_it(monkeypatch):
    """Real shapes: workspaces, sweeps, configs, CI workflows, mappings, anchors and merge
    keys (a pyyaml or libyaml release whose parsers part shows here)."""
    files = [p for p in sorted(FIXTURES.rglob("*")) if p.suffix in (".yaml", ".yml")]
    assert len(files) > 100
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert located_or_error(text) == as_python_reads(text, monkeypatch), path


@pytest.mark.parametrize(
    "text",
    [
        "a: b: c\n",
        "a: 'open\n",
        "a:\n\tb: 1\n",
        "- a\nb: c\n",
        "a: [1\n",
        "a: \ud800\n",
        "a:\tb\n",  # libyaml reads these two
        "a: |#c\n  x\n",
    ],
    ids=[
        "two-colons",
        "open-quote",
        "tab-indent",
        "sequence-then-key",
        "open-flow",
        "lone-surrogate",
        "tab-after-colon",
        "comment-after-indicator",
    ],
)
def test_an_error_is_the_python_parsers(text):
    with pytest.raises(yaml.YAMLError) as python:
        list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    with pytest.raises(yaml.YAMLError) as ours:
        load_located_all(text)
    assert str(ours.value) == str(python.value)
