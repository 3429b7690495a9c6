"""Generated specs for property tests: random panels, run sets and alerts, old keys in random
places, decoys and unrelated content around them."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from wbmigrate import find_mapping
from wbmigrate.engine.model import Mode

MIGRATION = find_mapping("prime-rl").migration()
OLD = sorted(MIGRATION.old_names)
DECOYS = [
    "eval/off_policy/mean",
    "off_policy/mean_smoothed",
    "my_off_policy/max",
    "off_policy",
    "loss",
    "staleness/rollout/mean",
    "_step",
]
KEYS = st.sampled_from(OLD + DECOYS)
ACCESSORS = st.one_of(
    KEYS,
    KEYS.map("summary:{}".format),
    KEYS.map("config:{}.value".format),
    st.just("run:displayName"),
)
# Unrelated content W&B or a future version may add: it must come through untouched.
JUNK = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-9, 9),
        st.floats(-1e6, 1e6),
        st.text(max_size=8),
        KEYS,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["x", "y", "zz"]), inner, max_size=3),
    ),
    max_leaves=8,
)


def _with_junk(draw, obj):
    if draw(st.booleans()):
        obj[draw(st.sampled_from(["futureField", "uiState", "__extra"]))] = draw(JUNK)
    return obj


@st.composite
def panels(draw):
    kind = draw(
        st.sampled_from(
            ["line", "scalar", "bar", "scatter", "parallel", "vega", "media", "markdown", "unknown"]
        )
    )
    keys = draw(st.lists(KEYS, max_size=4))
    config = {
        "line": lambda: {
            "metrics": keys,
            "xAxis": draw(st.sampled_from(["_step", *OLD[:3]])),
            "expressions": [f"${{{k}}}*2" for k in keys[:1]],
            "overrideColors": {f"run1:{k}": "#f00" for k in keys[:1]},
            "metricRegex": draw(st.sampled_from(["off_policy/.*", "loss", ""])),
            "useMetricRegex": draw(st.booleans()),
        },
        "scalar": lambda: {"metrics": keys[:1]},
        "bar": lambda: {"metrics": keys},
        "scatter": lambda: {"xAxis": draw(ACCESSORS), "yAxis": draw(ACCESSORS)},
        "parallel": lambda: {
            "columns": [{"accessor": a} for a in draw(st.lists(ACCESSORS, max_size=3))]
        },
        "vega": lambda: {
            "userQuery": {
                "queryFields": [
                    {
                        "name": "runSets",
                        "fields": [
                            {
                                "name": "history",
                                "args": [{"name": "keys", "value": ["_step", *keys]}],
                            }
                        ],
                    }
                ]
            },
            "fieldSettings": {"y": draw(KEYS)},
        },
        "media": lambda: {"mediaKeys": keys},
        "markdown": lambda: {"value": " and ".join(keys)},
        "unknown": lambda: {"anything": keys},
    }[kind]()
    view_type = {
        "line": "Run History Line Plot",
        "scalar": "Scalar Chart",
        "bar": "Bar Chart",
        "scatter": "Scatter Plot",
        "parallel": "Parallel Coordinates Plot",
        "vega": "Vega2",
        "media": "Media Browser",
        "markdown": "Markdown Panel",
        "unknown": "Future Panel",
    }[kind]
    return _with_junk(
        draw,
        {
            "__id__": draw(st.text("abc", min_size=1, max_size=4)),
            "viewType": view_type,
            "config": _with_junk(draw, config),
        },
    )


@st.composite
def runsets(draw):
    filters = [
        {
            "key": {
                "section": draw(st.sampled_from(["summary", "config", "run"])),
                "name": draw(KEYS),
            },
            "op": ">=",
            "value": draw(st.integers()),
        }
        for _ in range(draw(st.integers(0, 2)))
    ]
    columns = draw(st.lists(ACCESSORS, max_size=3, unique=True))
    return _with_junk(
        draw,
        {
            "name": "Run set",
            "filters": {"filterFormat": "filterV2", "filters": filters},
            "sort": {
                "keys": [{"key": {"section": "summary", "name": draw(KEYS)}, "ascending": True}]
            },
            "runFeed": {"columnVisible": dict.fromkeys(columns, True), "columnOrder": columns},
        },
    )


@st.composite
def reports(draw):
    grids = [
        {
            "type": "panel-grid",
            "metadata": {
                "runSets": draw(st.lists(runsets(), max_size=2)),
                "panelBankSectionConfig": {"panels": draw(st.lists(panels(), max_size=4))},
            },
        }
        for _ in range(draw(st.integers(1, 2)))
    ]
    text = [{"type": "paragraph", "children": [{"text": draw(st.sampled_from(OLD + DECOYS))}]}]
    return {"version": 5, "panelSettings": {"xAxis": draw(KEYS)}, "blocks": text + grids}


@st.composite
def workspaces(draw):
    return {
        "section": {
            "runSets": draw(st.lists(runsets(), max_size=1)),
            "panelBankConfig": {
                "settings": {"searchQuery": draw(st.sampled_from(["", "off_policy", "loss|eval"]))},
                "sections": [{"name": "s", "panels": draw(st.lists(panels(), max_size=4))}],
                "panelConfigOverrides": {
                    k: {"config": {"metrics": [k]}} for k in draw(st.lists(KEYS, max_size=2))
                },
            },
        }
    }


@st.composite
def triggers(draw):
    body = {"name": draw(KEYS), "agg_op": None, "window_size": 1, "cmp_op": "$gt", "threshold": 1}
    inner = {
        "run_filter": '{"$and":[]}',
        "run_metric_filter": {
            draw(st.sampled_from(["threshold_filter", "change_filter", "zscore_filter"])): body
        },
    }
    return {
        "name": "alert",
        "description": draw(st.sampled_from(["", "about off_policy/mean"])),
        "enabled": draw(st.booleans()),
        "event": {"eventType": "RUN_METRIC", "filter": json.dumps(inner)},
        "action": {"title": "t", "message": draw(KEYS)},
    }


SPECS = st.one_of(reports(), workspaces(), triggers())
MODES = st.sampled_from([Mode.DUAL, Mode.REPLACE])
