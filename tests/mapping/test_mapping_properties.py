"""Property tests: random valid mappings load without errors and compose like one-by-one steps."""

from __future__ import annotations

import copy
import datetime as dt

import pytest
import yaml
from helpers import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate.mapping import Action, MappingError, Removal, Step
from wbmigrate.mapping.compose import Composer, compose
from wbmigrate.mapping.parse import parse_mapping

NAMES = [f"m{i}/x" for i in range(40)]


@st.composite
def step_tables(draw):
    """Rename/removal tables of 1-4 steps that never reuse a retired name."""
    fresh = list(NAMES)
    alive: list[str] = []
    retired: set[str] = set()
    steps = []
    for _ in range(draw(st.integers(1, 4))):
        alive += [fresh.pop(0) for _ in range(draw(st.integers(0, 3)))]
        olds = draw(st.lists(st.sampled_from(alive), unique=True)) if alive else []
        staying = [name for name in alive if name not in olds]
        renamed, removed = {}, {}
        for old in olds:
            if draw(st.booleans()) or not fresh:
                targets = [fresh[0], *staying] if fresh else staying
                if not targets:
                    continue
                new = draw(st.sampled_from(targets))
                if fresh and new == fresh[0]:
                    fresh.pop(0)
                renamed[old] = new
            else:
                equivalent = draw(st.sampled_from([None, *staying]))
                removed[old] = Removal("gone", equivalent)
        retired |= set(renamed) | set(removed)
        alive = [n for n in alive if n not in retired] + [
            n for n in renamed.values() if n not in alive
        ]
        steps.append((renamed, removed))
    return steps


def _yaml(steps) -> str:
    document = {
        "format": 1,
        "id": "random",
        "title": "Random",
        "sources": ["https://example.com"],
        "steps": [
            {
                "version": str(i),
                "date": dt.date(2026, 1, 1 + i),
                "source": "https://example.com",
                "annotation": "Boundary.",
                "metrics": {
                    "renamed": renamed,
                    "removed": {
                        old: {
                            "reason": r.reason,
                            **({"equivalent": r.equivalent} if r.equivalent else {}),
                        }
                        for old, r in removed.items()
                    },
                },
            }
            for i, (renamed, removed) in enumerate(steps)
        ],
    }
    return yaml.safe_dump(document, sort_keys=False)


def _one_by_one(steps, name):
    """The oracle: follow one name through the steps, starting where it first appears."""
    start = next((i for i, (ren, rem) in enumerate(steps) if name in ren or name in rem), None)
    if start is None:
        return (Action.UNTOUCHED, None, None)
    current, removal = name, None
    for renamed, removed in steps[start:]:
        if removal is None and current in renamed:
            current = renamed[current]
        elif removal is None and current in removed:
            removal = removed[current]
            current = removal.equivalent
        elif removal is not None and current in renamed:
            current = renamed[current]
        elif removal is not None and current in removed:  # the equivalent is gone too
            current = removed[current].equivalent
    if removal is not None:
        return (Action.REMOVED, None, current)
    return (Action.RENAMED, current, None)


@settings(max_examples=300, deadline=None)
@given(step_tables())
def test_valid_random_mappings_load_and_compose_like_single_steps(steps):
    mapping = parse_mapping(_yaml(steps), "random.yaml")
    assert not [w for w in mapping.warnings if w.code != "many-to-one"]
    migration = mapping.migration()
    for name in NAMES:
        got = migration.resolve(name)
        renamed = None if got.removed else got.new  # a removed name's `new` is its equivalent
        assert (got.action, renamed, got.equivalent) == _one_by_one(steps, name), name


@settings(max_examples=200, deadline=None)
@given(step_tables(), st.data())
def test_any_range_composes_like_its_steps(steps, data):
    mapping = parse_mapping(_yaml(steps), "random.yaml")
    first = data.draw(st.integers(0, len(steps) - 1))
    last = data.draw(st.integers(first, len(steps) - 1))
    migration = mapping.migration(str(first), str(last))
    for name in NAMES:
        got = migration.resolve(name)
        renamed = None if got.removed else got.new
        assert (got.action, renamed, got.equivalent) == _one_by_one(steps[first : last + 1], name)


ANY_NAME = st.sampled_from(NAMES[:6])
ANY_STEP = st.tuples(
    st.dictionaries(ANY_NAME, ANY_NAME, max_size=4),
    st.dictionaries(
        ANY_NAME, st.builds(Removal, st.just("gone"), st.none() | ANY_NAME), max_size=2
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(ANY_STEP, min_size=1, max_size=6))
def test_composing_step_by_step_is_composing_the_steps_so_far(tables):
    """Validation reads each step's earlier steps from one `Composer` fed a step at a time: at
    every step it holds what composing those steps at once gives, valid mapping or not."""
    steps = tuple(
        Step(str(i), dt.date(2026, 1, 1 + i), "", "", renamed, removed, (), "")
        for i, (renamed, removed) in enumerate(tables)
    )
    composed = Composer()
    for i, step in enumerate(steps):
        assert composed.metrics == dict(compose("m", steps[:i]).metrics)
        composed.add(step)
    assert composed.metrics == dict(compose("m", steps).metrics)


def _problems(text: str) -> list | None:
    """None when `text` loads; else the problems, which a MappingError must never leave empty."""
    try:
        parse_mapping(text, "fuzz.yaml")
    except MappingError as exc:
        return exc.problems
    return None


FIELDS = [
    "format",
    "id",
    "title",
    "sources",
    "steps",
    "version",
    "date",
    "source",
    "metrics",
    "config",
    "annotation",
    "renamed",
    "removed",
    "reason",
    "equivalent",
    "old",
    "new",
    "toml",
    "cli",
    "summary",
    "description",
    "a/x",
    "b/x",
    "",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False),
    st.sampled_from(FIELDS),
    st.dates(),
    st.text(max_size=5),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(FIELDS), inner, max_size=6)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_any_yaml_document_loads_or_fails_cleanly(document):
    problems = _problems(yaml.safe_dump(document))
    assert problems != []
    assert all(p.file == "fuzz.yaml" and p.line >= 1 for p in problems or ())


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_loads_or_fails_cleanly(text):
    assert _problems(text) != []


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _paths(child, (*prefix, i))


DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's: 5x faster
PRIME_RL = yaml.safe_load((REPO / "mappings/prime-rl.yaml").read_text())
PRIME_RL_PATHS = list(_paths(PRIME_RL))[1:]


# The whole-history mapping is 4,400 lines: each example dumps and parses it (0.15 s), so this
# property runs fewer examples than the others (300 took 95 s; 25 take 6 s of CPU).
@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PRIME_RL_PATHS), VALUES), min_size=1, max_size=3))
def test_damaged_prime_rl_loads_or_fails_cleanly(damage):
    document = copy.deepcopy(PRIME_RL)
    for path, value in damage:
        parent = document
        try:
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed this path
    assert _problems(yaml.dump(document, Dumper=DUMPER)) != []
