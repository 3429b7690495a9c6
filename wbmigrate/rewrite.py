"""The pure core: a spec and a migration in, the new spec and its changes out. No I/O.

`rewrite` works on the parsed spec; `rewrite_text` also returns the new JSON text, in which
everything the migration does not change keeps its exact bytes. A rewrite is a `walk`, which
needs no key census (but where it meets a regex), then `finish`: the boundary note and the
warnings (`census_warnings`), which need it. A live plan walks while the census is on its way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from wbmigrate import json_values, kinds
from wbmigrate.edit.edits import Edit
from wbmigrate.edit.json import splice
from wbmigrate.engine.history import History
from wbmigrate.engine.model import UNPARSED, Options, Rewrite
from wbmigrate.engine.walk import Walk
from wbmigrate.errors import WbmigrateError
from wbmigrate.mapping import Migration

# Larger specs are refused, not read: a spec this big is a mistake (data pasted into a
# report), and reading it would cost seconds and gigabytes for one object.
MAX_SPEC_BYTES = 32 * 1024 * 1024


class SpecError(WbmigrateError):
    """A spec that cannot be read as JSON."""


def too_big(size: int) -> str | None:
    """Why a spec of `size` bytes is refused, or None."""
    if size <= MAX_SPEC_BYTES:
        return None
    return (
        f"{size / 1024 / 1024:.1f} MB, over the {MAX_SPEC_BYTES // 1024 // 1024} MB wbmigrate reads"
    )


def rewrite(
    spec: Any,
    migration: Migration,
    *,
    kind: str | None = None,
    name: str = "",
    options: Options | None = None,
) -> Rewrite:
    """Rewrite one spec (a report or workspace view's parsed `spec`, or a saved trigger)."""
    options = options or Options()
    return finish(walk(spec, migration, options, kind, name), options)


@dataclass(frozen=True)
class Walked:
    """A spec walked, not finished: the boundary note and the census's warnings are
    `finish`'s, so a live plan walks while the key census is on its way."""

    spec: Any
    kind: str
    name: str
    record: Walk  # what the walk recorded, which `finish` completes


def walk(
    spec: Any, migration: Migration, options: Options, kind: str | None = None, name: str = ""
) -> Walked:
    """The walk of one spec: its changes, needing no key census (but a regex's, `Walk.regex`)."""
    kind = kind or kinds.detect(spec)
    if not kinds.KINDS[kind].matches(spec):
        raise kinds.UnknownKindError(f"not a W&B {kind} spec")
    w = Walk(migration, options)
    try:
        kinds.KINDS[kind].walk(w, spec)
    except RecursionError:
        raise SpecError("spec nested too deeply to rewrite") from None
    return Walked(spec, kind, name, w)


def finish(walked: Walked, options: Options) -> Rewrite:
    """The rewrite of a walked spec, finished with `options`' key census: the boundary note,
    then the warnings. A walk that met a regex before the census came is walked again: the
    keys the runs logged decide how a regex is rewritten. A walked spec is finished once."""
    w = walked.record
    if options.history is not w.options.history:
        if w.met_regex:
            again = walk(walked.spec, w.migration, options, walked.kind, walked.name)
            return finish(again, options)
        w.options = options
    if w.changes and w.options.annotate:  # the boundary note
        kinds.KINDS[walked.kind].annotate(w, walked.spec)
    result = Rewrite(
        kind=walked.kind,
        title=f'{walked.kind} "{walked.name}"',
        original=walked.spec,
        edits=tuple(w.edits),
        changes=tuple(w.changes),
        notes=tuple(w.notes),
        change_edits=tuple(w.change_edits),
        shown=tuple(w.shown),
        kept=tuple(w.kept),
    )
    return census_warnings(result, w.options.history)


def census_warnings(result: Rewrite, history: History | None) -> Rewrite:
    """`result` with a warning wherever it shows a key none of the runs read logged, each
    among the notes where the walk met it. Nothing without a census (offline), or with no run
    to tell from."""
    if history is None or not history.runs or not result.shown:
        return result
    notes = list(result.notes)
    for shown in reversed(result.shown):  # from the back: the indices before stay right
        if not history.logged(shown.key) and not (shown.waits and not history.upgraded):
            notes.insert(shown.index, shown.warning(history.scope))
    return replace(result, notes=tuple(notes))


def rewrite_text(
    text: str,
    migration: Migration,
    *,
    kind: str | None = None,
    name: str = "",
    options: Options | None = None,
    root: tuple[str, ...] = (),
) -> tuple[Rewrite, str]:
    """Rewrite a spec given as JSON text; the new text differs only where the spec changed.
    `root` is where the spec sits in the document (`("spec",)` in an exported file)."""
    result = rewrite_of(text, migration, kind=kind, name=name, options=options, root=root)
    return result, spliced(text, result.edits, root)


def rewrite_of(
    text: str,
    migration: Migration,
    *,
    kind: str | None = None,
    name: str = "",
    options: Options | None = None,
    root: tuple[str, ...] = (),
) -> Rewrite:
    """`rewrite_text` without the new text: the changes and the edits it is spliced from
    (`spliced`), for a caller that needs the text later, or only for some specs."""
    return rewrite(spec_at(text, root), migration, kind=kind, name=name, options=options)


@dataclass(frozen=True)
class NewText:
    """The new text of a rewrite, spliced when asked for (`str()`): a caller holding many
    (apply plans every object before its first write) pays for each only when it is sent."""

    text: str
    edits: tuple[Edit, ...]

    def __str__(self) -> str:
        return spliced(self.text, self.edits)


def spliced(text: str, edits: tuple[Edit, ...], root: tuple[str, ...] = ()) -> str:
    """`text` with a Rewrite's `edits` made (`root`: where its spec sits in the document)."""
    if not edits:
        return text
    try:
        return splice(text, [replace(e, path=(*root, *e.path)) for e in edits])
    except RecursionError:
        raise SpecError("spec nested too deeply to rewrite") from None


def spec_at(text: str, root: tuple[str, ...] = (), document: Any = UNPARSED) -> Any:
    """The spec at `root` in a JSON document (`document`: the text, already parsed)."""
    spec = parse_spec(text) if document is UNPARSED else document
    for part in root:
        spec = spec.get(part) if isinstance(spec, dict) else None
    return spec


def parse_spec(text: str) -> Any:
    refused = too_big(len(text))
    if refused:
        raise SpecError(f"spec is {refused}")
    try:
        return json_values.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise SpecError("JSON nested too deeply to read") from None
