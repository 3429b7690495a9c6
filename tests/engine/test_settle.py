"""Planning while the key census still reads: a spec walked before the history is known and
then settled with it is the very Rewrite made with the history from the start."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from helpers import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import MIGRATION, MODES, OLD, SPECS

from wbmigrate.engine.history import History, RunRef
from wbmigrate.engine.model import Mode, Options
from wbmigrate.rewrite import provisional, rewrite, settle

NEW = sorted({f.new for name in OLD if (f := MIGRATION.fate(name)) and f.new})
OLD_RUN = RunRef("old-1", "id-old-1", "2026-10-01T12:00:00Z")
NEW_RUN = RunRef("new-1", "id-new-1", "2026-11-09T12:00:00Z")
HISTORIES = st.one_of(
    st.none(),
    st.builds(
        History,
        st.frozensets(st.sampled_from(OLD + NEW + ["train/loss"])),
        st.integers(0, 3),
        st.none() | st.integers(3, 900),
        st.sampled_from([None, OLD_RUN]),
        st.sampled_from([None, NEW_RUN]),
    ),
)
CASES = sorted(FIXTURES.glob("cases/*/*/before.json"))


def both_ways(spec, kind, options):
    direct = rewrite(spec, MIGRATION, kind=kind, name="n", options=options)
    before = replace(options, history=None)
    later = settle(provisional(spec, MIGRATION, kind=kind, name="n", options=before), options)
    return direct, later


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SPECS, MODES, HISTORIES, st.booleans())
def test_settled_is_what_rewrite_makes_with_the_history(spec, mode, history, annotate):
    options = Options(mode=mode, annotate=annotate, history=history)
    direct, later = both_ways(spec, None, options)
    assert later == direct
    assert later.notes == direct.notes  # the warnings, in their places


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
@pytest.mark.parametrize(
    "history",
    [
        None,
        History(frozenset(), 2),  # nothing logged: every new key warns
        History(frozenset(OLD), 2, 9, OLD_RUN, None),  # not upgraded
        History(frozenset(OLD + NEW), 3, None, OLD_RUN, NEW_RUN),  # upgraded: the boundary
    ],
    ids=["offline", "nothing-logged", "not-upgraded", "upgraded"],
)
@pytest.mark.parametrize("mode", [Mode.DUAL, Mode.REPLACE])
def test_every_case_settles_as_it_rewrites(case, history, mode):
    kind = case.parent.parent.name
    spec = json.loads(case.read_text())
    direct, later = both_ways(spec, kind, Options(mode=mode, history=history))
    assert later == direct


def test_a_regex_is_walked_again_with_the_keys_logged():
    spec = {
        "blocks": [
            {
                "type": "panel-grid",
                "metadata": {
                    "panelBankSectionConfig": {
                        "panels": [
                            {
                                "viewType": "Run History Line Plot",
                                "config": {"useMetricRegex": True, "metricRegex": "^custom/.*"},
                            }
                        ]
                    }
                },
            }
        ]
    }
    options = Options(history=History(frozenset({"custom/off_policy/mean"}), 1))
    found = provisional(spec, MIGRATION, kind="report", options=replace(options, history=None))
    assert found.walk.needs_history
    direct, later = both_ways(spec, "report", options)
    assert later == direct
