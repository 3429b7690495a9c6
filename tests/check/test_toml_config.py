"""TOML configs: the key scanner and its fixes."""

from __future__ import annotations

from wbmigrate import find_mapping
from wbmigrate.check.model import apply_fixes
from wbmigrate.check.targets import Targets
from wbmigrate.check.toml_config import check_toml, keys
from wbmigrate.engine.model import Options

TARGETS = Targets(find_mapping("prime-rl").migration(), Options())


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
