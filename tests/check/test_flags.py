"""Command-line flags: both spellings, whole flags only, every file kind that holds command
lines, in Markdown only inside code fences, and in YAML only fixes that keep the data."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from helpers import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate import find_mapping
from wbmigrate.check.config import CheckConfig
from wbmigrate.check.flags import check_flags
from wbmigrate.check.model import apply_fixes
from wbmigrate.check.run import check_file
from wbmigrate.check.suppress import Ignores
from wbmigrate.check.targets import Targets
from wbmigrate.engine.model import Options
from wbmigrate.mapping.load import load_mapping

TARGETS = Targets(find_mapping("prime-rl").migration(), Options())
RENAMES = {
    "--orchestrator.max-off-policy-steps": "--orchestrator.max-staleness",
    "--orchestrator.max_off_policy_steps": "--orchestrator.max_staleness",
    "--max-off-policy-steps": "--max-staleness",
    "--max_off_policy_steps": "--max_staleness",
}


def flags_in(text: str, label: str = "run.sh") -> list[str]:
    return [text[slice(*f.span)] for f in check_flags(label, text, TARGETS).findings]


def fixed(text: str, label: str = "run.sh") -> str | None:
    return apply_fixes(text, check_flags(label, text, TARGETS).findings)


def test_both_spellings_and_what_each_becomes():
    # The whole list is pinned for the 3-step mapping of 2026 (the bundled one has hundreds).
    small = load_mapping(FIXTURES / "mappings/valid/prime-rl-2026.yaml").migration()
    assert Targets(small, Options()).flags == RENAMES
    assert RENAMES.items() <= TARGETS.flags.items()


@pytest.mark.parametrize("old", sorted(RENAMES))
@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("run {} 8\n", "run {} 8\n"),  # a space, then the value
        ("run {}=8\n", "run {}=8\n"),
        ("run {}\n", "run {}\n"),  # the end of a line
        ("run {}", "run {}"),  # the end of the text
        ('args: ["{}", "8"]\n', 'args: ["{}", "8"]\n'),
        ("args: ['{}', '8']\n", "args: ['{}', '8']\n"),
        ('X="{}=8"\n', 'X="{}=8"\n'),
        ("run \\\n  {} \\\n  --x 1\n", "run \\\n  {} \\\n  --x 1\n"),
        ("run\t{}\t8\n", "run\t{}\t8\n"),
    ],
    ids=["space", "equals", "line-end", "text-end", "double-quote", "quote", "env", "cont", "tab"],
)
def test_each_spelling_is_found_and_fixed_in_its_own_spelling(old, before, after):
    assert fixed(before.format(old)) == after.format(RENAMES[old])


@pytest.mark.parametrize(
    "text",
    [
        "run --max-off-policy-steps-hint 3\n",  # another flag
        "run --max_off_policy_steps_hint=3\n",
        "run --orchestrator.max-off-policy-steps-hint 3\n",
        "run x--max-off-policy-steps 3\n",  # inside a word
        "run ---max-off-policy-steps 3\n",
        "run --trainer.max-off-policy-steps 3\n",  # another table's key
        "run --max-off-policy-steps.x 3\n",
        "run --max-off-policy-steps/x 3\n",
        "run --max-off-policy-steps:3\n",
        "run --max-off_policy-steps 3\n",  # mixed spelling: not one prime-rl writes
    ],
)
def test_whole_flags_only(text):
    assert flags_in(text) == []


def test_the_messages_name_both_spellings():
    text = "a --orchestrator.max_off_policy_steps=1 --max-off-policy-steps 2\n"
    messages = [f.message for f in check_flags("run.sh", text, TARGETS).findings]
    assert messages == [
        "--orchestrator.max_off_policy_steps -> --orchestrator.max_staleness (flag)",
        "--max-off-policy-steps -> --max-staleness (flag)",
    ]


# --- which files hold command lines ------------------------------------------------------------

SCRIPT = "uv run rl --orchestrator.max-off-policy-steps 8\n"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("run.sh", SCRIPT),
        ("run.bash", SCRIPT),
        ("run.zsh", SCRIPT),
        ("run.ksh", SCRIPT),
        ("train", "#!/bin/bash\n" + SCRIPT),  # a shebang, no extension
        ("train-env", "#!/usr/bin/env -S bash -eu\n" + SCRIPT),
        ("job.sbatch", "#!/bin/bash\n#SBATCH --nodes=2\n" + SCRIPT),
        ("job.slurm", "#!/bin/bash\n#SBATCH --orchestrator.max-off-policy-steps=8\n"),
        ("Makefile", "train:\n\t" + SCRIPT),
        ("GNUmakefile", "train:\n\t" + SCRIPT),
        ("rules.mk", "train:\n\t" + SCRIPT),
        ("Dockerfile", "FROM python:3.12\nRUN " + SCRIPT),
        ("train.Dockerfile", 'CMD ["uv", "run", "rl", "--orchestrator.max-off-policy-steps", "8"]'),
        ("Containerfile", "FROM python:3.12\nENV ARGS=--orchestrator.max-off-policy-steps=8\n"),
        ("justfile", "train:\n    " + SCRIPT),
        ("Justfile", "train:\n    " + SCRIPT),
        ("tasks.just", "train:\n    " + SCRIPT),
        ("Procfile", "orchestrator: " + SCRIPT),
        ("ci.yml", "jobs:\n  a:\n    steps:\n      - run: |\n          " + SCRIPT),
        ("README.md", "```sh\n" + SCRIPT + "```\n"),
    ],
)
def test_every_kind_of_file_with_command_lines(tmp_path, monkeypatch, name, text):
    monkeypatch.chdir(tmp_path)
    Path(name).write_text(text)
    report = check_file(Path(name), TARGETS, Ignores(), fixes=True)
    assert report is not None
    flags = [f for f in report.findings if f.message.endswith("(flag)")]
    assert len(flags) == 1, report.findings
    assert report.fixed is not None
    assert "--orchestrator.max-staleness" in report.fixed
    assert "max-off-policy-steps" not in report.fixed


# --- YAML: a fix keeps the data ----------------------------------------------------------------

K8S = """\
apiVersion: batch/v1
kind: Job
spec:
  template:
    spec:
      containers:
        - name: orchestrator
          args: ["--orchestrator.max-off-policy-steps", "16"]
          command:
            - uv
            - --max_off_policy_steps=8
          env:
            - name: EXTRA
              value: '--orchestrator.max-off-policy-steps 4'
            - name: FOLDED
              value: >-
                uv run rl
                --max-off-policy-steps=2
