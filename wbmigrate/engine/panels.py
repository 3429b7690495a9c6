"""Panels of every viewType: which config fields hold metric keys, and in what shape.

Reports and workspaces share panels. A panel type wbmigrate does not know gets the rules that
hold for every type (`UNIVERSAL_FIELDS`); the rest of it is scanned and its old names reported.
In a known type, fields not listed here are scanned too. One table (`PANEL_TYPES`) with a short
walker per type, so the module grows a few lines per type (hence over 300 lines: the table is
the module, and split it would be two halves of one list).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from wbmigrate import names
from wbmigrate.edit.edits import Path
from wbmigrate.engine.model import NoteKind
from wbmigrate.engine.shapes import as_list, nodes
from wbmigrate.engine.walk import Walk

SERIES_OVERRIDES = ("overrideSeriesTitles", "overrideColors", "overrideMarks", "overrideLineWidths")
TITLES = ("chartTitle", "xAxisTitle", "yAxisTitle")


@dataclass(frozen=True)
class PanelType:
    walk: Callable[[Walk, Path, dict[str, Any]], None]
    series: Callable[[dict[str, Any]], list[str]]  # metric names the panel displays
    fields: Collection[str] | None  # config keys `walk` handles, the others are scanned
    # (None: `walk` scans the rest itself)

    def __post_init__(self) -> None:  # a set: each config key of a walked panel is looked up
        if self.fields is not None:
            object.__setattr__(self, "fields", frozenset(self.fields))


def walk_panel(w: Walk, path: Path, panel: Any) -> None:
    if not isinstance(panel, dict):
        return
    view_type = panel.get("viewType")
    config = panel.get("config")
    regex = isinstance(config, dict) and config.get("useMetricRegex")
    # Most panels name no old key (14,496 of the benchmark's 19,273): told by one test, not
    # walked, its 600 objects were walked in 0.55-0.57 s of CPU instead of 0.91-0.93 s.
    metrics, config_keys = w.may_name_either(panel)
    kept = True
    if regex or metrics:
        with w.at(panel_label(panel, int(path[-1]))):
            kept = _walk_panel(w, path, panel, view_type, config)
    if kept and config_keys and isinstance(config, dict) and view_type in PANEL_TYPES:
        with w.config_keys():
            if w.may_name([config.get(key) for key in CONFIG_FIELDS]):
                with w.at(panel_label(panel, int(path[-1]))):
                    _config_keys(w, (*path, "config"), config)


def _walk_panel(w: Walk, path: Path, panel: dict[str, Any], view_type: Any, config: Any) -> bool:
    """A panel's metric keys, by the rules of its type; False when it is deleted."""
    kind = PANEL_TYPES.get(view_type) if isinstance(view_type, str) else None
    if not isinstance(config, dict):
        w.scan(path, panel, f"panel type {view_type!r}")
    elif kind is None:
        _unknown(w, path, panel, config)
    elif _all_gone(w, series := kind.series(config)):
        w.remove(path, panel, "panel", f"panel deleted: {_gone(w, series)}")
        return False
    else:
        kind.walk(w, (*path, "config"), config)
        if kind.fields is not None:
            rest = {k: v for k, v in config.items() if k not in kind.fields}
            w.scan((*path, "config"), rest, f"{view_type} field")
    return True


def _unknown(w: Walk, path: Path, panel: dict[str, Any], config: dict[str, Any]) -> None:
    """A panel type wbmigrate does not know: the universal rules, then a scan of the rest of
    its config and of the panel around it. It is never deleted, as it may show more than its
    metrics: when they are all gone, it is left as it is for review."""
    what = f"panel type {panel.get('viewType')!r}"
    series = _line_series(config)
    if not _all_gone(w, series):
        _universal(w, (*path, "config"), config)
        rest = {k: v for k, v in config.items() if k not in UNIVERSAL_FIELDS}
        w.scan(path, {**panel, "config": rest}, what)
        return
    why = f"{_gone(w, series)}, but {what} is unknown and may show more: kept, review it"
    w.note(path, NoteKind.REVIEW, why, "panel")
    said = frozenset(
        (*path, "config", "metrics", i) for i in range(len(_get(config, "metrics", list)))
    )
    w.scan(path, panel, what, skip=said)  # the rest; the metrics are named in the note


