"""Python: fixes only where the meaning is known, review where history is read or the place is
unknown, identifiers never renamed; fixing twice changes nothing and the result compiles."""

from __future__ import annotations

import ast
import io
import tokenize

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wbmigrate import find_mapping
from wbmigrate.check.model import Rule, apply_fixes
from wbmigrate.check.python_code import check_python
from wbmigrate.check.targets import Targets
from wbmigrate.engine.model import Mode, Options

MIGRATION = find_mapping("prime-rl").migration()
TARGETS = Targets(MIGRATION, Options())
REPLACE = Targets(MIGRATION, Options(mode=Mode.REPLACE))
WR = "import wandb_workspaces.reports.v2 as wr\nimport wandb\n"


def fix(source: str, targets: Targets = TARGETS) -> str | None:
    return apply_fixes(source, check_python("x.py", source, targets).findings)


def rules(source: str, targets: Targets = TARGETS) -> list[str]:
    return [f.rule.value for f in check_python("x.py", source, targets).findings]


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ('run.log({f"off_policy{suffix}/mean": 1})', True),
        ('key = "off_policy/" + name + "/max"', True),
        ('key = "dispatcher/%s" % name', True),
        ('key = "off_policy/{}/mean".format(name)', True),
        ('key = f"{prefix}/mean"', False),  # no namespace of an old name: too vague to report
        ('key = f"eval/{name}"', True),  # eval/samples was removed
        ('key = f"accuracy/{name}"', False),  # no old name in this namespace
        ('key = f"off_policy/{x}_smoothed"', False),  # cannot end like an old name
    ],
)
def test_python_keys_built_at_run_time(source, flagged):
    assert rules(source + "\n") == (["needs-review"] if flagged else [])


@pytest.mark.parametrize(
    ("source", "fixed"),
    [
        pytest.param(
            'wr.LinePlot(y=["off_policy/max"])',
            'wr.LinePlot(y=["off_policy/max", "staleness/rollout/max"])',
            id="builder-list-dual",
        ),
        pytest.param(
            "wr.LinePlot(y=('off_policy/max',))",
            "wr.LinePlot(y=('off_policy/max', 'staleness/rollout/max',))",
            id="builder-tuple-dual",
        ),
        pytest.param(
            'wr.LinePlot(y=[("off_policy/max")])',
            'wr.LinePlot(y=[("off_policy/max"), "staleness/rollout/max"])',
            id="parenthesised-element-stays-one-element",
        ),
        pytest.param('wr.LinePlot(y=["off_policy/max", "staleness/rollout/max"])', None, id="done"),
        pytest.param(
            'wr.ScalarChart(metric="summary:off_policy/max")',
            'wr.ScalarChart(metric="summary:staleness/rollout/max")',
            id="builder-single",
        ),
        pytest.param(
            'wandb.log({"off_policy/max": 1})', 'wandb.log({"staleness/rollout/max": 1})', id="log"
        ),
        pytest.param(
            'wandb.define_metric("off_policy/max", step_metric="step")',
            'wandb.define_metric("staleness/rollout/max", step_metric="step")',
            id="define-metric",
        ),
        pytest.param(
            'Y = ["off_policy/max"]\nwr.LinePlot(y=Y)',
            'Y = ["off_policy/max", "staleness/rollout/max"]\nwr.LinePlot(y=Y)',
            id="list-bound-to-a-name",
        ),
        pytest.param(
            'wr.Runset(filters="${off_policy/max} * 2")',
            'wr.Runset(filters="${staleness/rollout/max} * 2")',
            id="expression",
        ),
        pytest.param(
            'wr.Runset(filters="Metric(\\"off_policy/max\\") > 1")',
            'wr.Runset(filters="Metric(\\"staleness/rollout/max\\") > 1")',
            id="filter-call",
        ),
        pytest.param(
            'CONFIG = {"orchestrator": {"max_off_policy_steps": 8}}',
            'CONFIG = {"orchestrator": {"max_staleness": 8}}',
            id="config-dict-key",
        ),
        pytest.param(
            'cmd = ["uv", "run", "rl", "--orchestrator.max-off-policy-steps", "8"]',
            'cmd = ["uv", "run", "rl", "--orchestrator.max-staleness", "8"]',
            id="flag-in-a-command",
        ),
        pytest.param(
            "from prime_rl.configs.orchestrator import OrchestratorConfig as OC\n"
            "cfg = OC(max_off_policy_steps=8)",
            "from prime_rl.configs.orchestrator import OrchestratorConfig as OC\n"
            "cfg = OC(max_staleness=8)",
            id="prime-rl-config-keyword-through-imports",
        ),
        pytest.param('wr.LinePlot(y=["off_policy/" "max"])', None, id="implicit-concatenation"),
        pytest.param('s = "caf\\u00e9 off_policy/max"', None, id="text-mention"),
        pytest.param('a = b"off_policy/max"', None, id="bytes"),
    ],
)
def test_fixes_where_the_meaning_is_known(source, fixed):
    result = fix(WR + source + "\n")
    assert (result.removeprefix(WR).rstrip("\n") if result else None) == fixed


