"""`distinct:` groups: series a mapping never merges, named by any of their names, expanded to
every name across the mapping's steps, and validated against every step and their composition."""

from __future__ import annotations

import json
import textwrap

import pytest
from helpers import FIXTURES

from wbmigrate.errors import Level
from wbmigrate.mapping import MappingError
from wbmigrate.mapping.load import find_mapping, load_mapping
from wbmigrate.mapping.parse import parse_mapping
from wbmigrate.report import mapping_table

HEAD = """\
format: 1
id: demo
title: Demo
sources: [https://example.com/demo]
"""


def mapping_text(groups: str, *steps: str) -> str:
    """A mapping with `groups` under `distinct:` and one step per metrics table in `steps`."""
    text = HEAD + "distinct:\n" + textwrap.indent(textwrap.dedent(groups), "  ") + "steps:\n"
    for n, metrics in enumerate(steps, start=1):
        text += (
            f'  - version: "{n}"\n    date: 2026-01-{n:02}\n'
            f"    source: https://example.com/demo/pull/{n}\n    annotation: Boundary.\n"
            "    metrics:\n" + textwrap.indent(textwrap.dedent(metrics), "      ")
        )
    return text


def problems(text: str) -> list[tuple[str, int]]:
    """Every (code, line) the file's validation finds, errors and warnings alike."""
    try:
        return [(w.code, w.line) for w in parse_mapping(text, "m.yaml").warnings]
    except MappingError as exc:
        return [(p.code, p.line) for p in exc.problems]


def check_rejected(text: str, code: str, line: int, message: str) -> None:
    with pytest.raises(MappingError) as caught:
        parse_mapping(text, "m.yaml")
    errors = [(p.code, p.line) for p in caught.value.problems]
    assert errors == [(code, line)]
    assert message in caught.value.problems[0].message


def check_valid(text: str) -> None:
    assert problems(text) == []


REJECTED = [
    pytest.param(
        "- [loss/a, loss/b]\n",
        ["renamed: {loss/a: loss, loss/b: loss}\n"],
        "'loss/a' and 'loss/b' would both be shown as 'loss'",
        id="direct-merge",
    ),
    pytest.param(
        "- [a/wait, a/flight]\n",
        ["renamed: {a/wait: b/wait}\n", "renamed: {b/wait: b, a/flight: b}\n"],
        "'a/wait' and 'a/flight' would both be shown as 'b'",
        id="merge-through-two-steps",
    ),
    pytest.param(
        "- [c/wait, c/flight]\n",
        ["renamed: {c/wait: c/both}\n", "renamed: {c/flight: c/both}\n"],
        "would both be shown as 'c/both'",
        id="merge-in-a-later-step",
    ),
    pytest.param(
        "- [loss/a, loss/b]\n",
        ["renamed: {loss/a: loss/b}\n"],
        "'loss/a' and 'loss/b' would both be shown as 'loss/b' after migration; their series "
        "must stay apart (one becomes the other)",
        id="member-renamed-into-member",
    ),
    pytest.param(
        "- [old/a, new/a]\n",
        ["renamed: {old/a: mid/a}\n", "renamed: {mid/a: new/a}\n"],
        "(one becomes the other)",
        id="old-and-new-name-of-one-metric",
    ),
    pytest.param(
        "- [q/flight, q/queue]\n",
        ["removed: {q/queue: {reason: folded, equivalent: q/flight}}\n"],
        "'q/flight' and 'q/queue' would both be shown as 'q/flight'",
        id="removed-with-a-partner-as-equivalent",
    ),
    pytest.param(
        "- [q/flight, q/queue]\n",
        [
            "renamed: {q/flight: s/flight}\n"
            "removed: {q/queue: {reason: folded, equivalent: s/flight}}\n"
        ],
        "would both be shown as 's/flight'",
        id="removed-with-a-partners-new-name-as-equivalent",
    ),
    pytest.param(
        "- [q/flight, q/queue]\n",
        [
            "removed: {q/queue: {reason: folded, equivalent: q/flight}}\n",
            "renamed: {q/flight: s/flight}\n",
        ],
        "would both be shown as 's/flight'",
        id="equivalent-renamed-later",
    ),
    pytest.param(
        "- [q/flight, q/queue]\n",
        [
            "removed:\n"
            "  q/flight: {reason: summed, equivalent: q/total}\n"
            "  q/queue: {reason: summed, equivalent: q/total}\n"
        ],
        "would both be shown as 'q/total'",
        id="both-removed-into-one-equivalent",
    ),
]