def walk_section(w: Walk, path: Path, section: Any) -> None:
    """A panel section: its panels and its local x axis (shared with workspaces)."""
    if not isinstance(section, dict):
        return
    settings = section.get("localPanelSettings")
    if isinstance(settings, dict) and "xAxis" in settings:
        w.single(
            (*path, "localPanelSettings", "xAxis"), settings["xAxis"], "localPanelSettings.xAxis"
        )
    for i, panel in enumerate(as_list(section.get("panels"))):
        walk_panel(w, (*path, "panels", i), panel)


def panel_label(panel: dict[str, Any], index: int) -> str:
    """How the W&B UI titles a panel: its chart title, else the metrics it plots; else its
    position in the section (1-based)."""
    config = panel.get("config")
    config = config if isinstance(config, dict) else {}
    metrics = _get(config, "metrics", list)
    title = config.get("chartTitle") or ", ".join(map(str, metrics[:2]))
    kind = panel.get("viewType", "unknown type")
    return f'panel "{title}" ({kind})' if title else f"panel {index + 1} ({kind})"


def _all_gone(w: Walk, shown: list[str]) -> bool:
    fates = [w.fate(name) for name in shown]
    return bool(shown) and all(f is not None and f.new is None for f in fates)


def _gone(w: Walk, shown: list[str]) -> str:
    reasons = {f.reason for name in shown if (f := w.fate(name))}
    return (
        f"every metric it shows ({', '.join(shown)}) is "
        f"no longer logged ({'; '.join(sorted(reasons))})"
    )


def _metrics(values: Any) -> list[str]:
    found = (names.accessor(v) for v in (values if isinstance(values, list) else [values]))
    return [a.name for a in found if a is not None]


def _get(config: dict[str, Any], key: str, kind: type) -> Any:
    value = config.get(key)
    return value if isinstance(value, kind) else kind()


def _each(
    rule: Callable[[Path, Any, str], None], path: Path, config: dict[str, Any], *keys: str
) -> None:
    """`rule` on each of `keys` in `config`: one key, an expression or text, each of which
    leaves a field that is not set (None) alone."""
    for key in keys:
        if key in config:  # a field not set is left alone
            rule((*path, key), config[key], key)


def _metrics_series(config: dict[str, Any]) -> list[str]:
    return _metrics(_get(config, "metrics", list))


# --- line, scalar, bar ------------------------------------------------------------------------


def _universal(w: Walk, path: Path, config: dict[str, Any]) -> None:
    """The fields that mean the same in every panel type that has them: a line plot's, and all
    of what an unknown type gets rewritten."""
    if "metrics" in config:
        w.key_list((*path, "metrics"), _get(config, "metrics", list), "metrics")
    _common(w, path, config)
    _each(w.single, path, config, "xAxis", "groupBy")
    if "legendFields" in config:
        w.key_list((*path, "legendFields"), _get(config, "legendFields", list), "legendFields")
    _series_overrides(w, path, config)


def _series_overrides(w: Walk, path: Path, config: dict[str, Any]) -> None:
    """Per-series overrides (most panels set none). A key `<runId>:<metric>` is one run's
    series, which only old runs have: dual mode leaves it. A bare metric (a bar chart's bar,
    across runs; the SDK's BarPlot writes its `line_titles` keys as given) is a series the new
    key continues: dual mode gives the new key the same override, as a run-table column's."""
    for key in SERIES_OVERRIDES:
        if key in config:
            overrides = _get(config, key, dict)
            w.key_map((*path, key), overrides, key, names.series_accessor, dual_adds=False)
            w.key_map((*path, key), overrides, key, _bare_metric)


