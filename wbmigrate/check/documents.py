"""JSON and YAML files: every W&B spec in them, wherever it sits, through the rewrite engine (so
coverage matches the live path); W&B sweep configs; and config files by their dotted keys.

Each document of a file is walked once for spec subtrees, sweeps and specs kept as JSON strings
(`files.find`); each is checked on its own, its findings located in the text it lives in
(`hosts`). Fixes are made together at the end: inside strings first (which moves no path), then
in the documents. A document that cannot be read is a `parse-error`, a spec the engine cannot
read a `needs-review`: one bad document never stops the scan.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import partial

import yaml

from wbmigrate import json_values
from wbmigrate.check.hosts import Host, JsonHost, StringSpec, YamlHost, yaml_fixed
from wbmigrate.check.model import Checked, Finding, Lines, Pending, Place, Rule, guarded
from wbmigrate.check.places import Places, hash_comments, spans
from wbmigrate.check.specs import check_spec, check_sweep, config_keys, may_embed
from wbmigrate.check.targets import Targets
from wbmigrate.check.unread import LAYOUT, escaped, layout_keys
from wbmigrate.edit.edits import Edit, EditConflict, Path
from wbmigrate.edit.json import JsonText
from wbmigrate.edit.located_yaml import load_located_all
from wbmigrate.edit.replacement import Replacement, apply
from wbmigrate.files import SWEEP, TEXT, TooDeep, Unreadable, at, find, read_json, read_yaml
from wbmigrate.names import AFTER_NAME, NAME_CHAR

Chosen = list[tuple[Host, list[Edit]]]  # the edits to make, by the text they are made in
Compose = Callable[[str, Chosen], "str | None"]
Document = JsonHost | YamlHost


def parse_error(
    label: str, text: str, offset: int, message: str, place: Places | None = None
) -> Checked:
    finding = Lines(text).finding(label, offset, offset, Rule.PARSE_ERROR, message)
    return Checked([finding], place=place)


def check_json(label: str, text: str, targets: Targets) -> Checked:
    place = spans([], Place("a JSON value"))
    try:  # read as `plan DIR` reads it
        document = JsonHost(text, read_json(text))
    except Unreadable as exc:
        return parse_error(label, text, exc.offset, exc.problem, place)
    return _Check(label, text, targets, place).run([document], partial(_compose_json, document))


def check_yaml(label: str, text: str, targets: Targets) -> Checked:
    place = hash_comments(text, Place("a YAML value"))
    try:  # read as `plan DIR` reads it
        located = read_yaml(text)
    except Unreadable as exc:
        return parse_error(label, text, exc.offset, exc.problem, place)
    documents = [YamlHost(text, one, located) for one in located]
    return _Check(label, text, targets, place).run(documents, partial(_compose_yaml, documents))


class _Check:
    """One file's findings as they are gathered: each with the text it lives in, its edits,
    and the spec whose migration note goes with it."""

    def __init__(self, label: str, text: str, targets: Targets, place: Places) -> None:
        self.label = label
        self.text = text
        self.targets = targets
        self.place = place
        self.pending: list[tuple[Host, Pending]] = []
        self.notes: list[tuple[Host, list[Edit]]] = []  # one per spec read
        self.seen: list[tuple[int, int]] = []

    def run(self, documents: Sequence[Document], compose: Compose) -> Checked:
        """The check of a parsed file; what makes it fail is a finding of this file, never
        raised (so the residual pass still gives its old names a result)."""
        work = partial(self.findings, documents, compose)
        checked = guarded(self.label, work, lambda finding: Checked([finding]))
        checked.place = self.place
        return checked

    def findings(self, documents: Sequence[Document], compose: Compose) -> Checked:
        try:
            for document in documents:
                found = find(document.data, may_embed(self.targets))
                self.contents(document, found)
                for path in (path for path, what in found if what == TEXT):
                    self.string(document, path)
                skip = {path for path, what in found if what != TEXT}
                keys, news = config_keys(document.data, self.targets, skip)
                self.pending += [(document, p) for p in keys]
                self.escaped(document, {path for path, _ in found} | {p.path for p in keys})
                self.seen += [document.span(path, key=True) for path in news]
                self.layouts(document)
        except TooDeep as exc:
            return parse_error(self.label, self.text, 0, str(exc))
        return self.checked(documents, compose)

    def contents(self, host: Host, found: list[tuple[Path, str]]) -> None:
        """The specs and sweeps found in one text."""
        for root, kind in found:
            node = at(host.data, root)
            if kind == SWEEP:
                self.pending += [(host, p) for p in check_sweep(node, root, self.targets)]
            if kind in (SWEEP, TEXT):
                continue
            unit = len(self.notes)
            pending, notes = check_spec(node, root, kind, self.label, self.targets, unit, host.same)
            self.pending += [(host, p) for p in pending]
            if notes is not None:  # read: the engine judged every name in it
                self.notes.append((host, notes))
                self.seen += host.seen(root)

    def escaped(self, document: Document, skip: set[Path]) -> None:
        """Old names spelled with escapes outside the specs, sweeps and specs kept as JSON text
        (whose names the engine reads decoded) and the config keys found: reviewed, not fixed.
        Only a backslash hides a name (YAML's folding puts a space where a line breaks)."""
        if "\\" not in self.text:
            return

        def written(path: Path, key: bool) -> str:
            return self.text[slice(*document.span(path, key=key))]

        found = escaped(document.data, self.targets, written, skip)
        self.pending += [(document, pending) for pending in found]

    def layouts(self, document: Document) -> None:
        """A panel layout's keys are grid coordinates: when the mapping renames a metric
        spelled like one (`x`), they are seen, not reviewed."""
        if LAYOUT.isdisjoint(self.targets.spellings):
            return
        self.seen += [document.span(path, key=True) for path in layout_keys(document.data)]

    def string(self, document: Document, path: Path) -> None:
        """A string that may hold a spec as JSON text: checked inside, or said to be broken."""
        value = at(document.data, path)
        try:
            data = json_values.loads(value)  # as `plan DIR` reads it
            found = find(data)
        except json.JSONDecodeError as exc:
            problem = f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
        except RecursionError:
            problem = "nested too deeply to read"
        except TooDeep as exc:
            problem = str(exc)
        else:
            if found:
                self.contents(document.string(path, value, data), found)
            return
        message = (
            f"this string looks like a spec kept as JSON text, but it cannot be read "
            f"({problem}); it is not checked"
        )
        broken = Pending(path, False, Rule.NEEDS_REVIEW, message, whole=False)
        self.pending.append((document, broken))

    def checked(self, documents: Sequence[Document], compose: Compose) -> Checked:
        """Located findings (one for the same finding reached through two aliases), and how to
        fix a chosen subset of them."""
        self.trust(documents)
        lines = Lines(self.text)
        checked = Checked(seen=self.seen)
        located: dict[Finding, None] = {}  # (a dict: in order, each once)
        sources: dict[tuple[object, ...], list[tuple[Host, Pending]]] = {}
        for host, pending in self.pending:
            finding = _located(lines, self.label, host, pending)
            located[finding] = None
            sources.setdefault(finding.identity, []).append((host, pending))
        checked.findings += located

        def fix_text(kept: list[Finding]) -> str | None:
            chosen: dict[int, tuple[Host, list[Edit]]] = {}
            units: set[int] = set()
            keys = dict.fromkeys(f.identity for f in kept)  # a suppression may reword a finding
            for host, pending in (s for key in keys for s in sources.get(key, [])):
                chosen.setdefault(id(host), (host, []))[1].extend(pending.edits)
                units |= {pending.unit} if pending.unit >= 0 and pending.edits else set()
            for host, notes in (self.notes[u] for u in sorted(units)):
                chosen.setdefault(id(host), (host, []))[1].extend(notes)
            if not any(edits for _, edits in chosen.values()):
                return None
            return compose(self.text, list(chosen.values()))

        checked.fix_text = fix_text
        return checked

    def trust(self, documents: Sequence[Document]) -> None:
        """Read every edit of a YAML file back at once: when they all hold, each finding's fix
        needs no parse of its own (a file of n findings costs one parse, not n)."""
        yaml_documents = [d for d in documents if isinstance(d, YamlHost)]
        everything = [*((h, p.edits) for h, p in self.pending), *self.notes]
        for d in yaml_documents:
            d.plan = [e for h, found in everything if h is d for e in found]
        if not any(d.plan for d in yaml_documents):
            return
        located = [d.located for d in yaml_documents]
        trusted = yaml_fixed(self.text, yaml_documents, located, lambda d: d.plan) is not None
        for document in yaml_documents:
            document.trusted = trusted


def _located(lines: Lines, label: str, host: Host, pending: Pending) -> Finding:
    start, end = host.span(pending.path, key=pending.key)
    if not pending.whole:
        end = start  # a point: the names inside still get their own results
    elif pending.name is not None:
        start, end = _name_in(lines.text, start, end, pending.name)
    fix = host.fix(pending.edits) if pending.edits else ()
    message = pending.message
    if not fix and isinstance(host, YamlHost) and host.with_shared(pending.edits) is None:
        message += " (not fixed: an anchor used elsewhere that needs another change)"
    return lines.finding(label, start, end, pending.rule, message, fix)


def _name_in(text: str, start: int, end: int, name: str) -> tuple[int, int]:
    """Where the whole name `name` first is in text[start:end] (all of it, when it is not)."""
    found = re.compile(rf"(?<!{NAME_CHAR}){re.escape(name)}{AFTER_NAME}").search(text, start, end)
    return (found.start(), found.end()) if found else (start, end)


# --- making the chosen fixes --------------------------------------------------------------


def _strings_fixed(text: str, chosen: Chosen) -> str | None:
    """`text` with the edits inside strings made (a string's new text moves no path)."""
    found: list[Replacement] = []
    for host, edits in chosen:
        if isinstance(host, StringSpec) and edits:
            made = host.replacements(edits)
            if made is None:
                return None
            found += made
    return apply(text, found)


def _compose_json(document: JsonHost, text: str, chosen: Chosen) -> str | None:
    current = _strings_fixed(text, chosen)
    edits = [e for host, found in chosen if host is document for e in found]
    if current is None or not edits:
        return current
    try:
        return JsonText(current).splice(edits)
    except (KeyError, ValueError, IndexError, EditConflict):
        return None


def _compose_yaml(documents: list[YamlHost], text: str, chosen: Chosen) -> str | None:
    current = _strings_fixed(text, chosen)
    if current is None:
        return None
    try:
        located = [d.located for d in documents] if current == text else load_located_all(current)
    except (yaml.YAMLError, RecursionError):
        return None
    if len(located) != len(documents):
        return None
    return yaml_fixed(
        current, documents, located, lambda d: [e for h, found in chosen if h is d for e in found]
    )
