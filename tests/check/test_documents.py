"""Spec documents in `check`: specs found wherever they sit and checked by the engine, findings
pointing at the name, fixes that agree with the engine, and no document that stops the scan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from helpers import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import MIGRATION, MODES, SPECS

from wbmigrate import kinds
from wbmigrate.check.config import CheckConfig
from wbmigrate.check.documents import check_json, check_yaml
from wbmigrate.check.hosts import minimal
from wbmigrate.check.model import Checked, Finding, Rule
from wbmigrate.check.run import check_file
from wbmigrate.check.suppress import Ignores
from wbmigrate.check.targets import Targets, targets_for
from wbmigrate.engine.model import Mode, Options
from wbmigrate.files import EXPORT_FORMAT, SWEEP, TEXT, find
from wbmigrate.mapping.load import load_mapping
from wbmigrate.rewrite import rewrite

DUAL = Targets(MIGRATION, Options())
REPLACE = Targets(MIGRATION, Options(mode=Mode.REPLACE))


def check(text: str, syntax: str = "json", targets: Targets = DUAL) -> Checked:
    return (check_json if syntax == "json" else check_yaml)("f." + syntax, text, targets)


def fixed(text: str, checked: Checked) -> str | None:
    return checked.fix_text([f for f in checked.findings if f.fixable])


def spanned(text: str, finding: Finding) -> str:
    return text[finding.span[0] : finding.span[1]]


def report(*metrics: object) -> dict[str, object]:
    panel = {"viewType": "Run History Line Plot", "config": {"metrics": list(metrics)}}
    grid = {"type": "panel-grid", "metadata": {"panelBankSectionConfig": {"panels": [panel]}}}
    return {"blocks": [grid]}


@settings(max_examples=500, deadline=None)
@given(
    st.text("ab,[]", max_size=30),
    st.text("ab,[]", max_size=30),
    st.text("ab,[]", max_size=30),
    st.text("ab,[]", max_size=8),
)
def test_minimal_replacement_is_exact_and_smallest(head, tail, middle, other):
    text, new = head + middle + tail, head + other + tail
    found = minimal(text, new)
    assert text[: found.start] + found.text + text[found.end :] == new
    # nothing more could be kept: the replaced parts differ at both ends
    kept_head, kept_tail = found.start, len(text) - found.end
    assert kept_head + kept_tail <= min(len(text), len(new))
    if kept_head < min(len(text), len(new)) - kept_tail:
        assert text[kept_head] != new[kept_head]
        assert text[found.end - 1] != new[len(new) - kept_tail - 1]


# --- specs wherever they sit, fixed as the engine would ------------------------------------

WRAPPERS = ["root", "view", "view-string", "list", "triggers", "export"]


def wrapped(spec: object, how: str) -> tuple[object, list[tuple[object, ...]], bool]:
    """A document holding `spec` the way files do; where the spec sits; whether as a string."""
    if how == "view":
        return {"name": "v", "displayName": "V", "type": "runs", "spec": spec}, [("spec",)], False
    if how == "view-string":
        return {"name": "v", "spec": json.dumps(spec)}, [("spec",)], True
    if how == "list":
        return [spec, {"name": "other"}, spec], [(0,), (2,)], False
    if how == "triggers":
        return {"project": "p", "triggers": [spec]}, [("triggers", 0)], False
    if how == "export":
        document = {"wbmigrate": EXPORT_FORMAT, "kind": kinds.detect(spec), "spec": spec}
        return document, [("spec",)], False
    return spec, [()], False


def dumped(document: object, syntax: str, flow: bool) -> str:
    if syntax == "json":
        return json.dumps(document, indent=None if flow else 2)
    return yaml.safe_dump(document, default_flow_style=flow, sort_keys=False, allow_unicode=True)


def dig(document: object, path: tuple[object, ...], as_string: bool) -> object:
    for part in path:
        document = document[part]  # type: ignore[index]
    return json.loads(document) if as_string else document  # type: ignore[arg-type]


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SPECS, st.sampled_from(WRAPPERS), st.sampled_from(["json", "yaml"]), st.booleans(), MODES)
def test_specs_anywhere_are_fixed_as_the_engine_fixes_them(spec, how, syntax, flow, mode):
    targets = targets_for(MIGRATION, Options(mode=mode))
    document, roots, as_string = wrapped(spec, how)
    text = dumped(document, syntax, flow)
    checked = check(text, syntax, targets)
    assert not [f for f in checked.findings if f.rule in (Rule.PARSE_ERROR, Rule.INTERNAL_ERROR)]
    read = json.loads(text) if syntax == "json" else yaml.safe_load(text)  # as the file says
    expected = rewrite(dig(read, roots[0], as_string), MIGRATION, options=targets.options).spec
    edits = [f for f in checked.findings if f.rule is not Rule.NEEDS_REVIEW]
    if syntax == "json":
        assert all(f.fixable for f in edits)  # JSON edits are always made
    if not edits or not all(f.fixable for f in edits):
        return
    new = fixed(text, checked)
    assert new is not None
    after = json.loads(new) if syntax == "json" else yaml.safe_load(new)
    for root in roots:
        assert dig(after, root, as_string) == expected
    again = check(new, syntax, targets)
    assert not [f for f in again.findings if f.fixable]  # a second fix changes nothing


CASES = FIXTURES / "check-cases"
SPEC_CASES = sorted(
    case
    for folder in ("json", "yaml")
    for case in (CASES / folder).iterdir()
    if any(case.glob("fixed.*"))
)


def documents(path: Path) -> list[object]:
    text = path.read_text()
    return [json.loads(text)] if path.suffix == ".json" else list(yaml.safe_load_all(text))


def uses(spec: object) -> object:
    """A spec without its `x-...` keys, which only hold anchors: an anchored node changes where
    it is used, and so where it is defined too, which the engine does not read."""
    if isinstance(spec, dict):
        return {k: v for k, v in spec.items() if not str(k).startswith("x-")}
    return spec


@pytest.mark.parametrize("case", SPEC_CASES, ids=lambda case: f"{case.parent.name}/{case.name}")
def test_every_spec_of_a_fixed_case_is_what_the_engine_makes_of_it(case):
    """The check's fixes agree with the live side's: each spec in the fixed file, wherever it
    sits, is the engine's rewrite of the same spec in the input."""
    config = yaml.safe_load((case / "case.yaml").read_text()) or {}
    options = Options(mode=Mode(config.get("mode", "dual")))
    mapping = config.get("mapping")
    migration = load_mapping(FIXTURES / mapping).migration() if mapping else MIGRATION
    (before,) = case.glob("input.*")
    (after,) = case.glob("fixed.*")
    for old, new in zip(documents(before), documents(after), strict=True):
        found = find(old, lambda text: text.lstrip()[:1] == "{")
        specs = [(root, what == TEXT, None if what == TEXT else what) for root, what in found]
        for root, as_string, kind in (spec for spec in specs if spec[2] != SWEEP):
            expected = rewrite(dig(old, root, as_string), migration, kind=kind, options=options)
            assert uses(dig(new, root, as_string)) == uses(expected.spec)