def _bare_metric(value: Any) -> names.Accessor | None:
    """A series key that is a metric name alone (no `<runId>:`)."""
    return names.accessor(value) if isinstance(value, str) and ":" not in value else None


def _line(w: Walk, path: Path, config: dict[str, Any]) -> None:
    _universal(w, path, config)
    _each(w.single, path, config, "key")  # a 2019 line plot's one metric, before `metrics`
    _each(w.expression, path, config, "xExpression")
    if config.get("useMetricRegex"):
        w.regex((*path, "metricRegex"), config.get("metricRegex"), "metricRegex")


def _line_series(config: dict[str, Any]) -> list[str]:
    if config.get("useMetricRegex") and config.get("metricRegex"):
        return []  # the regex may match keys that are still logged
    shown = _metrics(_get(config, "metrics", list)) + _metrics(config.get("key"))
    for expression in _get(config, "expressions", list):
        if isinstance(expression, str):
            shown += [a.name for a in names.expression_names(expression)]
    return shown


def _common(w: Walk, path: Path, config: dict[str, Any]) -> None:
    """Fields that line, scalar and bar charts share."""
    if "expressions" in config:
        w.expressions((*path, "expressions"), _get(config, "expressions", list), "expressions")
    _each(w.expression, path, config, "legendTemplate")
    _each(w.text, path, config, *TITLES)


def _scalar(w: Walk, path: Path, config: dict[str, Any]) -> None:
    # A scalar chart shows one number: its metrics list is read as a single key.
    w.single_list((*path, "metrics"), _get(config, "metrics", list), "metrics")
    _common(w, path, config)


def _bar(w: Walk, path: Path, config: dict[str, Any]) -> None:
    w.key_list((*path, "metrics"), _get(config, "metrics", list), "metrics")
    _common(w, path, config)
    _each(w.single, path, config, "groupBy")
    _series_overrides(w, path, config)


COMMON_FIELDS = ("metrics", "expressions", "legendTemplate", *TITLES)  # `_common`'s, and metrics
UNIVERSAL_FIELDS = (*COMMON_FIELDS, "xAxis", "groupBy", "legendFields", *SERIES_OVERRIDES)
_LINE_FIELDS = (*UNIVERSAL_FIELDS, "xExpression", "metricRegex", "key")

# --- scatter, parallel coordinates, parameter importance, media -------------------------------


def _scatter(w: Walk, path: Path, config: dict[str, Any]) -> None:
    _each(w.single, path, config, "xAxis", "yAxis", "zAxis")
    _each(w.expression, path, config, "legendTemplate")
    _each(w.text, path, config, "chartTitle")


def _scatter_series(config: dict[str, Any]) -> list[str]:
    axes = [config.get(key) for key in ("xAxis", "yAxis", "zAxis")]
    return _metrics(
        [a for a in axes if isinstance(a, str) and not a.startswith(("config:", "run:"))]
    )


def _parallel(w: Walk, path: Path, config: dict[str, Any]) -> None:
    columns = [c for c in _get(config, "columns", list) if isinstance(c, dict)]
    if len(columns) == len(_get(config, "columns", list)):
        w.key_list((*path, "columns"), columns, "columns", inner=("accessor",))
    # A 2019 plot's axes: accessors (`summary:acc`, `config:lr.value`), each an axis of its own.
    w.key_list((*path, "dimensions"), _get(config, "dimensions", list), "dimensions")
    _each(w.text, path, config, "chartTitle")


def _parallel_series(config: dict[str, Any]) -> list[str]:
    columns = _get(config, "columns", list)
    accessors = [c.get("accessor") for c in columns if isinstance(c, dict)]
    return _metrics(accessors + _get(config, "dimensions", list))


