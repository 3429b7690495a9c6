"""Rewriting a metric regex after a rename: verified against known keys, bounded in time."""

from __future__ import annotations

import re

import pytest

from wbmigrate import find_mapping
from wbmigrate.engine import regexes
from wbmigrate.engine.regexes import RegexRewrite, rewrite_regex

MIGRATION = find_mapping("prime-rl").migration()
KNOWN = MIGRATION.old_names | MIGRATION.new_names
NAMES = ["off_policy/mean", "staleness/rollout/mean"]
DUAL = pytest.mark.parametrize("dual", [True, False], ids=["dual", "replace"])


def target(key: str, dual: bool, migration=MIGRATION) -> set[str]:
    """What `Walk._regex_target` gives: the keys to match in place of `key`."""
    fate = migration.fate(key)
    if fate is None:
        return {key}
    kept = {key} if dual else set()
    return kept | {fate.new} if fate.new else kept


def rewrite(
    pattern: str,
    dual: bool = True,
    extra: tuple[str, ...] = (),
    ignore_case: bool = False,
    migration=MIGRATION,
) -> RegexRewrite:
    """Called as `Walk.regex` calls it: mapping names plus project keys, the walk's target."""
    known = migration.old_names | migration.new_names | set(extra)
    return rewrite_regex(
        pattern, known, lambda key: target(key, dual, migration), ignore_case=ignore_case
    )


def matches(pattern: str, keys, flags: int = 0) -> set[str]:
    # W&B tests a metric regex with JavaScript's `RegExp.test`, i.e. a search (not a fullmatch):
    # the module judges patterns the same way, so the tests do too.
    compiled = re.compile(pattern, flags)
    return {key for key in keys if compiled.search(key)}


def expected(pattern: str, keys, dual: bool, flags: int = 0) -> set[str]:
    return {new for key in matches(pattern, keys, flags) for new in target(key, dual)}


@pytest.mark.parametrize(
    ("pattern", "dual", "new"),
    [
        ("off_policy/.*", True, "off_policy/.*|^staleness/"),
        ("^off_policy/mean$", True, "^off_policy/mean$|^staleness/rollout/mean$"),
        ("^off_policy/mean$", False, "^staleness/rollout/mean$"),
        ("^off_policy/mean", False, "^staleness/rollout/mean"),
        (r"^off_policy\/mean$", False, r"^staleness/rollout/mean$"),
        (
            "^off_policy/(mean|max)$",
            True,
            "(?:^off_policy/(mean|max)$)|^(?:staleness/rollout/max|staleness/rollout/mean)$",
        ),
    ],
    ids=["namespace-dual", "literal-dual", "literal-replace", "prefix-replace", "escaped-slash",
         "group-dual"],
)  # fmt: skip
def test_deterministic_rewrites(pattern, dual, new):
    result = rewrite(pattern, dual)
    assert result.new == new
    assert result.review is None


@pytest.mark.parametrize(
    ("pattern", "extra"),
    [
        ("off_policy/.*", ()),
        ("off_policy/.*", ("eval/off_policy/mean", "loss", "off_policy/mean_smoothed")),
        ("^off_policy/(mean|max)$", ()),
        ("off_policy/mean", ("eval/off_policy/mean",)),
        ("^off_policy/mean$|^loss$", ("loss",)),
        ("^off_policy/(in_flight|in_queue)/", ()),
        ("token", ("tokens/total",)),
    ],
    ids=["namespace", "namespace-project-keys", "group", "unanchored", "top-level-alternation",
         "nested-group", "substring"],
)  # fmt: skip
@DUAL
def test_rewrite_matches_exactly_the_renamed_keys(pattern, extra, dual):
    keys = KNOWN | set(extra)
    result = rewrite(pattern, dual, extra)
    assert result.matched == frozenset(matches(pattern, keys))
    assert result.wanted == frozenset(expected(pattern, keys, dual))
    assert result.new is not None
    assert result.review is None
    assert matches(result.new, keys) == result.wanted
    old_matched = result.matched & MIGRATION.old_names
    assert old_matched
    if dual:  # the old keys still match, for runs logged before the boundary
        assert old_matched <= matches(result.new, keys)
    else:  # the old keys are dropped
        renamed_or_removed = {k for k in old_matched if MIGRATION.fate(k)}
        assert not renamed_or_removed & matches(result.new, keys)


def test_keys_of_the_project_the_mapping_does_not_touch_stay_matched():
    result = rewrite("off_policy/.*", dual=False, extra=("eval/off_policy/mean",))
    assert result.new is not None
    assert matches(result.new, ["eval/off_policy/mean", "staleness/rollout/mean"]) == {
        "eval/off_policy/mean",
        "staleness/rollout/mean",
    }
    assert not matches(result.new, ["off_policy/mean", "dispatcher/off_policy/max"])