---
kind: ConfigMap
data:
  run.sh: |
    uv run rl \\
      --orchestrator.max-off-policy-steps "$STEPS"
  escaped: "--max-off-policy-steps\\t8"
  flow: {args: [--max-off-policy-steps, 8]}
"""


def renamed(data):
    """What every old flag in parsed data becomes (the oracle, written out plainly)."""
    if isinstance(data, str):
        for old in sorted(RENAMES, key=len, reverse=True):
            data = data.replace(old + " ", RENAMES[old] + " ").replace(
                old + "=", RENAMES[old] + "="
            )
            data = data.replace(old + "\t", RENAMES[old] + "\t")
            data = data.replace(old + "\n", RENAMES[old] + "\n")
            if data.endswith(old):
                data = data[: -len(old)] + RENAMES[old]
        return data
    if isinstance(data, dict):
        return {renamed(k): renamed(v) for k, v in data.items()}
    if isinstance(data, list):
        return [renamed(i) for i in data]
    return data


def test_flags_in_yaml_strings_of_every_style_are_fixed_and_the_data_kept():
    findings = check_flags("job.yaml", K8S, TARGETS).findings
    assert all(f.fixable for f in findings)
    assert len(findings) == 7
    after = apply_fixes(K8S, findings)
    assert after is not None
    assert list(yaml.safe_load_all(after)) == renamed(list(yaml.safe_load_all(K8S)))
    assert "off-policy" not in after.replace("off_policy", "")
    assert "off_policy" not in after


def test_a_yaml_fix_that_would_change_the_data_is_not_made():
    text = "--max-off-policy-steps: 1\n--max-staleness: 2\nrun: x --max-off-policy-steps 3\n"
    findings = check_flags("odd.yaml", text, TARGETS).findings
    assert [(f.line, f.fixable) for f in findings] == [(1, False), (3, True)]
    assert findings[0].message.endswith(
        "(not fixed: renaming it here would change the YAML's data)"
    )


def test_flags_in_yaml_that_does_not_parse_are_reported_not_fixed():
    findings = check_flags("bad.yaml", "run: [--max-off-policy-steps 8\n", TARGETS).findings
    assert [
        (f.fixable, f.message.endswith("(not fixed: the file is not valid YAML)")) for f in findings
    ] == [(False, True)]


def test_flags_in_yaml_too_deep_to_compare_are_reported_not_fixed_and_the_rest_kept(tmp_path):
    """libyaml reads it; comparing its data recursed past the stack, which made the whole file
    one `nested too deeply to read` finding and lost the flag's."""
    path = tmp_path / "compose.yaml"
    path.write_text("x: " + "[" * 600 + "]" * 600 + "\nrun: uv run --max-off-policy-steps 8\n")
    report = check_file(path, TARGETS, Ignores.of(CheckConfig()), fixes=True)
    assert report is not None
    assert [(f.line, f.rule.value, f.fixable) for f in report.findings] == [
        (1, "parse-error", False),
        (2, "renamed-config-key", False),
    ]
    assert report.findings[1].message.endswith(
        "(not fixed: the YAML is nested too deeply to compare)"
    )


_FLAG = st.sampled_from(sorted(RENAMES))
_WORD = st.text(alphabet="abcxyz0123456789 _./:", min_size=0, max_size=8)
_COMMAND = st.builds(
    lambda before, flag, sep, value: f"{before} {flag}{sep}{value}".strip(),
    _WORD,
    _FLAG,
    st.sampled_from([" ", "=", "\n", "\t"]),
    _WORD,
)
_SCALAR = st.one_of(_COMMAND, _WORD, st.integers(), st.booleans(), st.none())
_DATA = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(_WORD, _COMMAND), inner, max_size=4),
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    data=_DATA,
    style=st.sampled_from([None, '"', "'", "|", ">"]),
    flow=st.sampled_from([None, True, False]),
)
def test_fixing_flags_in_any_yaml_keeps_its_data(data, style, flow):
    """Whatever the YAML's shape and quoting style, every flag in it is fixed and the fixed
    file parses to the same data with its flags renamed (`renamed`, the plain oracle)."""
    text = yaml.safe_dump(data, default_style=style, default_flow_style=flow, allow_unicode=True)
    findings = check_flags("gen.yaml", text, TARGETS).findings
    assert all(f.fixable for f in findings)
    after = apply_fixes(text, findings)
    assert yaml.safe_load(after if after is not None else text) == renamed(yaml.safe_load(text))
