"""A plan over several projects: a table, a row per project (objects, changes, warnings,
review, whether it has upgraded, its boundary), then each project's details.

Each project's objects are rendered while it is planned (`renderer`), so only the rendering
is kept until the table, which needs every project, can be printed first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from wbmigrate import plan_json
from wbmigrate.engine.history import History
from wbmigrate.engine.model import NoteKind, Options
from wbmigrate.live.org import ProjectPlan, Result
from wbmigrate.mapping import Migration
from wbmigrate.plan import Planned, Status, Tally
from wbmigrate.redact import printable
from wbmigrate.report import plan as plan_report
from wbmigrate.report.plan import printed
from wbmigrate.report.words import plural

COLUMNS = ("project", "objects", "to change", "warnings", "review", "upgraded", "boundary")
FORMAT = "wbmigrate-plan-projects/2"  # /1: `summary.changes` counted objects


def renderer(format_: str, verbose: bool) -> Callable[[Options, Iterator[Planned]], Any]:
    """What each project's planned objects become while it is planned."""
    if format_ == "json":
        return lambda options, objects: [plan_json.object_entry(p) for p in objects]
    if format_ == "markdown":
        return lambda options, objects: [plan_report.markdown_object(p, verbose) for p in objects]
    return lambda options, objects: [plan_report.text_object(p, verbose) for p in objects]


def _row(result: Result) -> list[str]:
    if result.error is not None:
        return [result.target, "-", "-", "-", "-", "-", f"error: {result.error}"]
    plan: ProjectPlan = result.value
    tally, history = plan.tally, plan.options.history
    return [
        result.target,
        str(tally.total),
        str(tally.statuses[Status.CHANGES]),
        str(tally.notes[NoteKind.WARNING]),
        str(tally.notes[NoteKind.REVIEW]),
        "?" if history is None else "yes" if history.upgraded else "no",
        boundary(history, plan.problem),
    ]


def boundary(history: History | None, problem: str | None) -> str:
    """A project's boundary in a table cell."""
    if history is None:
        return "runs not read" if problem is None else "runs not readable"
    if history.runs == 0:
        return "no runs yet"
    old, new = history.last_old, history.first_new
    left = f'last old "{old.name}" {old.day}' if old else "no old-key run"
    right = f'first new "{new.name}" {new.day}' if new else "no new-key run"
    return f"{left} -> {right}"


def totals(results: list[Result]) -> str:
    done = [r.value for r in results if r.error is None]
    tally = Tally()
    for plan in done:
        tally.merge(plan.tally)
    failed = len(results) - len(done)
    upgraded = sum(1 for p in done if p.options.history and p.options.history.upgraded)
    head = plural(len(results), "project") + (f" ({failed} could not be read)" if failed else "")
    return f"{head}, {upgraded} upgraded. {plan_report.summary(tally)}"


def text_chunks(migration: Migration, options: Options, results: list[Result]) -> Iterator[str]:
    rows = [list(COLUMNS), *map(_row, results)]
    widths = [max(len(printable(r[i])) for r in rows) for i in range(len(COLUMNS) - 1)]
    lines = []
    for row in rows:
        cells = [printable(c).ljust(w) for c, w in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, printable(row[-1])]).rstrip())
    yield printed([plan_report.header(migration, options)]) + plan_report.legend()
    yield printed([*lines, "", totals(results), ""])
    for result in results:
        if result.error is not None:
            yield printed([f"== {result.target}", f"  error: {result.error}", ""])
            continue
        plan: ProjectPlan = result.value
        yield printed([f"== {result.target}", *plan_report.history_lines(plan.options), ""])
        for lines_of_object in plan.rendered:
            yield plan_report.lines(lines_of_object)
        yield printed([plan_report.summary(plan.tally), ""])


def markdown_chunks(migration: Migration, options: Options, results: list[Result]) -> Iterator[str]:
    title = f"## wbmigrate {plan_report.header(migration, options).lower()}"
    head = "| " + " | ".join(COLUMNS) + " |"
    lines = [title, "", totals(results), "", head, "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(plan_report.md(c) for c in _row(r)) + " |" for r in results]
    yield printed([*lines, ""])
    for result in results:
        yield printed([f"### {plan_report.md(result.target)}", ""])
        if result.error is not None:
            yield printed([f"**Error:** {plan_report.md(result.error)}", ""])
            continue
        plan: ProjectPlan = result.value
        history = map(plan_report.md, plan_report.history_lines(plan.options))
        yield printed([*history, plan_report.summary(plan.tally)])
        yield printed([""])
        for lines_of_object in plan.rendered:
            yield printed([line.replace("### ", "#### ", 1) for line in lines_of_object])


def json_chunks(migration: Migration, options: Options, results: list[Result]) -> Iterator[str]:
    """One document (every project's objects are held already: nothing to stream)."""
    projects: list[dict[str, Any]] = []
    tally = Tally()
    for result in results:
        if result.error is not None:
            projects.append({"target": result.target, "error": result.error})
            continue
        plan: ProjectPlan = result.value
        tally.merge(plan.tally)
        history = plan.options.history
        projects.append(
            {
                "target": result.target,
                "history": plan_json.history_entry(history, keys=False) if history else None,
                "census_problem": plan.problem,
                "summary": plan_json.summary_entry(plan.tally),
                "objects": plan.rendered,
            }
        )
    failed = sum(r.error is not None for r in results)
    summary = {"projects": len(results), "failed": failed, **plan_json.summary_entry(tally)}
    head = {"format": FORMAT, **plan_json.mapping_entry(migration, options)}
    yield plan_json.indented({**head, "projects": projects, "summary": summary}) + "\n"
