"""Config forms of one word (`name`, `seed`, `wandb`): matched only where a file's structure
says it is that config key (a TOML or JSON config key at its path, a flag in a command line),
never as a name in Python, W&B specs or prose; distinctive forms (a dotted path, a leaf of two
words or more) are still looked for everywhere."""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES

from wbmigrate.check.prefilter import Prefilter
from wbmigrate.check.run import check_file
from wbmigrate.check.suppress import Ignores
from wbmigrate.check.targets import Targets, distinctive
from wbmigrate.engine.model import Options
from wbmigrate.mapping.load import load_mapping

MAPPING = load_mapping(FIXTURES / "mappings/valid/one-word-config.yaml")
TARGETS = Targets(MAPPING.migration(), Options())

SPEC = {
    "displayName": "Staleness",
    "spec": {"runSets": [{"name": "seed", "id": "wandb", "filters": {"name": "x"}}]},
}

# Files whose one-word forms are no config key: no result at all.
OTHER_WORDS = {
    "train.py": (
        "import wandb\nrun = wandb.init(name='seed')\nconfig = {'name': 'x', 'seed': 1}\n"
        "print(run.config['wandb'])\n"
    ),
    "prime.py": (
        "from prime_rl.orchestrator.config import OrchestratorConfig\n"
        "OrchestratorConfig(seed=1, name='x')\n"
    ),
    "report.json": json.dumps(SPEC, indent=2),
    "README.md": "Set the name and the seed, and log to wandb.\n",
    "notes.sh": "echo name seed wandb\n",
    "ci.yml": "env:\n  A: 1\nseed: 3\nwandb: {}\n",
    "top.json": '{"seed": 1, "wandb": {"project": "x"}}',
    "other.toml": "[trainer]\nname = 'x'\nseed = 1\n[orchestrator.model]\nname = 'y'\n",
}

# Files whose structure says a one-word form is the renamed key: one finding each.
STRUCTURE = {
    "rl.toml": (
        "[inference.model]\nname = 'Qwen'\n",
        "inference.model.name -> inference.vllm.model",
    ),
    "infer.toml": ("seed = 1\n", "seed -> vllm.seed"),
    "run.sh": ("uv run inference --seed 3\n", "--seed -> --vllm.seed (flag)"),
    "config.json": (
        '{"inference": {"model": {"name": "Qwen"}}}',
        "inference.model.name -> inference.vllm.model",
    ),
    "block.md": (
        "Run it:\n\n```toml\n[inference.model]\nname = 'Qwen'\n```\n",
        "inference.model.name -> inference.vllm.model",
    ),
    "launch.py": ("import subprocess\nsubprocess.run(['orchestrator', '--wandb'])\n", "--wandb"),
}

# Distinctive forms are names everywhere, as before.
DISTINCTIVE = {
    "read.py": ("print(cfg['max_off_policy_steps'])\n", "max_off_policy_steps"),
    "prose.md": ("Set inference.seed to 1.\n", "inference.seed"),
}


def results(tmp_path, name: str, text: str) -> list[tuple[str, str]]:
    path = tmp_path / name
    path.write_text(text)
    report = check_file(path, TARGETS, Ignores(), fixes=False)
    return [(f.rule.value, f.message) for f in (report.findings if report else ())]


@pytest.mark.parametrize("name", OTHER_WORDS)
def test_a_one_word_form_outside_a_config_structure_is_no_name(tmp_path, name):
    assert results(tmp_path, name, OTHER_WORDS[name]) == []


@pytest.mark.parametrize("name", STRUCTURE)
def test_a_one_word_form_where_the_structure_says_it_is_the_key(tmp_path, name):
    text, message = STRUCTURE[name]
    (found,) = results(tmp_path, name, text)
    assert found[0] == "renamed-config-key"
    assert found[1].startswith(message)


@pytest.mark.parametrize("name", DISTINCTIVE)
def test_a_distinctive_form_is_looked_for_everywhere(tmp_path, name):
    text, form = DISTINCTIVE[name]
    (found,) = results(tmp_path, name, text)
    assert found[1].startswith(form)


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        ("name", False),
        ("--wandb", False),
        ("env", False),
        ("max_off_policy_steps", True),
        ("--max-off-policy-steps", True),
        ("inference.model.name", True),
        ("--orchestrator.wandb", True),
    ],
)
def test_which_forms_are_distinctive(form, expected):
    assert distinctive(form) is expected