# --- findings point at the name --------------------------------------------------------------

COLUMNS = {"run:displayName": True, "summary:off_policy/mean": True}


def runfeed_workspace(syntax: str) -> str:
    spec = {"section": {"runSets": [{"name": "r", "runFeed": {"columnVisible": COLUMNS}}]}}
    return dumped(spec, syntax, flow=False)


@pytest.mark.parametrize("syntax", ["json", "yaml"])
@pytest.mark.parametrize("targets", [DUAL, REPLACE], ids=["dual", "replace"])
def test_a_finding_on_a_map_key_points_at_the_key(syntax, targets):
    text = runfeed_workspace(syntax)
    (finding,) = [f for f in check(text, syntax, targets).findings if "columnVisible" in f.message]
    assert spanned(text, finding).strip('"') == "summary:off_policy/mean"


@pytest.mark.parametrize("syntax", ["json", "yaml"])
def test_a_finding_in_an_alert_filter_points_at_the_name_inside_it(syntax):
    inner = {"run_metric_filter": {"threshold_filter": {"name": "off_policy/max"}}}
    spec = {"event": {"filter": json.dumps(inner)}, "action": {}}
    text = dumped(spec, syntax, flow=False)
    (finding,) = check(text, syntax).findings
    assert spanned(text, finding) == "off_policy/max"


