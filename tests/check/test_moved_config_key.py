"""A config key that moved between sections with the same last part (`loss.max_norm ->
optim.max_norm`): its last part names the new key as much as the old one, so it is never looked
for alone. The old key is found at its path (a config file's structure, a dotted spelling, a
flag); the new key, a keyword argument or an attribute of that name give no result, and no fix
rewrites a key to itself (which left `check --fix` failing on prime-rl for ever). A new key that
ends with the old one (`enable_lora -> vllm.enable_lora`) is the new key, and what `--fix`
writes is clean on a second look."""

from __future__ import annotations

import pytest
from helpers import FIXTURES

from wbmigrate.check.run import check_file
from wbmigrate.check.suppress import Ignores
from wbmigrate.check.targets import Targets
from wbmigrate.engine.model import Options
from wbmigrate.mapping.load import load_mapping
from wbmigrate.mapping.parse import parse_mapping

TARGETS = Targets(
    load_mapping(FIXTURES / "mappings/valid/moved-config-key.yaml").migration(), Options()
)

# The new key, or the last part alone: no result at all.
NEW_OR_ALONE = {
    "t.py": (
        "cfg = {'optim': {'max_norm': 1.0}}\nConfig(max_norm=1)\nprint(config.optim.max_norm)\n"
        "old = {'loss': {'max_norm': 1.0}}\n"
    ),
    "trainer.toml": "[optim]\nmax_norm = 1.0\n",
    "rl.toml": "[trainer.optim]\nmax_norm = 1.0\n",
    "c.json": '{"optim": {"max_norm": 1}}',
    "README.md": "Lower the max_norm to clip harder.\n",
    "serve.py": "if self.inference.vllm.enable_lora:\n    cfg.vllm.enable_lora = True\n",
    "serve.sh": "uv run inference --vllm.enable-lora\n",
    "inference.toml": "[vllm]\nenable_lora = true\n",
    "v.json": '{"vllm": {"enable_lora": true}}',
    "docs.md": "Set `inference.vllm.enable_lora = true` (or `--vllm.enable-lora`).\n",
}

# The old key where the file says it is that key: one result each.
OLD_AT_ITS_PATH = {
    "trainer.toml": (
        "[loss]\nmax_norm = 1.0\n",
        "renamed-config-key",
        "loss.max_norm -> optim.max_norm",
    ),
    "rl.toml": (
        "[trainer.loss]\nmax_norm = 1.0\n",
        "renamed-config-key",
        "trainer.loss.max_norm -> trainer.optim.max_norm",
    ),
    "c.json": (
        '{"loss": {"max_norm": 1}}',
        "renamed-config-key",
        "loss.max_norm -> optim.max_norm",
    ),
    "run.sh": ("uv run trainer --loss.max-norm 1\n", "renamed-config-key", "--loss.max-norm"),
    "README.md": ("Set loss.max_norm to 1.\n", "mention", "loss.max_norm"),
    "serve.py": ("print(cfg.enable_lora)\n", "needs-review", "enable_lora"),
    "serve.sh": ("uv run inference --enable-lora\n", "renamed-config-key", "--enable-lora"),
    "inference.toml": ("enable_lora = true\n", "renamed-config-key", "enable_lora -> vllm"),
}


def results(tmp_path, name: str, text: str, fixes: bool = False) -> list[tuple[str, str, bool]]:
    path = tmp_path / name
    path.write_text(text)
    report = check_file(path, TARGETS, Ignores(), fixes=fixes)
    return [(f.rule.value, f.message, bool(f.fix)) for f in (report.findings if report else ())]


@pytest.mark.parametrize("name", NEW_OR_ALONE)
def test_the_new_key_or_the_last_part_alone_gives_no_result(tmp_path, name):
    assert results(tmp_path, name, NEW_OR_ALONE[name]) == []


@pytest.mark.parametrize("name", OLD_AT_ITS_PATH)
def test_the_old_key_at_its_path_is_found(tmp_path, name):
    text, rule, message = OLD_AT_ITS_PATH[name]
    ((found_rule, found_message, _),) = results(tmp_path, name, text)
    assert (found_rule, found_message.startswith(message)) == (rule, True)


def test_the_last_part_is_no_spelling_of_its_own():
    assert "max_norm" not in TARGETS.config_leaves
    assert "max_norm" not in TARGETS.spellings
    assert "loss.max_norm" in TARGETS.spellings
    assert TARGETS.config_leaves == {"max_off_policy_steps": "max_staleness"}


def test_a_moved_key_never_hides_another_key_renamed_at_its_last_part():
    """`eval.max_norm -> eval.max_grad_norm` renames the last part whichever of the two
    renames the mapping lists last."""
    text = (FIXTURES / "mappings/valid/moved-config-key.yaml").read_text()
    renamed = (
        "        - old: eval.max_norm\n          new: eval.max_grad_norm\n"
        "          toml: {eval.max_norm: eval.max_grad_norm}\n"
    )
    at = text.index("        - old: loss.max_norm")
    for edited in (text[:at] + renamed + text[at:], text + renamed):
        targets = Targets(parse_mapping(edited, "m.yaml").migration(), Options())
        assert targets.config_leaves["max_norm"] == "max_grad_norm"


@pytest.mark.parametrize("name", OLD_AT_ITS_PATH)
def test_what_fix_writes_is_clean_on_a_second_look(tmp_path, name):
    text = OLD_AT_ITS_PATH[name][0]
    before = results(tmp_path, name, text)
    report = check_file(tmp_path / name, TARGETS, Ignores(), fixes=True)
    assert report is not None
    fixed = text if report.fixed is None else report.fixed
    assert results(tmp_path, name, fixed) == [r for r in before if not r[2]]