# The fields `_config_keys` reads: asked about alone, they are a tenth of a panel's bytes.
CONFIG_FIELDS = ("groupBy", "xAxis", "yAxis", "zAxis", "columns", "dimensions")


def _config_keys(w: Walk, path: Path, config: dict[str, Any]) -> None:
    """The config keys a panel names, among the mapping's config renames (inside
    `Walk.config_keys`): a plot's grouping (`groupBy`, with W&B's `.value`), a scatter plot's
    axes and parallel coordinates' columns (`config:a.value.b`; a 2019 plot's `c::a`). A
    grouping or an axis is one key, renamed in both modes, as a run set's grouping is."""
    _each(partial(w.single, decode=names.config_key), path, config, "groupBy")
    _each(partial(w.single, decode=_config_accessor), path, config, "xAxis", "yAxis", "zAxis")
    columns = _get(config, "columns", list)
    if columns and all(isinstance(c, dict) for c in columns):
        w.key_list((*path, "columns"), columns, "columns", _config_accessor, inner=("accessor",))
    dimensions = _get(config, "dimensions", list)
    w.key_list((*path, "dimensions"), dimensions, "dimensions", _config_accessor)


def _config_accessor(value: Any) -> names.Accessor | None:
    return names.config_column(value) or names.config_key(value, "c::")


def _importance(w: Walk, path: Path, config: dict[str, Any]) -> None:
    _each(w.single, path, config, "targetKey")
    for key in ("columnsPinned", "columnWidths"):
        w.key_map((*path, key), _get(config, key, dict), key)
    w.key_list((*path, "columnOrder"), _get(config, "columnOrder", list), "columnOrder")


def _media(w: Walk, path: Path, config: dict[str, Any]) -> None:
    w.key_list((*path, "mediaKeys"), _get(config, "mediaKeys", list), "mediaKeys")


def _markdown(w: Walk, path: Path, config: dict[str, Any]) -> None:
    _each(w.text, path, config, "value")


# --- custom charts and weave panels -----------------------------------------------------------


def _vega(w: Walk, path: Path, config: dict[str, Any]) -> None:
    query = config.get("userQuery")
    if isinstance(query, dict):
        _query_fields(w, (*path, "userQuery", "queryFields"), _get(query, "queryFields", list))
    for key, value in _get(config, "fieldSettings", dict).items():
        w.single((*path, "fieldSettings", key), value, f"fieldSettings.{key}")
    for key, value in _get(config, "stringSettings", dict).items():
        w.text((*path, "stringSettings", key), value, f"stringSettings.{key}")


def _query_fields(w: Walk, path: Path, fields: list[Any]) -> None:
    """A custom chart's query: `history`/`summary` fields take a `keys` list, tables a key."""
    for i, query_field in enumerate(fields):
        if not isinstance(query_field, dict):
            continue
        label = f"userQuery {query_field.get('name')}"
        for j, arg in enumerate(_get(query_field, "args", list)):
            at, arg = (*path, i, "args", j, "value"), arg if isinstance(arg, dict) else {}
            if arg.get("name") == "keys" and isinstance(arg.get("value"), list):
                w.key_list(at, arg["value"], f"{label} keys")
            elif arg.get("name") == "tableKey":
                w.single(at, arg.get("value"), f"{label} tableKey")
        _query_fields(w, (*path, i, "fields"), _get(query_field, "fields", list))


def _vega_series(config: dict[str, Any]) -> list[str]:
    query = config.get("userQuery")
    keys: list[str] = []
    stack = list(_get(query, "queryFields", list)) if isinstance(query, dict) else []
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for arg in _get(item, "args", list):
                if isinstance(arg, dict) and arg.get("name") == "keys":
                    keys += _metrics(arg.get("value"))
            stack += _get(item, "fields", list)
    return keys