@pytest.mark.parametrize(
    "source",
    [
        pytest.param('run.summary["off_policy/max"]', id="summary-subscript"),
        pytest.param('run.summary.get("off_policy/max", 0)', id="summary-get"),
        pytest.param('run.config["max_off_policy_steps"]', id="config-subscript"),
        pytest.param('run.history(keys=["off_policy/max"])', id="history"),
        pytest.param('run.scan_history(keys=["off_policy/mean"])', id="scan-history"),
        pytest.param(
            'wandb.Api().runs("e/p", filters={"summary_metrics.off_policy/max": {"$gt": 1}, '
            '"config.max_off_policy_steps": 8})',
            id="api-runs-filters",
        ),
        pytest.param(
            'KEYS = ["off_policy/mean"]\nh = run.history(keys=KEYS)\nfor k in KEYS: print(h[k])',
            id="list-read-through-a-name",
        ),
        pytest.param(
            'resolved = json.load(f)\nbound = resolved["max_off_policy_steps"]', id="read"
        ),
    ],
)
def test_code_that_reads_history_is_never_rewritten(source):
    findings = check_python("x.py", WR + source + "\n", TARGETS).findings
    assert findings
    assert all(not f.fixable and f.rule is Rule.NEEDS_REVIEW for f in findings)
    assert any("history" in f.message or "reads a config" in f.message for f in findings)


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("bound = config.max_off_policy_steps", id="attribute"),
        pytest.param("self.max_off_policy_steps = max_off_policy_steps", id="assignment"),
        pytest.param("Dispatcher(max_off_policy_steps=8)", id="keyword-of-own-function"),
        pytest.param("def f(max_off_policy_steps: int) -> int: ...", id="parameter"),
        pytest.param('metrics = {"off_policy/mean": 1}\nmonitors.log(metrics)', id="unknown-dict"),
        pytest.param('metrics["off_policy/dropped"] = 1.0', id="subscript-store"),
    ],
)
def test_identifiers_and_unknown_places_are_only_reviewed(source):
    assert fix(WR + source + "\n") is None
    findings = check_python("x.py", WR + source + "\n", TARGETS).findings
    assert all(f.rule is Rule.NEEDS_REVIEW for f in findings)


@pytest.mark.parametrize(
    ("source", "targets", "fixed", "rule"),
    [
        pytest.param(
            'wr.LinePlot(y=["off_policy/max", "loss"])',
            REPLACE,
            'wr.LinePlot(y=["staleness/rollout/max", "loss"])',
            None,
            id="replace-swaps",
        ),
        pytest.param(
            'wr.LinePlot(y=["off_policy/max", "staleness/rollout/max"])',
            REPLACE,
            'wr.LinePlot(y=["staleness/rollout/max"])',
            None,
            id="replace-drops-a-duplicate",
        ),
        pytest.param(
            'wr.LinePlot(y=["loss", "dispatcher/off_policy/max"])',
            TARGETS,
            None,
            Rule.MENTION,
            id="dual-keeps-a-removed-key-beside-live-ones",
        ),
        pytest.param(
            'wr.LinePlot(y=["loss", "dispatcher/off_policy/max"])',
            REPLACE,
            'wr.LinePlot(y=["loss"])',
            None,
            id="replace-removes-it",
        ),
    ],
)
def test_dual_and_replace_agree_with_specs(source, targets, fixed, rule):
    result = fix(WR + source + "\n", targets)
    assert (result.removeprefix(WR).rstrip("\n") if result else None) == fixed
    if rule is not None:
        assert rules(WR + source + "\n", targets) == [rule.value]


CONFIG = "from prime_rl.configs import OrchestratorConfig\n"


@pytest.mark.parametrize(
    ("source", "targets", "message"),
    [
        pytest.param(
            'wandb.log({"off_policy/mean": 1, "staleness/rollout/mean": 1})',
            REPLACE,
            "off_policy/mean -> staleness/rollout/mean "
            "(the dict has staleness/rollout/mean too: keep one, by hand)",
            id="logged-key",
        ),
        pytest.param(
            'CONFIG = {"max_off_policy_steps": 8, "max_staleness": 4}',
            TARGETS,
            "max_off_policy_steps -> max_staleness "
            "(config key; the dict has max_staleness too: keep one, by hand)",
            id="config-dict-key",
        ),
        pytest.param(
            "OrchestratorConfig(max_off_policy_steps=8, max_staleness=4)",
            TARGETS,
            "max_off_policy_steps -> max_staleness "
            "(keyword of OrchestratorConfig; max_staleness is given too: keep one, by hand)",
            id="config-keyword",
        ),
    ],
)
def test_a_key_or_keyword_is_not_renamed_into_one_beside_it(source, targets, message):
    """Renamed, a dict literal had one key twice (Python keeps the last value alone: the
    other is silently dropped) and a call one keyword twice (a SyntaxError): the finding
    stays, without a fix, and says why."""
    (finding,) = check_python("x.py", WR + CONFIG + source + "\n", targets).findings
    assert (finding.message, finding.fixable) == (message, False)


