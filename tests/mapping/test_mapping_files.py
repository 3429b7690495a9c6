"""Every mapping file in the repository, run as a folder.

`mappings/` must load cleanly. Each file under fixtures/mappings/invalid breaks one rule and
says so on its first line (`# expect-error: CODE at line N`); files under valid/ may carry an
expected warning the same way.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers import FIXTURES, REPO

from wbmigrate.errors import Level, WbmigrateError
from wbmigrate.mapping import MappingError
from wbmigrate.mapping.load import bundled_dir, bundled_ids, load_mapping

EXPECT = re.compile(r"# expect-(error|warning): ([a-z-]+) at line (\d+)")
INVALID = sorted((FIXTURES / "mappings/invalid").glob("*.yaml"))
VALID = sorted((FIXTURES / "mappings/valid").glob("*.yaml"))


def _expectation(path: Path) -> tuple[str, int]:
    match = EXPECT.match(path.read_text())
    assert match, f"{path.name} must start with an expectation comment"
    return match.group(2), int(match.group(3))


@pytest.mark.parametrize("path", sorted((REPO / "mappings").glob("*.yaml")), ids=lambda p: p.name)
def test_bundled_mapping_loads(path):
    mapping = load_mapping(path)
    assert mapping.id == path.stem
    assert not [w for w in mapping.warnings if w.level is Level.ERROR]


def test_bundled_ids_match_the_folder():
    assert bundled_ids() == sorted(p.stem for p in (REPO / "mappings").glob("*.yaml"))
    assert "prime-rl" in bundled_ids()
    assert (bundled_dir() / "prime-rl.yaml").read_bytes() == (
        REPO / "mappings/prime-rl.yaml"
    ).read_bytes()


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_mapping(path):
    code, line = _expectation(path)
    with pytest.raises(MappingError) as caught:
        load_mapping(path)
    problems = caught.value.problems
    assert [(p.code, p.line) for p in problems] == [(code, line)]
    assert str(problems[0]).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_mapping(path):
    mapping = load_mapping(path)
    match = EXPECT.match(path.read_text())
    expected = [(match.group(2), int(match.group(3)))] if match else []
    assert [(w.code, w.line) for w in mapping.warnings] == expected


def test_every_rule_has_a_case():
    codes = {_expectation(p)[0] for p in INVALID + VALID if EXPECT.match(p.read_text())}
    assert codes >= {
        "unknown-field",
        "duplicate-old-key",
        "cycle",
        "rename-into-removed",
        "empty-name",
        "many-to-one",
        "chain-in-step",
        "name-reused",
        "not-retired",
        "missing-field",
        "wrong-type",
        "bad-url",
        "duplicate-version",
        "step-order",
        "format-version",
        "yaml-syntax",
        "bad-equivalent",
        "bad-flag",
        "no-steps",
        "bad-id",
        "distinct-merged",
        "distinct-size",
        "distinct-duplicate",
        "distinct-unknown",
    }


def test_not_utf8(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("title: caf\xe9\n".encode("latin-1"))
    with pytest.raises(MappingError, match=r"latin1.yaml:1: mapping is not UTF-8"):
        load_mapping(path)


@pytest.mark.parametrize("text", ["", "just a string\n", "- a list\n"])
def test_not_a_mapping_document(tmp_path, text):
    path = tmp_path / "m.yaml"
    path.write_text(text)
    with pytest.raises(MappingError, match=r"m.yaml:1: mapping file must be a YAML mapping"):
        load_mapping(path)


def test_a_file_read_again_is_parsed_again_only_when_its_text_changed(tmp_path):
    """One process reads a mapping once per text: the same text gives the same Mapping (and
    the same composed Migration), an edited file a new one."""
    path = tmp_path / "m.yaml"
    path.write_bytes((bundled_dir() / "prime-rl.yaml").read_bytes())
    first = load_mapping(path)
    assert load_mapping(path) is first
    assert first.migration() is first.migration()
    assert first.migration(to=first.versions[0]) is not first.migration()
    text = path.read_text()
    path.write_text(text.replace("  off_policy/mean:", "  off_policy/edited:", 1))
    edited = load_mapping(path)
    assert edited is not first
    assert "off_policy/edited" in edited.migration().old_names
    assert "off_policy/edited" not in first.migration().old_names


def test_a_fifo_named_as_a_mapping_is_refused_never_waited_on(tmp_path):
    fifo = tmp_path / "mapping.yaml"
    os.mkfifo(fifo)  # opened as a file, it would wait for a writer forever
    with pytest.raises(WbmigrateError, match=r"^cannot read mapping .*: not a regular file$"):
        load_mapping(fifo)


def test_a_folder_named_as_a_mapping_is_refused_as_before(tmp_path):
    with pytest.raises(WbmigrateError, match=r"^cannot read mapping .*: Is a directory$"):
        load_mapping(tmp_path)