def weave_picks(node: Any, path: Path) -> Iterator[tuple[Path, str]]:
    """String constants that a weave expression `pick`s as a key (a metric or table name)."""
    stack = [(path, node)]
    while stack:
        at, item = stack.pop()
        if isinstance(item, dict):
            op = item.get("fromOp")
            if isinstance(op, dict) and op.get("name") == "pick":
                key = _get(op, "inputs", dict).get("key")
                if (
                    isinstance(key, dict)
                    and key.get("nodeType") == "const"
                    and isinstance(key.get("val"), str)
                ):
                    yield (*at, "fromOp", "inputs", "key", "val"), key["val"]
            stack += [((*at, k), v) for k, v in item.items() if isinstance(v, (dict, list))]
        elif isinstance(item, list):
            stack += [((*at, i), v) for i, v in enumerate(item) if isinstance(v, (dict, list))]


def walk_weave(w: Walk, path: Path, config: dict[str, Any]) -> None:
    """Weave panels and report weave blocks: the keys their expressions pick are rewritten;
    any other string with an old name (a column selection, say) is reported."""
    picks = sorted(weave_picks(config, path))
    for at, key in picks:
        w.single(at, key, "pick key")
    w.scan(path, config, "weave panel", skip=frozenset(at for at, _ in picks))


def _weave_series(config: dict[str, Any]) -> list[str]:
    return [key for _, key in weave_picks(config, ())]


def _nothing(w: Walk, path: Path, config: dict[str, Any]) -> None:
    """Panel types whose config holds no metric key; the generic scan still looks."""


def _none(config: dict[str, Any]) -> list[str]:
    return []


PANEL_TYPES: dict[str, PanelType] = {
    "Run History Line Plot": PanelType(_line, _line_series, _LINE_FIELDS),
    "Scalar Chart": PanelType(_scalar, _metrics_series, COMMON_FIELDS),
    "Bar Chart": PanelType(_bar, _metrics_series, (*COMMON_FIELDS, "groupBy", *SERIES_OVERRIDES)),
    "Scatter Plot": PanelType(
        _scatter, _scatter_series, ("xAxis", "yAxis", "zAxis", "legendTemplate", "chartTitle")
    ),
    "Parallel Coordinates Plot": PanelType(
        _parallel, _parallel_series, ("columns", "dimensions", "chartTitle")
    ),
    "Parameter Importance": PanelType(
        _importance,
        lambda c: _metrics(c.get("targetKey")),
        ("targetKey", "columnsPinned", "columnWidths", "columnOrder"),
    ),
    "Media Browser": PanelType(
        _media, lambda c: _metrics(_get(c, "mediaKeys", list)), ("mediaKeys",)
    ),
    "Markdown Panel": PanelType(_markdown, _none, ("value",)),
    "Vega2": PanelType(_vega, _vega_series, ("userQuery", "fieldSettings", "stringSettings")),
    "Weave": PanelType(walk_weave, _weave_series, None),
    "Run Comparer": PanelType(_nothing, _none, ()),
    "Code Comparer": PanelType(_nothing, _none, ()),
}


def series_of(panel: Any) -> list[str]:
    """The metric names a panel displays, in order and with repeats (a repeat is a sign of
    two series merged into one key); a panel type not listed is read as a line plot."""
    if not isinstance(panel, dict) or not isinstance(panel.get("config"), dict):
        return []
    view_type = panel.get("viewType")
    kind = PANEL_TYPES.get(view_type) if isinstance(view_type, str) else None
    return (kind.series if kind else _line_series)(panel["config"])


def find_panels(spec: Any, path: Path = ()) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every panel in a report or workspace spec (a dict with a `viewType` and a `config`),
    wherever it sits, in document order."""
    for at, node in nodes(spec, path):
        panel = node if isinstance(node, dict) else {}
        if isinstance(panel.get("viewType"), str) and isinstance(panel.get("config"), dict):
            yield at, panel
