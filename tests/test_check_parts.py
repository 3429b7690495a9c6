"""The parts of `check`: the TOML key scanner, Python patterns, flags in Markdown, YAML edits,
discovery, and the anchors that let `check` skip files."""

from __future__ import annotations

import random

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate import find_mapping
from wbmigrate.check.documents import minimal
from wbmigrate.check.flags import check_flags
from wbmigrate.check.model import apply_fixes
from wbmigrate.check.python_code import check_python
from wbmigrate.check.targets import Targets
from wbmigrate.check.toml_config import check_toml, keys
from wbmigrate.edit.edits import AddKey, Delete, Insert, RenameKey, Set, materialize
from wbmigrate.edit.located_yaml import load_located
from wbmigrate.edit.yaml import apply, replacements
from wbmigrate.engine.model import Mode, Options
from wbmigrate.names import cover

TARGETS = Targets(find_mapping("prime-rl").migration(), Options())
REPLACE = Targets(find_mapping("prime-rl").migration(), Options(mode=Mode.REPLACE))


# --- TOML -------------------------------------------------------------------------------------

TOML = '''\
# max_off_policy_steps = 1 in a comment
title = "max_off_policy_steps = 2 in a string"
doc = """
max_off_policy_steps = 3 in a multi-line string
"""
[orchestrator]
"max_off_policy_steps" = 16
[[envs]]
id = "a"
[trainer.orchestrator]
max_off_policy_steps = 4
[tables]
inline = { orchestrator = { max_off_policy_steps = 5 } }
'''


def test_toml_keys_in_every_form():
    found = {(k.path, TOML[k.start : k.end]) for k in keys(TOML)}
    assert (("orchestrator", "max_off_policy_steps"), '"max_off_policy_steps"') in found
    assert (("trainer", "orchestrator", "max_off_policy_steps"), "max_off_policy_steps") in found
    assert (
        ("tables", "inline", "orchestrator", "max_off_policy_steps"),
        "max_off_policy_steps",
    ) in found
    assert (("envs", "id"), "id") in found
    assert not any(path == ("max_off_policy_steps",) for path, _ in found)


def test_toml_only_the_orchestrator_key_is_renamed_and_quotes_stay():
    checked = check_toml("rl.toml", TOML, TARGETS)
    assert [(f.line, f.message) for f in checked.findings] == [
        (7, "orchestrator.max_off_policy_steps -> orchestrator.max_staleness (config key)")
    ]
    fixed = apply_fixes(TOML, checked.findings)
    assert fixed == TOML.replace('"max_off_policy_steps" = 16', '"max_staleness" = 16')


def test_toml_dotted_key_at_the_top():
    text = "orchestrator.max_off_policy_steps = 8  # eight\n"
    fixed = apply_fixes(text, check_toml("rl.toml", text, TARGETS).findings)
    assert fixed == "orchestrator.max_staleness = 8  # eight\n"


# --- Python -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ('run.log({f"off_policy{suffix}/mean": 1})', True),
        ('key = "off_policy/" + name + "/max"', True),
        ('key = "dispatcher/%s" % name', True),
        ('key = "off_policy/{}/mean".format(name)', True),
        ('key = f"{prefix}/mean"', False),  # no namespace of an old name: too vague to report
        ('key = f"eval/{name}"', False),
        ('key = f"off_policy/{x}_smoothed"', False),  # cannot end like an old name
    ],
)
def test_python_keys_built_at_run_time(source, flagged):
    findings = check_python("x.py", source + "\n", TARGETS).findings
    assert [f.rule.value for f in findings] == (["needs-review"] if flagged else [])


@pytest.mark.parametrize(
    ("source", "fixed"),
    [
        ('y = ["off_policy/max"]', 'y = ["off_policy/max", "staleness/rollout/max"]'),
        ("y = ('off_policy/max',)", "y = ('off_policy/max', 'staleness/rollout/max',)"),
        ('y = ["off_policy/max", "staleness/rollout/max"]', None),
        ('x = "summary:off_policy/max"', 'x = "summary:staleness/rollout/max"'),
        ("cfg = Config(max_off_policy_steps=8)", "cfg = Config(max_staleness=8)"),
        ("bound = config.max_off_policy_steps", "bound = config.max_staleness"),
        ('f = "${off_policy/max} * 2"', 'f = "${staleness/rollout/max} * 2"'),
        ('s = "Metric(\\"off_policy/max\\") > 1"', 's = "Metric(\\"staleness/rollout/max\\") > 1"'),
        ('s = "caf\\u00e9 off_policy/max"', None),  # a mention in text, not a name
        ('a = b"off_policy/max"', None),  # bytes are not metric names
    ],
)
def test_python_fixes(source, fixed):
    findings = check_python("x.py", source + "\n", TARGETS).findings
    result = apply_fixes(source + "\n", findings)
    assert (result.rstrip("\n") if result else None) == fixed


def test_python_replace_mode_swaps_in_lists():
    source = 'y = ["off_policy/max", "loss"]\n'
    assert apply_fixes(source, check_python("x.py", source, REPLACE).findings) == (
        'y = ["staleness/rollout/max", "loss"]\n'
    )


def test_python_positions_count_characters_not_bytes():
    source = 'title = "é"; y = ["off_policy/max"]\n'
    (finding,) = check_python("x.py", source, TARGETS).findings
    assert (finding.line, finding.column) == (1, 19)