def test_dual_keeps_an_old_logged_key_beside_its_new_one():
    source = WR + 'wandb.log({"off_policy/mean": 1, "staleness/rollout/mean": 1})\n'
    assert check_python("x.py", source, TARGETS).findings == []


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_an_element_added_on_a_line_of_its_own_ends_as_the_file_s_lines_do(newline):
    """A CRLF file got one line ended by a lone line feed (a lone-CR file: at the indent of
    the line before the list)."""
    lines = ["wr.LinePlot(y=[", '    "off_policy/max",', "])", ""]
    fixed = ["wr.LinePlot(y=[", '    "off_policy/max",', '    "staleness/rollout/max",', "])", ""]
    source = WR.replace("\n", newline) + newline.join(lines)
    assert fix(source) == WR.replace("\n", newline) + newline.join(fixed)


def test_python_positions_count_characters_not_bytes():
    source = 'title = "é"; wr.LinePlot(y=["off_policy/max"])\n'
    (finding,) = check_python("x.py", WR + source, TARGETS).findings
    assert (finding.line, finding.column) == (3, 29)  # characters, not UTF-8 bytes (30)


def test_python_positions_count_a_lone_carriage_return_as_ast_does():
    """`ast` ends a line at a lone carriage return as at a line feed: counted at line feeds
    alone, a node's line was one that came earlier (past the file's end: an internal error)."""
    source = 'import wandb\rx = 1\ry = 2\rwandb.log({"off_policy/mean": 1})\n'
    (finding,) = check_python("x.py", source, TARGETS).findings
    start, end = finding.span
    assert source[start:end] == '"off_policy/mean"'
    assert fix(source) == source.replace("off_policy/mean", "staleness/rollout/mean")


def test_a_python_file_that_starts_with_a_byte_order_mark_is_read_as_python_reads_it():
    """Python skips a UTF-8 byte-order mark: such a file was 'not valid Python', so nothing in
    it was fixed, and every name in it was left for review."""
    source = '\ufeffx = {"max_off_policy_steps": 8}; wandb.log({"off_policy/mean": 1})\n'
    findings = check_python("x.py", source, TARGETS).findings
    assert [(f.rule, f.column) for f in findings] == [
        (Rule.RENAMED_CONFIG_KEY, 7),  # the quote: line 1's columns count the mark, as it is there
        (Rule.RENAMED_METRIC, 46),
    ]
    assert fix(source) == (
        '\ufeffx = {"max_staleness": 8}; wandb.log({"staleness/rollout/mean": 1})\n'
    )


# --- properties -------------------------------------------------------------------------------

NAMES = st.sampled_from([*sorted(MIGRATION.old_names), "loss", "eval/off_policy/mean"])
LITERALS = st.one_of(
    NAMES.map(repr),
    NAMES.map(lambda n: f'"{n[: len(n) // 2]}" "{n[len(n) // 2 :]}"'),  # implicit concatenation
    NAMES.map(lambda n: f"({n!r})"),
    NAMES.map(lambda n: f"(\n    {n!r}\n)"),
)
LISTS = st.lists(LITERALS, min_size=1, max_size=4).map(lambda items: "[" + ", ".join(items) + "]")
STATEMENTS = st.one_of(
    LISTS.map("wr.LinePlot(y={})".format),
    LISTS.map("KEYS = {}".format),
    LITERALS.map("wandb.log({{{}: 1}})".format),
    LITERALS.map('wr.Runset(filters="${{" + {} + "}}")'.format),
    LITERALS.map("run.summary[{}]".format),
    st.just("self.max_off_policy_steps = config.max_off_policy_steps"),
    st.just("OrchestratorConfig(max_off_policy_steps=8, seed=1)"),
    st.just('cmd = ["rl", "--orchestrator.max-off-policy-steps", "8"]'),
)
FILES = st.lists(STATEMENTS, min_size=1, max_size=6).map(
    lambda lines: WR + "from prime_rl.configs import OrchestratorConfig\n" + "\n".join(lines) + "\n"
)


def _identifiers(source: str) -> list[str]:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [t.string for t in tokens if t.type == tokenize.NAME]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FILES, st.sampled_from([TARGETS, REPLACE]))
def test_fixing_twice_changes_nothing_and_the_code_still_compiles(source, targets):
    once = fix(source, targets) or source
    compile(once, "x.py", "exec")
    assert (fix(once, targets) or once) == once
    before, after = _identifiers(source), _identifiers(once)
    renamed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert set(renamed) <= {("max_off_policy_steps", "max_staleness")}  # config keywords only
    assert ast.dump(ast.parse(once)).count("max_staleness") == len(renamed)