@pytest.mark.parametrize(("groups", "steps", "message"), REJECTED)
def test_a_merge_of_two_members_is_rejected(groups, steps, message):
    text = mapping_text(groups, *steps)
    check_rejected(text, "distinct-merged", 6, message)


def test_a_merge_is_reported_at_the_later_member():
    groups = "- - loss/a\n  - loss/c\n  - loss/b\n"
    text = mapping_text(groups, "renamed: {loss/a: loss, loss/b: loss, loss/c: loss/cc}\n")
    check_rejected(text, "distinct-merged", 8, "'loss/a' and 'loss/b'")


ACCEPTED = [
    pytest.param("- [s/flight, s/queue]\n", id="by-new-names"),
    pytest.param("- [q/flight, q/queue]\n", id="by-old-names"),
    pytest.param("- [q/flight, s/queue, s/total]\n", id="by-old-and-new-names"),
    pytest.param("- [s/flight, s/queue]\n- [s/flight, s/total]\n", id="overlapping-groups"),
]
STAGED = (
    "renamed: {q/flight: s/flight, q/total: s/total}\n",
    "renamed: {q/queue: s/queue}\nremoved: {q/old: {reason: equal, equivalent: s/total}}\n",
)


@pytest.mark.parametrize("groups", ACCEPTED)
def test_groups_that_stay_apart_are_valid(groups):
    check_valid(mapping_text(groups, *STAGED))


@pytest.mark.parametrize(
    ("groups", "code", "line"),
    [
        pytest.param("- [s/flight]\n", "distinct-size", 6, id="one-member"),
        pytest.param("- []\n", "distinct-size", 6, id="no-member"),
        pytest.param("- [s/flight, s/queue, s/flight]\n", "distinct-duplicate", 6, id="twice"),
        pytest.param("- - s/flight\n  - s/flight\n", "distinct-duplicate", 7, id="twice-block"),
        pytest.param("- s/flight\n", "wrong-type", 6, id="group-not-a-list"),
        pytest.param("- [s/flight, {a: b}]\n", "wrong-type", 6, id="member-not-a-string"),
        pytest.param("- [s/flight, ' ']\n", "empty-name", 6, id="empty-member"),
        pytest.param("- [s/flight, 's/queue ']\n", "bad-name", 6, id="spaced-member"),
    ],
)
def test_malformed_groups(groups, code, line):
    with pytest.raises(MappingError) as caught:
        parse_mapping(mapping_text(groups, *STAGED), "m.yaml")
    assert [(p.code, p.line) for p in caught.value.problems] == [(code, line)]


@pytest.mark.parametrize("value", ["s/flight", "{a: b}", ""], ids=["string", "mapping", "null"])
def test_distinct_must_be_a_list(value):
    text = mapping_text("", *STAGED).replace("distinct:\n", f"distinct: {value}\n")
    assert problems(text) == [("wrong-type", 5)]


def test_a_malformed_group_does_not_shift_the_places_of_others():
    text = mapping_text("- s/flight\n- [s/queue]\n", *STAGED)
    assert problems(text) == [("wrong-type", 6)]


