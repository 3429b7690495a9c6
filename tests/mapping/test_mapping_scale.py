"""A large mapping plans in time linear in its size.

Composing steps, the anchors (a greedy set cover) and the name sets the walk asks for used to
be quadratic or worse: 10,000 entries took about a minute to plan the demo project. These tests
count work, and plan with a mapping ten times larger (a quadratic step would make the suite
crawl); none asserts a time: timings are the benchmarks' job.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
import yaml
from helpers import FIXTURES

import wbmigrate.mapping.compose as compose_module
from wbmigrate.mapping import MappingError, Removal, Step, part_cover
from wbmigrate.mapping.compose import compose
from wbmigrate.mapping.load import find_mapping
from wbmigrate.mapping.parse import parse_mapping
from wbmigrate.rewrite import rewrite

WORDS = ["loss", "reward", "entropy", "kl", "grad", "policy", "value", "adv", "tok", "batch"]
DEMO = [
    (json.loads(path.read_text()), path.parent.name)
    for path in sorted((FIXTURES / "demo-project").rglob("*.json"))
]


def steps_of(entries: int, per_step: int = 10) -> tuple[Step, ...]:
    """`entries` renames and removals over `entries / per_step` steps. Each step renames again
    the fresh names the step before introduced (chains of three names) and removes a name
    whose equivalent the next step renames, so composing has work to do in every step."""
    steps: list[Step] = []
    fresh: list[str] = []
    k = 0
    for s in range(entries // per_step):
        renamed = {old: f"v{s}/{old}" for old in fresh[: (per_step - 1) // 2]}
        fresh = []
        while len(renamed) < per_step - 1:
            old = f"{WORDS[k % len(WORDS)]}/{WORDS[k // 7 % len(WORDS)]}_{k}/m{k}"
            renamed[old] = f"new/{old}"
            fresh.append(renamed[old])
            k += 1
        removed = {f"gone/x{s}": Removal("dropped", fresh[0])}
        date = dt.date(2020, 1, 1) + dt.timedelta(days=s)
        steps.append(Step(f"{s}.0", date, "", "", renamed, removed, (), ""))
    demo = find_mapping("prime-rl").steps[-1]  # so the demo specs have something to change
    return (*steps, dt_replace(demo, len(steps)))


def dt_replace(step: Step, s: int) -> Step:
    date = dt.date(2020, 1, 1) + dt.timedelta(days=s)
    return Step(f"{s}.0", date, step.source, step.summary, step.renamed, step.removed, (), "")


def plan_all(steps: tuple[Step, ...]) -> int:
    """Everything planning asks of a mapping: compose, anchors, name sets, then the demo."""
    migration = compose("scale", steps)
    assert migration.anchor_bytes
    assert migration.known_names
    assert migration.mention
    changes = 0
    for spec, folder in DEMO:
        kind = {"reports": "report", "workspaces": "workspace"}.get(folder, "automation")
        changes += len(rewrite(spec, migration, kind=kind).changes)
    return changes


def test_composing_advances_only_the_names_a_step_moves(monkeypatch):
    """Each step advances the names it renames or removes, not every name so far."""
    calls = []
    real = compose_module._advance
    monkeypatch.setattr(compose_module, "_advance", lambda r, s: calls.append(r.old) or real(r, s))
    for entries in (1_000, 10_000):
        steps = steps_of(entries)  # loads the bundled mapping, which composes its own steps
        calls.clear()
        compose("scale", steps)
        assert 0 < len(calls) <= sum(len(s.renamed) + len(s.removed) for s in steps)


def test_chains_and_equivalents_compose_as_before():
    steps = steps_of(40, per_step=4)
    migration = compose("scale", steps)
    first = next(iter(steps[0].renamed))
    assert migration.resolve(first).chain == (first, f"new/{first}", f"v1/new/{first}")
    assert migration.resolve("gone/x0").equivalent == f"v1/new/{first}"  # followed on


def test_the_anchor_cover_covers_every_name_with_few_parts():
    names = [f"{WORDS[i % 10]}/{WORDS[i // 10 % 10]}_{i}/m{i}" for i in range(20_000)]
    anchors = part_cover(names)
    assert set(anchors) <= set(WORDS)
    assert all(any(a in name for a in anchors) for name in names)
    assert part_cover(["a/loss", "b/loss", "c/acc", "/"]) == ("loss", "acc", "/")
    prime_2026 = find_mapping(FIXTURES / "mappings/valid/prime-rl-2026.yaml").migration()
    assert prime_2026.anchor_bytes == (b"off_policy", b"dispatcher")  # a run of words of each name
    prime = find_mapping("prime-rl").migration()  # the whole history: 602 names, 34 anchors
    anchors = [anchor.decode() for anchor in prime.anchor_bytes]
    assert all(any(a in name for a in anchors) for name in prime.old_names)
    assert len(anchors) == 34
    assert prime.old_names is prime.old_names  # built once per migration


@pytest.mark.slow
@pytest.mark.parametrize("per_step", [10, 10_000])  # many small steps; one big step
def test_a_mapping_ten_times_larger_plans_the_same(per_step):
    small, large = steps_of(1_000, min(per_step, 1_000)), steps_of(10_000, per_step)
    assert plan_all(small) == plan_all(large) > 0  # the same demo changes either way


def test_anchor_candidates_grow_linearly_with_a_name():
    from wbmigrate.mapping import RUN_WORDS, name_parts

    assert {"off_policy", "off_policy_level_max", "dispatcher"} <= name_parts(
        "dispatcher/off_policy_level_max"
    )
    assert "of" not in name_parts("x/of_it")  # too short to skip any text
    long = "_".join(f"w{i:03d}" for i in range(500))
    assert len(name_parts(long)) <= RUN_WORDS * 500 + 1


def mapping_yaml(tables: list[dict[str, str]], distinct: list[list[str]] | None = None) -> str:
    """A mapping file with one step of metric renames per table, as a user would write it."""
    steps = [
        {
            "version": f"{s}.0",
            "date": dt.date(2020, 1, 1) + dt.timedelta(days=s),
            "source": "https://example.com/pull/1",
            "annotation": "Boundary.",
            "metrics": {"renamed": renamed},
        }
        for s, renamed in enumerate(tables)
    ]
    document = {"format": 1, "id": "scale", "title": "Scale", "sources": ["https://example.com"]}
    return yaml.safe_dump({**document, "distinct": distinct or [], "steps": steps}, sort_keys=False)


def chained_tables(steps: int) -> list[dict[str, str]]:
    """Each step renames a fresh name and again the name the step before renamed into, so
    every step has names that carry on from earlier ones."""
    return [
        {f"a{s}/x": f"b{s}/x", **({f"b{s - 1}/x": f"c{s - 1}/x"} if s else {})}
        for s in range(steps)
    ]


def times_each_step_composed(monkeypatch, text: str, broken: bool) -> int:
    """Load `text` (and compose all its steps when it is valid), counting how often any one
    step is composed."""
    counts: dict[str, int] = {}
    real = compose_module._introduced

    def counting(step: Step):
        counts[step.version] = counts.get(step.version, 0) + 1
        return real(step)

    monkeypatch.setattr(compose_module, "_introduced", counting)
    if broken:
        with pytest.raises(MappingError, match="cycle across steps"):
            parse_mapping(text, "m.yaml")
    else:
        parse_mapping(text, "m.yaml").migration()
    return max(counts.values())


@pytest.mark.parametrize("broken", [False, True], ids=["valid", "a cycle in every step"])
def test_loading_composes_each_step_a_fixed_number_of_times(monkeypatch, broken):
    """Validating composes what comes before each step: done step by step, each step is
    composed a few times whatever the number of steps; recomposing every earlier step for each
    step composed the first one once per step (quadratic)."""
    counts = []
    for steps in (20, 200):
        tables = chained_tables(steps)
        if broken:  # each step renames back what the one before renamed: a cycle across steps
            tables = [
                {**t, f"c{s - 2}/x": f"b{s - 2}/x"} if s > 1 else t for s, t in enumerate(tables)
            ]
        distinct = [["a0/x", "a1/x"]]
        text = mapping_yaml(tables, distinct)
        counts.append(times_each_step_composed(monkeypatch, text, broken))
    assert counts[0] == counts[1] <= 4


def test_cycles_across_many_steps_name_their_whole_chain():
    """Each step's check sees exactly the steps above it composed: a name renamed on and on,
    then back to where it began, is a cycle through every name it had."""
    steps = 30
    tables: list[dict[str, str]] = [{f"n{s}": f"n{s + 1}"} for s in range(steps)]
    tables.append({f"n{steps}": "n0"})
    with pytest.raises(MappingError) as caught:
        parse_mapping(mapping_yaml(tables), "m.yaml")
    [problem] = caught.value.problems
    loop = " -> ".join(f"n{s}" for s in range(steps + 1))
    assert (problem.code, problem.message) == ("cycle", f"cycle across steps: {loop} -> n0")