def test_a_finding_in_a_spec_kept_as_a_string_points_inside_the_string():
    text = json.dumps({"name": "v", "spec": json.dumps(report("off_policy/mean"))}, indent=2)
    (finding,) = check(text).findings
    assert spanned(text, finding) == '\\"off_policy/mean\\"'
    assert json.loads(json.loads(fixed(text, check(text)))["spec"]) == (
        rewrite(report("off_policy/mean"), MIGRATION).spec
    )


# --- anchors, aliases and merge keys -----------------------------------------------------

PANELS = """blocks:
  - type: panel-grid
    metadata:
      panelBankSectionConfig:
        panels:
          - viewType: Run History Line Plot
            config: {metrics: &m [off_policy/mean]}
          - viewType: %s
            config: {<<: {title: b}, metrics: *m}
"""


def test_an_anchored_node_is_edited_once_for_all_its_uses():
    text = PANELS % "Bar Chart"
    checked = check(text, "yaml")
    assert [f.fixable for f in checked.findings] == [True, True]
    assert len({f.span for f in checked.findings}) == 1  # both at the anchor
    new = fixed(text, checked)
    assert new is not None
    assert new.count("staleness/rollout/mean") == 1  # added once, at the anchor
    panels = yaml.safe_load(new)["blocks"][1]["metadata"]["panelBankSectionConfig"]["panels"]
    assert [p["config"]["metrics"] for p in panels] == [
        ["off_policy/mean", "staleness/rollout/mean"]
    ] * 2


def test_an_anchor_whose_uses_need_different_changes_is_not_fixed():
    text = PANELS % "Scalar Chart"  # the line plot adds the new key, the scalar chart swaps it
    checked = check(text, "yaml")
    assert [f.fixable for f in checked.findings] == [False, False]
    assert all(
        "an anchor used elsewhere that needs another change" in f.message for f in checked.findings
    )


# --- one bad document never stops the scan ---------------------------------------------------


@pytest.mark.parametrize("syntax", ["json", "yaml"])
def test_a_spec_with_an_unhashable_item_never_stops_the_scan(syntax):
    text = dumped([report({"a": 1}, "off_policy/mean"), report("off_policy/max")], syntax, False)
    checked = check(text, syntax)
    assert not [f for f in checked.findings if f.rule in (Rule.PARSE_ERROR, Rule.INTERNAL_ERROR)]
    assert any("off_policy/max" in spanned(text, f) and f.fixable for f in checked.findings)


@pytest.mark.parametrize("syntax", ["json", "yaml"])
def test_a_spec_the_engine_fails_on_is_reviewed_and_the_others_still_checked(syntax, monkeypatch):
    def failing(spec, *args, **kwargs):
        if {"a": 1} in spec["blocks"]:
            raise TypeError("unhashable type: 'dict'")
        return rewrite(spec, *args, **kwargs)

    monkeypatch.setattr("wbmigrate.check.specs.rewrite", failing)
    bad = {**report("off_policy/mean"), "blocks": [{"a": 1}, *report()["blocks"]]}
    text = dumped([bad, report("off_policy/max")], syntax, False)
    review, renamed = sorted(check(text, syntax).findings, key=lambda f: f.rule.value)
    assert review.rule is Rule.NEEDS_REVIEW
    assert "could not be checked (TypeError: unhashable type: 'dict')" in review.message
    assert review.span[0] == review.span[1]  # a point: the names inside still get results
    assert renamed.rule is Rule.RENAMED_METRIC
    assert renamed.fixable
    assert "off_policy/max" in spanned(text, renamed)


