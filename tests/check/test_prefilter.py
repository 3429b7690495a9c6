"""The prefilter: which files `check` looks at closely. Old names, keys built at run time,
escapes, brace shorthand and regex fields with a value go on; look-alikes and empty regex fields
do not. Whatever it passes over, the checkers would have found nothing in, and the whole
spellings it hands on are the residual pass's own."""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Iterator
from unittest import mock

import pytest
import yaml
from helpers import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import MODES, SPECS

from wbmigrate import files, find_mapping
from wbmigrate.check import documents
from wbmigrate.check.model import FileReport, Rule
from wbmigrate.check.prefilter import Prefilter, Scan
from wbmigrate.check.run import check_file
from wbmigrate.check.suppress import Ignores
from wbmigrate.check.targets import REGEX_SPEC_KEYS, Targets
from wbmigrate.edit import located_yaml
from wbmigrate.edit import yaml as edit_yaml
from wbmigrate.engine.model import Mode, Options

MIGRATION = find_mapping("prime-rl").migration()
TARGETS = Targets(MIGRATION, Options())
PREFILTER = TARGETS.prefilter
SPELLINGS = TARGETS.spelling_pattern
assert SPELLINGS is not None


def goes_on(text: str, spec_like: bool = True) -> bool:
    return PREFILTER.scan(text.encode(), spec_like) is not None


@pytest.mark.parametrize(
    "text",
    [
        '{"metrics": ["off_policy/mean"]}',
        '{"x": "summary:off_policy/mean"}',
        "The off_policy/mean plot.",  # a full stop ends the sentence
        "max_off_policy_steps = 8",
        "self.max_off_policy_steps",
        "uv run rl --orchestrator.max-off-policy-steps 8",
        'run.log({f"off_policy/{split}/mean": 1})',
        'run.log({"off_policy/" + split + "/max": 1})',
        'run.log({"off_policy/%s/mean" % split: 1})',
        'run.log({"off_policy" "/mean": 1})',
        '"source": "# Title\\noff_policy/mean is plotted"',
        '{"m": "off_policy\\/mean"}',
        '{"m": "dispatcher\\/off_policy_level\\/max"}',
        "'max_off_policy\\x5fsteps'",
        "off_policy/{mean,max}",
        "{dispatcher,x}/off_policy/mean",
        '{"metricRegex": "off_.*"}',
        '{"searchQuery": "(?i)OFF"}',
        '{"searchHistory": [{"query": ".*"}]}',
        "searchQuery:\n  off_.*\n",
        '"{\\"searchQuery\\": \\"off\\"}"',
    ],
    ids=[
        "json-value",
        "accessor",
        "prose",
        "toml-key",
        "attribute",
        "flag",
        "f-string",
        "concatenation",
        "percent-format",
        "implicit-concatenation",
        "after-newline-escape",
        "escaped-slash",
        "escape-before-anchor",
        "python-escape",
        "brace-shorthand",
        "brace-before-anchor",
        "metric-regex",
        "search-query",
        "search-history",
        "yaml-value-on-next-line",
        "json-in-a-string",
    ],
)
def test_what_may_hold_an_old_name_goes_on(text):
    assert goes_on(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"metrics": ["eval/off_policy/mean"]}',
        '{"metrics": ["off_policy/mean_smoothed"]}',
        "--orchestrator.max-off-policy-steps-hint 8",
        "trainer.max_off_policy_stepsize = 1",
        '{"searchQuery": "", "searchHistory": []}',
        '{\n  "searchQuery": "",\n  "metricRegex": null\n}\n',
        "searchQuery: ''\nsearchHistory: []\nmetricRegex: ~\n",
        '"{\\"searchQuery\\": \\"\\"}"',
        '"source": "# Title\\neval/off_policy/mean is plotted"',
        '{"metrics": ["train/loss"]}',
        "",
    ],
    ids=[
        "prefixed",
        "suffixed",
        "longer-flag",
        "longer-key",
        "empty-regex-fields",
        "empty-regex-fields-indented",
        "empty-regex-fields-yaml",
        "empty-json-in-a-string",
        "look-alike-after-escape",
        "nothing",
        "empty",
    ],
)
def test_look_alikes_and_empty_regex_fields_stay_out(text):
    assert not goes_on(text)