def test_the_residual_pass_knows_no_one_word_form():
    assert {"name", "seed", "wandb", "--seed", "--wandb"}.isdisjoint(TARGETS.spellings)
    assert "max_off_policy_steps" in TARGETS.spellings


def test_the_prefilter_sends_on_a_config_with_a_one_word_key_and_no_other_file():
    prefilter = TARGETS.prefilter
    assert isinstance(prefilter, Prefilter)
    assert prefilter.scan(b"[inference.model]\nname = 'Qwen'\n", config_like=True) is not None
    assert prefilter.scan(b"[model]\nname = 'Qwen'\n", config_like=True) is None  # no inference
    assert prefilter.scan(b"seed = 1\n", config_like=True) is not None  # a standalone config
    assert prefilter.scan(b"seed = 1\n", config_like=False) is None  # Python: no config
    assert prefilter.scan(b"import wandb\nwandb.init(name='x')\n") is None
    assert prefilter.scan(b"uv run inference --seed 3\n") is not None


def test_a_key_spelled_like_a_renamed_one_names_only_the_keys_it_is_like(tmp_path):
    ((rule, message),) = results(tmp_path, "t.toml", "[trainer]\nmax_off_policy_steps = 1\n")
    assert rule == "needs-review"
    assert "orchestrator.max_off_policy_steps, max_off_policy_steps at a file's top)" in message
    assert "inference" not in message


# A start of an old name cut short: by a quote in code (`"filters" + key`), never by a comma
# or a space, nor by a quote in JSON or YAML, where no key is built.
CUT_SHORT = [
    pytest.param(b"run.log({'filters' + key: 1})", False, True, id="quote-in-code"),
    pytest.param(b"x = f'filters{key}'", False, True, id="brace-in-code"),
    pytest.param(b'{"filters": {"op": "OR"}}', True, False, id="quote-in-json"),
    pytest.param(b'{"m": "filters\\/all\\/gibberish"}', True, True, id="escape-in-json"),
    pytest.param(b"def log(max_off_policy, value):", False, False, id="comma-in-code"),
    pytest.param(b"max_off_policy is set", False, False, id="space-in-code"),
]


@pytest.mark.parametrize(("data", "data_only", "goes_on"), CUT_SHORT)
def test_a_name_cut_short_goes_on_only_where_code_may_build_it(data, data_only, goes_on):
    for crowded in (False, True):
        prefilter = Prefilter(*PREFILTER_ARGS)
        prefilter.crowded = crowded
        found = prefilter.scan(data, spec_like=data_only, data_only=data_only)
        assert (found is not None) is goes_on


def test_a_key_built_in_code_from_a_word_is_still_reviewed(tmp_path):
    ((rule, message),) = results(tmp_path, "log.py", "run.log({'filters' + key: 1})\n")
    assert (rule, message.split(";")[0]) == (
        "needs-review",
        "a key built here may be an old name (filters/all/gibberish, filters/all/repetition)",
    )


PREFILTER_ARGS = (
    TARGETS.spellings,
    TARGETS.anchors,
    ("metricRegex",),
    TARGETS.one_word_flags,
    TARGETS.key_parts,
)
TEXTS = [*OTHER_WORDS.values(), *(t for t, _ in STRUCTURE.values())]
TEXTS += [*(t for t, _ in DISTINCTIVE.values()), "off_policy/mean", "x \\noff_policy/mean y"]


@pytest.mark.parametrize("text", TEXTS)
def test_many_anchors_look_in_one_pass_and_find_the_same(text):
    """With many anchors, each pattern makes one pass over the bytes: the same scan."""
    data = text.encode()
    few, many = Prefilter(*PREFILTER_ARGS), Prefilter(*PREFILTER_ARGS)
    few.crowded, many.crowded = False, True
    for kinds in [(False, False, False), (True, True, True), (False, True, False)]:
        assert few.scan(data, *kinds) == many.scan(data, *kinds)