def test_a_spec_string_that_is_not_valid_json_is_reviewed_and_the_others_still_checked():
    broken = '{"blocks": [{"type": "paragraph", "children": [{"text": "a\tb off_policy/mean"}]}]}'
    good = json.dumps(report("off_policy/max"))
    text = json.dumps([{"name": "a", "spec": broken}, {"name": "b", "spec": good}], indent=2)
    review, renamed = check(text).findings
    assert review.rule is Rule.NEEDS_REVIEW
    assert "Invalid control character" in review.message
    assert renamed.rule is Rule.RENAMED_METRIC
    assert renamed.fixable


def test_a_json_string_with_a_control_character_is_a_parse_error():
    (finding,) = check('{"blocks": ["off_policy/mean\x01"]}').findings
    assert finding.rule is Rule.PARSE_ERROR
    assert "Invalid control character" in finding.message


@pytest.mark.parametrize(
    "text",
    [
        "blocks:\n- ? {a: 1}\n  : off_policy/mean\n",
        "? {a: 1}\n: off_policy/mean\nsection:\n  runSets:\n  - runFeed:\n      columnVisible:\n"
        "        ? [x]\n        : 1\n        summary:off_policy/mean: true\n",
        "? [a, b]\n: c\norchestrator:\n  max_off_policy_steps: 8\n",
    ],
)
def test_a_yaml_key_that_is_a_mapping_never_stops_the_check(text):
    checked = check(text, "yaml")
    assert not [f for f in checked.findings if f.rule in (Rule.PARSE_ERROR, Rule.INTERNAL_ERROR)]
    if any(f.fixable for f in checked.findings):
        assert fixed(text, checked) is not None


@pytest.mark.parametrize(
    ("text", "syntax", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "json", "nested too deeply"),
        ('{"a": ' * 700 + '"off_policy/mean"' + "}" * 700, "json", "nested more than 500"),
        ("a: " + "[" * 10_000 + "]" * 10_000, "yaml", "nested too deeply"),
        ("a:\n" + "".join(f"{'  ' * i}- \n" for i in range(1, 600)), "yaml", "nested too deeply"),
    ],
)
def test_very_deep_nesting_is_a_parse_error(text, syntax, message):
    (finding,) = check(text, syntax).findings
    assert finding.rule is Rule.PARSE_ERROR
    assert message in finding.message


def test_a_spec_nested_just_short_of_the_limit_is_fixed_as_the_spec_alone():
    spec = json.dumps(report("off_policy/mean"))
    text = "[" * 495 + spec + "]" * 495
    checked = check(text)
    (finding,) = checked.findings
    assert finding.rule is Rule.RENAMED_METRIC
    alone = check(spec)
    assert fixed(text, checked) == "[" * 495 + fixed(spec, alone) + "]" * 495


def test_a_name_under_a_duplicate_yaml_key_is_reviewed_where_it_is(tmp_path):
    """The first of duplicate keys is read (as `plan DIR` reads it); the other's names were
    silent, inside a spec the engine had read."""
    text = yaml.safe_dump(report("off_policy/mean"), default_flow_style=False)
    duplicate = "          metrics:\n          - off_policy/max\n"
    text = text.replace("- off_policy/mean\n", "- off_policy/mean\n" + duplicate)
    (tmp_path / "dup.yaml").write_text(text)
    found = check_file(tmp_path / "dup.yaml", DUAL, Ignores.of(CheckConfig()))
    assert found is not None
    assert [(f.line, f.rule, f.fixable) for f in found.findings] == [
        (7, Rule.RENAMED_METRIC, True),
        (9, Rule.NEEDS_REVIEW, False),
    ]