def test_regex_fields_count_only_where_specs_may_be():
    assert goes_on('{"metricRegex": ".*"}', spec_like=True)
    assert not goes_on('metricRegex = ".*"', spec_like=False)


def test_the_whole_spellings_are_handed_on_with_their_offsets():
    text = b'{"a": "off_policy/mean", "b": "eval/off_policy/max", "c": "x.max_off_policy_steps"}'
    scan = PREFILTER.scan(text)
    assert scan == Scan(((7, 22, "off_policy/mean"), (61, 81, "max_off_policy_steps")))


def test_offsets_of_bytes_are_not_handed_on_for_text_beyond_ascii():
    assert PREFILTER.scan('"café", "off_policy/mean"'.encode()) == Scan(None)


def test_a_name_without_an_anchor_is_its_own():
    prefilter = Prefilter(["a/b", "off_policy/x"], ["off_policy"], REGEX_SPEC_KEYS)
    assert prefilter.scan(b"see a/b") == Scan(((4, 7, "a/b"),))


# --- properties: nothing is lost ----------------------------------------------------------------

OLD = sorted(TARGETS.spellings)
PIECES = st.sampled_from(
    [
        *OLD,
        *(f"eval/{n}" for n in OLD[:6]),
        *(f"{n}_smoothed" for n in OLD[:6]),
        "off_policy/",
        "off_policy",
        "dispatcher/off_policy",
        "off_policy/{mean,max}",
        "{dispatcher,x}/",
        "\\n",
        "\\/",
        "\\u00e9",
        "{",
        "}",
        "%s",
        ",",
        ".",
        " ",
        "-",
        "/",
        "_",
        "x",
        "eval",
        "searchQuery",
        "metricRegex",
    ]
)
SNIPPETS = st.lists(PIECES, max_size=8).map("".join)


