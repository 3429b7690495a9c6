"""Python: keys built at run time, fixes, positions."""

from __future__ import annotations

import pytest

from wbmigrate import find_mapping
from wbmigrate.check.model import apply_fixes
from wbmigrate.check.python_code import check_python
from wbmigrate.check.targets import Targets
from wbmigrate.engine.model import Mode, Options

TARGETS = Targets(find_mapping("prime-rl").migration(), Options())
REPLACE = Targets(find_mapping("prime-rl").migration(), Options(mode=Mode.REPLACE))


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