@pytest.mark.parametrize(
    ("text", "syntax"),
    [
        (
            '{"x": "off\\u005fpolicy/mean",\n "y": "time\\/infer",\n "z": "see off_policy\\/max"}',
            "json",
        ),
        ('x: "off\\x5fpolicy/mean"\ny: "time\\/infer"\nz: "see off_policy\\/max"\n', "yaml"),
    ],
)
def test_an_old_name_spelled_with_escapes_outside_a_spec_is_reviewed(text, syntax):
    """The residual pass reads text as written: such a name had no result at all."""
    findings = check(text, syntax).findings
    assert sorted((f.line, f.rule.value) for f in findings) == [
        (1, "needs-review"),
        (2, "needs-review"),
        (3, "mention"),
    ]
    assert not check(
        text.replace("\\u005f", "_").replace("\\x5f", "_").replace("\\/", "/"), syntax
    ).findings


def test_a_spec_string_nested_too_deeply_is_reviewed():
    deep = '{"a": ' * 700 + '{"blocks": ["off_policy/mean"]}' + "}" * 700
    (finding,) = check(json.dumps({"spec": deep})).findings
    assert finding.rule is Rule.NEEDS_REVIEW
    assert "nested more than 500 levels deep" in finding.message


def test_yaml_aliases_that_expand_without_bound_are_a_parse_error():
    lines = ["a0: &a0 [off_policy/mean, off_policy/mean, off_policy/mean, off_policy/mean]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    (finding,) = check("\n".join(lines) + "\nblocks: [*a8]\n", "yaml").findings
    assert finding.rule is Rule.PARSE_ERROR
    assert "aliases expand to too many nodes" in finding.message


@pytest.mark.parametrize("merge", ["<<: 3", "<<: [*base, 3]"])
def test_a_merge_key_that_names_no_mapping_is_a_parse_error(merge):
    text = f"base: &base {{a: 1}}\nblocks:\n  - {merge}\n    x: off_policy/mean\n"
    (finding,) = check(text, "yaml").findings
    assert finding.rule is Rule.PARSE_ERROR
    assert "a merge key (<<) takes a mapping" in finding.message


def test_an_export_file_whose_spec_is_not_its_kind_is_reviewed():
    document = {"wbmigrate": EXPORT_FORMAT, "kind": "report", "spec": {"section": {"x": 1}}}
    text = json.dumps({**document, "note": "off_policy/mean"})
    (finding,) = check(text).findings
    assert finding.rule is Rule.NEEDS_REVIEW
    assert "this report spec could not be checked (not a W&B report spec)" in finding.message


SHAPE_KEYS = ["blocks", "section", "event", "action", "spec", "metrics", "method", "parameters"]
SHAPE_KEYS += ["metric", "name", "runSets", "orchestrator", "max_off_policy_steps"]


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.one_of(
            st.sampled_from(["off_policy/mean", "max_off_policy_steps", "x", "{", "[1"]),
            st.integers(),
            st.none(),
        ),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(
                st.sampled_from(SHAPE_KEYS),
                inner,
                max_size=4,
            ),
            inner.map(json.dumps),
        ),
        max_leaves=20,
    ),
    st.sampled_from(["json", "yaml"]),
    MODES,
)
def test_no_document_makes_the_check_raise(document, syntax, mode):
    text = dumped(document, syntax, flow=False)
    checked = check(text, syntax, targets_for(MIGRATION, Options(mode=mode)))
    assert not [f for f in checked.findings if f.rule is Rule.INTERNAL_ERROR]
    new = fixed(text, checked)
    if new is not None:
        json.loads(new) if syntax == "json" else list(yaml.safe_load_all(new))