@pytest.mark.parametrize(
    "pattern",
    ["accuracy", "^eval/off_policy/mean$", "^staleness/", "^off_policy/mean_smoothed$", "^$"],
    ids=["unrelated", "whole-names-only", "new-names", "longer-name", "empty-match"],
)
@DUAL
def test_a_regex_matching_no_old_key_is_left_alone(pattern, dual):
    result = rewrite(pattern, dual, extra=("eval/off_policy/mean", "off_policy/mean_smoothed"))
    assert result.new is None
    assert result.review is None
    assert not result.matched & MIGRATION.old_names
    assert result.matched == result.wanted


def test_old_keys_that_are_only_removed_keep_the_pattern_in_dual_mode():
    result = rewrite("^dispatcher/off_policy/", dual=True)
    assert result.matched == {"dispatcher/off_policy/max", "dispatcher/off_policy/mean"}
    assert result.wanted == result.matched  # nothing replaces them: nothing to add
    assert (result.new, result.review) == (None, None)
    replaced = rewrite("^dispatcher/off_policy/", dual=False)
    assert replaced.wanted == frozenset()
    assert replaced.new is not None
    assert not matches(replaced.new, KNOWN)


@DUAL
def test_renames_composed_over_a_range_of_steps(dual):
    migration = find_mapping("prime-rl").migration(to="2026.08.21")
    result = rewrite("^dispatcher/off_policy_level", dual, migration=migration)
    keys = migration.old_names | migration.new_names
    level = {n for n in migration.old_names if n.startswith("dispatcher/off_policy_level")}
    assert len(level) == 4  # two steps: _max -> /max (#3285) -> dispatcher/off_policy/max (#3313)
    assert result.matched == level
    assert result.new is not None
    now = {fate.new for name in level if (fate := migration.fate(name)) and fate.new}
    assert matches(result.new, keys) == (level | now if dual else now)


@DUAL
def test_ignore_case(dual):
    assert rewrite("^OFF_POLICY/MEAN$", dual).matched == frozenset()
    result = rewrite("^OFF_POLICY/MEAN$", dual, ignore_case=True)
    assert result.matched == {"off_policy/mean"}
    assert result.new is not None
    wanted = {"off_policy/mean", "staleness/rollout/mean"} if dual else {"staleness/rollout/mean"}
    assert matches(result.new, KNOWN, re.IGNORECASE) == wanted


@DUAL
@pytest.mark.parametrize("pattern", ["(?i)^OFF_POLICY/MEAN$", "(?i)Off_Policy/M"], ids=str)
def test_global_inline_flags_stay_at_the_start(pattern, dual):
    result = rewrite(pattern, dual)
    assert result.new is not None
    assert result.new.startswith("(?i)")
    assert result.new.count("(?i)") == 1  # Python's re refuses global flags elsewhere
    assert matches(result.new, KNOWN) == expected(pattern, KNOWN, dual)


@pytest.mark.parametrize("pattern", ["[", "off_policy/(mean", "*max", "off_policy/mean)"])
def test_a_pattern_that_is_not_a_regex_needs_review(pattern):
    result = rewrite(pattern)
    assert result.new is None
    assert result.review is not None
    assert result.review.startswith("not a valid regex (")
    assert result.matched == result.wanted == frozenset()


def test_a_catastrophic_pattern_is_refused_in_bounded_time(monkeypatch):
    # The match is cut by its timeout (an exponential search would take minutes): the review
    # says so. The bound itself is the regex package's timeout, on the system's clock.
    monkeypatch.setattr(regexes, "MATCH_TIMEOUT", 0.05)  # the engine's own budget
    result = rewrite("(a|aa)+$", extra=("a" * 40 + "!",))
    assert result == RegexRewrite(frozenset(), frozenset(), review="too slow to analyse safely")


def test_a_pattern_is_judged_within_its_total_budget(monkeypatch):
    monkeypatch.setattr(regexes, "TOTAL_TIMEOUT", 1e-9)
    result = rewrite("^off_policy/mean$")
    assert result.new is None
    assert result.review == "too slow to analyse safely"


def test_a_rewrite_that_cannot_be_verified_needs_review():
    # in verbose mode a comment runs to the end: every appended alternative would be swallowed
    result = rewrite("(?x)^off_policy/mean$  # the mean")
    assert result.matched == {"off_policy/mean"}
    assert result.new is None
    assert result.review == "no rewrite matches exactly the renamed keys"


# An old name is substituted only where it is spelled out whole, never inside a longer name the
# mapping does not touch (with only the mapping's names known, nothing else would catch it).
@DUAL
def test_whole_names_only_when_substituting(dual):
    pattern = "^(?:eval/off_policy/mean|off_policy/mean)$"
    result = rewrite(pattern, dual)
    assert result.new is not None
    keys = ["eval/off_policy/mean", "eval/staleness/rollout/mean", *NAMES]
    want = {"eval/off_policy/mean", NAMES[1], *NAMES[:dual]}  # dual: the old name too
    assert matches(result.new, keys) == want