def test_an_unknown_member_is_a_warning():
    text = mapping_text("- [s/flight, s/flihgt]\n", *STAGED)
    mapping = parse_mapping(text, "m.yaml")
    (warning,) = mapping.warnings
    assert (warning.code, warning.line, warning.level) == (
        "distinct-unknown",
        6,
        Level.WARNING,
    )
    assert "'s/flihgt' is not a name this mapping renames, removes or renames into" in str(warning)


def test_groups_expand_to_every_name_across_versions():
    mapping = parse_mapping(mapping_text("- [q/flight, s/queue, s/total]\n", *STAGED), "m.yaml")
    expected = {"q/flight", "s/flight", "q/queue", "s/queue", "q/total", "s/total"}
    for migration in (mapping.migration(), mapping.migration(to="1"), mapping.migration("2")):
        assert migration.distinct == (frozenset(expected),)
        assert migration.distinct_members == (
            (
                frozenset({"q/flight", "s/flight"}),
                frozenset({"q/queue", "s/queue"}),
                frozenset({"q/total", "s/total"}),
            ),
        )


def test_an_equivalent_is_not_a_name_of_its_series():
    """`q/old` is shown as `s/total` after migration, but it was never the total's name."""
    mapping = parse_mapping(mapping_text("- [s/flight, s/total]\n", *STAGED), "m.yaml")
    assert "q/old" not in mapping.migration().distinct[0]


def test_many_to_one_names_belong_to_the_merged_series_only():
    steps = ("renamed: {a/x: m, a/y: m}\n",)
    mapping = parse_mapping(mapping_text("- [a/x, b]\n- [m, b]\n", *steps), "m.yaml")
    assert mapping.migration().distinct_members == (
        (frozenset({"a/x", "m"}), frozenset({"b"})),
        (frozenset({"a/x", "a/y", "m"}), frozenset({"b"})),
    )


def test_a_mapping_without_groups_has_none():
    migration = load_mapping(FIXTURES / "mappings/valid/chains.yaml").migration()
    assert (migration.distinct, migration.distinct_members) == ((), ())


def test_prime_rl_keeps_rollout_staleness_and_its_parts_apart():
    migration = find_mapping("prime-rl").migration()
    for stat in ("mean", "max"):
        parts = [f"staleness/rollout/{part}{stat}" for part in ("", "in_flight/", "in_queue/")]
        old = [name.replace("staleness/rollout/", "off_policy/") for name in parts]
        members = tuple(frozenset({new, was}) for new, was in zip(parts, old, strict=True))
        assert members in migration.distinct_members
        assert frozenset(parts + old) in migration.distinct
    grouped = frozenset[str]().union(*migration.distinct)
    assert not {"off_policy/token/max", "staleness/token/mean"} & grouped


def test_prime_rl_groups_hold_before_the_split_too():
    migration = find_mapping("prime-rl").migration(to="2026.08.21")
    (flight,) = [g for g in migration.distinct if "off_policy/in_flight/mean" in g]
    assert "off_policy/in_queue/mean" in flight


def test_mappings_show_lists_the_groups():
    mapping = find_mapping("prime-rl")
    migration = mapping.migration()
    text = mapping_table.to_text(mapping, migration)
    assert "Distinct series (2): each group's metrics are never merged into one\n" in text
    assert "\n  1  staleness/rollout/mean            also off_policy/mean\n" in text
    assert "\n     staleness/rollout/in_queue/max    also off_policy/in_queue/max\n" in text
    markdown = mapping_table.to_markdown(mapping, migration)
    assert "| 1 | `staleness/rollout/mean` | `off_policy/mean` |\n" in markdown
    assert "|  | `staleness/rollout/in_flight/mean` | `off_policy/in_flight/mean` |\n" in markdown
    data = json.loads(mapping_table.to_json(mapping, migration))
    assert data["distinct"][1][2] == {
        "metric": "staleness/rollout/in_queue/max",
        "names": ["off_policy/in_queue/max", "staleness/rollout/in_queue/max"],
    }