def _documents(snippet: str) -> dict[str, str]:
    """The snippet in a file of each kind `check` reads, where each may hold it."""
    return {
        "spec.json": json.dumps(
            {"blocks": [], "metrics": [snippet], "searchQuery": snippet, snippet: 1}, indent=2
        ),
        "config.yaml": yaml.safe_dump({"metrics": [snippet], "metricRegex": snippet}),
        "log.py": (
            f"import wandb\n# {snippet}\nrun = wandb.init()\n"
            f"run.log({{{snippet!r}: 1, f{snippet!r}: 2, {snippet!r} + x: 3}})\n"
        ),
        "README.md": f"# Notes\n\n{snippet}\n\n```sh\nuv run rl {snippet}\n```\n",
        "rl.toml": f"[orchestrator]\nname = {json.dumps(snippet)}\n# {snippet}\n",
        "run.sh": f"#!/bin/bash\nuv run rl {snippet} 8\n",
        "notes.txt": snippet,
        "plots.ipynb": json.dumps(
            {
                "cells": [
                    {"cell_type": "markdown", "metadata": {}, "source": f"# Plots\n{snippet}"},
                    {
                        "cell_type": "code",
                        "metadata": {},
                        "outputs": [],
                        "source": [f"# {snippet}\n", f"run.log({{{snippet!r}: 1}})"],
                    },
                ],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        ),
        "view.json": json.dumps({"spec": json.dumps({"section": {"name": snippet}})}),
    }


class _AnchorsOnly:
    """The prefilter as it was: every file holding an anchor goes on."""

    def scan(self, data: bytes, spec_like: bool = False, *_: bool, **__: bool) -> Scan | None:
        text = data.decode("utf-8", errors="replace")
        return Scan(None) if TARGETS.may_contain(text, spec_like=spec_like) else None


def _results(report: FileReport | None) -> object:
    return None if report is None else (report.findings, report.fixed)


def _only_broken(report: FileReport | None) -> bool:
    """A file whose only result is that it does not parse: a parse error is told only of a
    file that may hold an old name (once an anchor was enough)."""
    findings = report.findings if report is not None else ()
    return bool(findings) and all(f.rule is Rule.PARSE_ERROR for f in findings)


@functools.cache
def _targets(mode: Mode) -> tuple[Targets, Targets]:
    """wbmigrate's targets for `mode`, and the same looking at every file that holds an anchor:
    made once per mode (their patterns take a second to compile with the whole-history
    mapping), as one `check` makes them once."""
    ours, theirs = Targets(MIGRATION, Options(mode=mode)), Targets(MIGRATION, Options(mode=mode))
    theirs.__dict__["prefilter"] = _AnchorsOnly()
    return ours, theirs


@contextlib.contextmanager
def _composed_once() -> Iterator[None]:
    """Each YAML text composed once, not once a side: both sides read the same file, then read
    back the same fixed text (composing in pure Python is most of a YAML file's check). The
    same nodes and values serve both: a side that changed them would fail the comparison."""
    once = functools.lru_cache(maxsize=8)(located_yaml.load_located_all)
    with contextlib.ExitStack() as stack:
        for module in (files, documents, edit_yaml):
            stack.enter_context(mock.patch.object(module, "load_located_all", once))
        yield


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(snippet=SNIPPETS, dual=st.booleans())
def test_no_file_it_passes_over_would_have_had_a_result(tmp_path_factory, snippet, dual):
    """Against the anchors alone: every file gets the very same findings and fixes."""
    ours, theirs = _targets(Mode.DUAL if dual else Mode.REPLACE)
    folder = tmp_path_factory.mktemp("files")
    for name, text in _documents(snippet).items():
        path = folder / name
        path.write_text(text)
        with _composed_once():
            expected = check_file(path, theirs, Ignores(), fixes=True)
            found = check_file(path, ours, Ignores(), fixes=True)
        passed_over = ours.prefilter.scan(text.encode(), True) is None
        if not (passed_over and _only_broken(expected)):
            assert _results(found) == _results(expected), name


def _spec_files(spec: object) -> dict[str, str]:
    """A W&B spec as a JSON and a YAML file, in a Markdown code block and kept as JSON text."""
    text = json.dumps(spec, indent=2)
    return {
        "spec.json": text,
        "spec.yaml": yaml.safe_dump(spec),
        "SPEC.md": f"# A spec\n\n```json\n{text}\n```\n",
        "saved.json": json.dumps({"name": "view", "spec": json.dumps(spec)}),
    }


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(spec=SPECS, mode=MODES)
def test_no_spec_it_passes_over_would_have_had_a_result(tmp_path_factory, spec, mode):
    """W&B specs with old names, look-alikes and regex fields (empty or not), against the
    anchors alone."""
    ours, theirs = _targets(mode)
    folder = tmp_path_factory.mktemp("specs")
    for name, text in _spec_files(spec).items():
        path = folder / name
        path.write_text(text)
        with _composed_once():
            expected = check_file(path, theirs, Ignores(), fixes=True)
            found = check_file(path, ours, Ignores(), fixes=True)
        assert _results(found) == _results(expected), name


@settings(max_examples=300, deadline=None)
@given(text=SNIPPETS)
def test_the_names_handed_on_are_those_the_residual_pass_finds(text):
    scan = PREFILTER.scan(text.encode())
    expected = tuple((m.start(), m.end(), m.group()) for m in SPELLINGS.finditer(text))
    if scan is None:
        assert expected == ()
    else:
        assert scan.names == expected  # (ASCII)


@settings(max_examples=300, deadline=None)
@given(text=SNIPPETS)
def test_the_residual_pattern_finds_what_one_alternative_a_name_found(text):
    """The trie, with the boundary looked at after a name's first character, against the
    pattern it replaced: every name an alternative, longest first, the boundary first."""
    alternatives = "|".join(map(re.escape, sorted(TARGETS.spellings, key=len, reverse=True)))
    plain = re.compile(rf"(?<![\w/-])(?:{alternatives})(?![\w/-])")
    found = [m.span() for m in SPELLINGS.finditer(text)]
    assert found == [m.span() for m in plain.finditer(text)]


def test_files_of_the_operator_repo_that_hold_old_names_all_go_on():
    for path in sorted(p for p in (FIXTURES / "operator-repo").rglob("*") if p.is_file()):
        data = path.read_bytes()
        if any(name.encode() in data for name in OLD):
            assert PREFILTER.scan(data, spec_like=True) is not None, path
