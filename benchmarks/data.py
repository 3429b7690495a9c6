"""Generated W&B specs for the benchmarks, modelled on the fixtures' shapes and sized like real
ones (5-500 KB). Deterministic: the same seed gives the same bytes."""

from __future__ import annotations

import datetime as dt
import json
import math
import random
from pathlib import Path
from typing import Any

from wbmigrate import find_mapping

OLD = sorted(find_mapping("prime-rl").migration().old_names)
KEYS = [
    f"{group}/{name}"
    for group in (
        "train",
        "eval",
        "perf",
        "optim",
        "batch",
        "env/math",
        "env/code",
        "mismatch_kl",
        "system",
    )
    for name in (
        "loss",
        "reward/mean",
        "reward/std",
        "tokens_per_s",
        "grad_norm",
        "entropy",
        "lr",
        "seq_len/mean",
        "seq_len/max",
        "truncated",
    )
]


def _panel(rng: random.Random, index: int, old_share: float) -> dict[str, Any]:
    def key() -> str:
        return rng.choice(OLD) if rng.random() < old_share else rng.choice(KEYS)

    kind = rng.choices(["line", "bar", "scalar", "scatter", "weave", "vega"], [10, 2, 2, 1, 2, 1])[
        0
    ]
    layout = {"x": index % 3 * 8, "y": index // 3 * 6, "w": 8, "h": 6}
    if kind == "line":
        config = {
            "chartTitle": f"Panel {index}",
            "xAxis": "step",
            "metrics": [key() for _ in range(rng.randint(1, 4))],
            "smoothingWeight": 0.6,
            "groupRunsLimit": 10,
            "showLegend": True,
            "overrideColors": {
                f"run{i}:{key()}": {"color": "#ff0000", "transparentColor": "#ff000019"}
                for i in range(rng.randint(0, 3))
            },
        }
        view_type = "Run History Line Plot"
    elif kind == "bar":
        config = {"chartTitle": f"Bars {index}", "metrics": [key(), key()], "vertical": False}
        view_type = "Bar Chart"
    elif kind == "scalar":
        config = {"chartTitle": f"Scalar {index}", "metrics": [key()], "groupAgg": "mean"}
        view_type = "Scalar Chart"
    elif kind == "scatter":
        config = {"xAxis": f"summary:{key()}", "yAxis": "config:lr.value"}
        view_type = "Scatter Plot"
    elif kind == "vega":
        config = {
            "panelDefId": "wandb/line/v0",
            "fieldSettings": {"x": "_step", "y": key()},
            "userQuery": {
                "queryFields": [
                    {
                        "name": "runSets",
                        "args": [
                            {"name": "runSets", "value": "${runSets}"},
                            {"name": "limit", "value": 500},
                        ],
                        "fields": [
                            {
                                "name": "history",
                                "args": [{"name": "keys", "value": ["_step", key()]}],
                                "fields": [],
                            }
                        ],
                    }
                ]
            },
        }
        view_type = "Vega2"
    else:
        config = {"panel2Config": {"exp": _weave(rng, key()), "panelId": "table"}}
        view_type = "Weave"
    return {"__id__": f"p{index:05d}", "layout": layout, "viewType": view_type, "config": config}


def _weave(rng: random.Random, key: str) -> dict[str, Any]:
    """A weave expression graph, the bulkiest part of real specs."""
    node: dict[str, Any] = {
        "nodeType": "var",
        "type": {"type": "list", "objectType": "run"},
        "varName": "runs",
    }
    for op in ("project-runs", "run-summary", "filter", "sort", "limit"):
        node = {
            "nodeType": "output",
            "type": {
                "type": "tagged",
                "tag": {
                    "type": "typedDict",
                    "propertyTypes": {
                        "entityName": "string",
                        "projectName": "string",
                        "run": "run",
                        "extra": [rng.random() for _ in range(4)],
                    },
                },
                "value": "any",
            },
            "fromOp": {"name": op, "inputs": {"obj": node}},
        }
    return {
        "nodeType": "output",
        "type": "any",
        "fromOp": {
            "name": "pick",
            "inputs": {"obj": node, "key": {"nodeType": "const", "type": "string", "val": key}},
        },
        "__userInput": True,
    }


def _runset(rng: random.Random, old_share: float) -> dict[str, Any]:
    columns = [
        f"summary:{rng.choice(OLD if rng.random() < old_share else KEYS)}"
        for _ in range(rng.randint(2, 8))
    ]
    return {
        "id": f"rs{rng.randrange(10**6)}",
        "name": "Run set",
        "enabled": True,
        "filters": {
            "filterFormat": "filterV2",
            "filters": [
                {
                    "key": {"section": "summary", "name": rng.choice(KEYS)},
                    "op": ">=",
                    "value": rng.random(),
                    "disabled": False,
                }
            ],
        },
        "runFeed": {
            "version": 2,
            "columnVisible": dict.fromkeys(columns, True),
            "columnOrder": columns,
            "pageSize": 10,
        },
        "sort": {"keys": [{"key": {"section": "run", "name": "createdAt"}, "ascending": False}]},
        "selections": {"root": 1, "bounds": [], "tree": []},
    }


def report(rng: random.Random, size: int, old_share: float = 0.1) -> dict[str, Any]:
    """A report spec of about `size` bytes of compact JSON."""
    blocks: list[dict[str, Any]] = [{"type": "paragraph", "children": [{"text": "Notes."}]}]
    spec = {
        "version": 5,
        "panelSettings": {"xAxis": "_step"},
        "blocks": blocks,
        "width": "readable",
        "authors": [],
        "discussionThreads": [],
    }
    used = len(json.dumps(spec))
    index = 0
    while used < size:
        panels = []
        for _ in range(rng.randint(3, 12)):
            panel = _panel(rng, index, old_share)
            index += 1
            panels.append(panel)
            used += len(json.dumps(panel, separators=(",", ":")))
        grid = {
            "type": "panel-grid",
            "children": [{"text": ""}],
            "metadata": {
                "openViz": True,
                "runSets": [_runset(rng, old_share)],
                "panelBankSectionConfig": {
                    "name": "Report Panels",
                    "type": "grid",
                    "panels": panels,
                },
            },
        }
        blocks.append(
            {
                "type": "markdown-block",
                "content": f"## Section {len(blocks)}\nMetrics of this part of the run.",
                "children": [{"text": ""}],
            }
        )
        blocks.append(grid)
        used += 600
    return spec


def sizes(rng: random.Random, count: int, low: int = 5_000, high: int = 500_000) -> list[int]:
    """Spec sizes spread evenly on a log scale between `low` and `high` bytes."""
    return [int(math.exp(rng.uniform(math.log(low), math.log(high)))) for _ in range(count)]


def report_texts(
    count: int, seed: int = 1, old_share: float = 0.1, low: int = 5_000, high: int = 500_000
) -> list[str]:
    rng = random.Random(seed)
    return [
        json.dumps(report(rng, size, old_share), separators=(",", ":"))
        for size in sizes(rng, count, low, high)
    ]


def trigger(rng: random.Random, index: int) -> dict[str, Any]:
    name = rng.choice(OLD) if rng.random() < 0.5 else rng.choice(KEYS)
    inner = {
        "run_filter": '{"$and":[]}',
        "run_metric_filter": {
            "threshold_filter": {
                "name": name,
                "agg_op": None,
                "window_size": 1,
                "cmp_op": "$gt",
                "threshold": 1,
            }
        },
        "metric_filter": None,
    }
    return {
        "__typename": "Trigger",
        "id": f"T{index}",
        "createdAt": "2026-09-01T00:00:00Z",
        "updatedAt": "2026-09-01T00:00:00Z",
        "name": f"alert-{index}",
        "description": "",
        "enabled": True,
        "event": {
            "__typename": "FilterEventTriggeringCondition",
            "eventType": "RUN_METRIC",
            "filter": json.dumps(inner, separators=(",", ":")),
        },
        "action": {
            "__typename": "NotificationTriggeredAction",
            "integration": {
                "__typename": "SlackIntegration",
                "id": "SW50OjE=",
                "teamName": "t",
                "channelName": "#alerts",
            },
            "title": "alert",
            "message": "m",
            "severity": "WARN",
        },
    }


START = dt.datetime(2026, 1, 1)


def runs(count: int, seed: int = 1) -> list[dict[str, Any]]:
    """Runs for the key census (`WandbState.add_run` arguments), oldest first: the older 60%
    logged old names, the newer the new ones, each with the common keys."""
    rng = random.Random(seed)
    migration = find_mapping("prime-rl").migration()
    new = sorted(migration.new_names)
    found = []
    for i in range(count):
        names = OLD if i < count * 0.6 else new
        keys = KEYS + rng.sample(names, k=min(len(names), 4))
        created = (START + dt.timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        found.append({"name": f"run{i:05d}", "created_at": created, "history_keys": keys})
    return found


def server_state(
    path: Path,
    views: int,
    triggers: int,
    seed: int = 1,
    low: int = 5_000,
    high: int = 50_000,
) -> None:
    """A state file for `testserver`: reports, project automations and runs (by
    default one for every two views)."""
    rng = random.Random(seed)
    texts = report_texts(views, seed, low=low, high=high)
    state = {
        "views": [
            {"spec": text, "type": "runs", "displayName": f"Report {i}"}
            for i, text in enumerate(texts)
        ],
        "triggers": [trigger(rng, i) for i in range(triggers)],
        "runs": runs(views // 2, seed),
    }
    path.write_text(json.dumps(state))