# --- flags ------------------------------------------------------------------------------------


def test_flags_in_markdown_only_inside_code_fences():
    text = (
        "Use `--max-off-policy-steps` wisely.\n\n```bash\nrun --max-off-policy-steps 3\n```\n"
        "\n    indented --max-off-policy-steps\n"
    )
    findings = check_flags("r.md", text, TARGETS, markdown=True).findings
    assert [(f.line, f.column) for f in findings] == [(4, 5)]


# --- YAML edits -------------------------------------------------------------------------------

SCALARS = st.sampled_from(["a", "off_policy/mean", "x y", "1", "true", "é"])
YAML_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=4),
        st.dictionaries(st.sampled_from(["k", "m", "n"]), inner, min_size=1, max_size=3),
    ),
    max_leaves=12,
)


def _walk(value, path=()):
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _walk(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _walk(child, (*path, i))


def _edits(document, rng):
    edits, claimed = [], []
    for path, value in rng.sample(list(_walk(document)), k=min(3, len(list(_walk(document))))):
        if any(path[: len(c)] == c or c[: len(path)] == path for c in claimed):
            continue
        if isinstance(value, list):
            edits.append(Insert((*path, rng.randint(0, len(value))), rng.choice(["new", {"a": 1}])))
        elif isinstance(value, dict) and "added" not in value:
            key = rng.choice(list(value))
            edits.append(
                AddKey((*path, "added"), ["v"], after=key)
                if rng.random() < 0.5
                else RenameKey((*path, key), "renamed")
                if "renamed" not in value
                else Delete((*path, key))
            )
        elif isinstance(value, str) and path:
            edits.append(Set(path, "replaced/value") if rng.random() < 0.7 else Delete(path))
        else:
            continue
        claimed.append(path)
    return edits


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["root", "list", "map"]), YAML_VALUES, min_size=1),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_yaml_edits_parse_back_as_the_edited_value(document, flow, rng):
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True, sort_keys=False)
    edits = _edits(document, random.Random(rng.random()))
    found = replacements(text, load_located(text), edits)
    if found is None:
        REFUSED.append(edits)  # refused, never guessed
        return
    assert yaml.safe_load(apply(text, found)) == materialize(document, edits)


REFUSED: list[object] = []


@pytest.mark.parametrize(
    ("text", "edits", "expected"),
    [
        (
            "a:\n  - x  # keep\n  - y\n",
            [Insert(("a", 1), "new")],
            "a:\n  - x  # keep\n  - new\n  - y\n",
        ),
        ("a:\n  - x\n", [Insert(("a", 1), "yes")], 'a:\n  - x\n  - "yes"\n'),  # not a boolean
        ("a: [x, 'y']\n", [Insert(("a", 2), "z"), Set(("a", 1), "q")], "a: [x, 'q', 'z']\n"),
        (
            "m:\n  k: 1\n  j: 2\n",
            [AddKey(("m", "new"), {"x": 1}, after="k")],
            'm:\n  k: 1\n  new: {"x": 1}\n  j: 2\n',
        ),
        ("m:\n  k: 1\n  j: 2\n", [Delete(("m", "k"))], "m:\n  j: 2\n"),
        ("l:\n- k: a\n  m: b\n- c\n", [Delete(("l", 0, "k"))], "l:\n- m: b\n- c\n"),
        ("l:\n- only\nz: 1\n", [Delete(("l", 0))], "l: []\nz: 1\n"),
        ('m: {"a": 1}\n', [RenameKey(("m", "a"), "b")], 'm: {"b": 1}\n'),
    ],
)
def test_yaml_edit_cases(text, edits, expected):
    found = replacements(text, load_located(text), edits)
    assert found is not None
    assert apply(text, found) == expected


# --- anchors ----------------------------------------------------------------------------------


def test_anchors_cover_every_name_with_few_substrings():
    assert TARGETS.anchors == ("off_policy", "max-off-policy-steps")
    assert cover(["a/loss", "b/loss", "c/acc"]) == ("loss", "acc")
    for name in [*TARGETS.migration.old_names, *TARGETS.flags, *TARGETS.config_keys]:
        assert any(anchor in name for anchor in TARGETS.anchors)


# --- the one replacement a fix makes ----------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(
    st.text("ab,[]", max_size=30),
    st.text("ab,[]", max_size=30),
    st.text("ab,[]", max_size=30),
    st.text("ab,[]", max_size=8),
    st.tuples(st.integers(0, 80), st.integers(0, 80)),
)
def test_minimal_replacement_is_exact_and_smallest(head, tail, middle, other, hint):
    text, new = head + middle + tail, head + other + tail
    (found,) = minimal(text, new, (min(hint), max(hint)))  # any hint: right, wrong or outside
    assert text[: found.start] + found.text + text[found.end :] == new
    # nothing more could be kept: the replaced parts differ at both ends
    kept_head, kept_tail = found.start, len(text) - found.end
    assert kept_head + kept_tail <= min(len(text), len(new))
    if kept_head < min(len(text), len(new)) - kept_tail:
        assert text[kept_head] != new[kept_head]
        assert text[found.end - 1] != new[len(new) - kept_tail - 1]
