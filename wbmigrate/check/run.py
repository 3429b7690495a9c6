"""Check files: choose what to look for in each, skip those that cannot hold an old name,
apply inline suppressions and configured ignores, and work out the fixed text."""

from __future__ import annotations

import functools
import importlib
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from wbmigrate.check.config import CheckConfig
from wbmigrate.check.model import Checked, FileReport, Finding, Lines, Rule, apply_fixes, guarded
from wbmigrate.check.places import of_file
from wbmigrate.check.residual import residual
from wbmigrate.check.suppress import Ignores, suppress
from wbmigrate.check.targets import Targets
from wbmigrate.discover import find_files, is_binary
from wbmigrate.parallel import cores, each
from wbmigrate.rewrite import MAX_SPEC_BYTES
from wbmigrate.safe_write import Stamp, TooBig, UnsafeWrite, read_file, write_text

Handler = Callable[[str, str, Targets], Checked]

FLAGS = "wbmigrate.check.flags:check_flags"  # commands: shell, make, CI steps, container files
YAML = ("wbmigrate.check.documents:check_yaml", FLAGS)  # CI steps run commands: flags too
# Each file kind, by "*.suffix" or file name, and its checkers as "module:function", in the
# order their fixes are made: a checker is imported when a file of its kind first needs a
# close look, so a run loads only the checkers its files need.
KINDS: dict[str, tuple[str, ...]] = {
    "*.json": ("wbmigrate.check.documents:check_json",),
    "*.yaml": YAML,
    "*.yml": YAML,
    "*.py": ("wbmigrate.check.python_code:check_python",),
    "*.pyi": ("wbmigrate.check.python_code:check_python",),
    "*.toml": ("wbmigrate.check.toml_config:check_toml",),
    "*.md": ("wbmigrate.check.markdown:check_markdown",),
    "*.markdown": ("wbmigrate.check.markdown:check_markdown",),
    "*.ipynb": ("wbmigrate.check.notebook:check_notebook",),
    **dict.fromkeys(
        ["*.sh", "*.bash", "*.zsh", "*.ksh", "*.sbatch", "*.slurm", "*.mk", "*.just"], (FLAGS,)
    ),
    **dict.fromkeys(["*.Dockerfile", "*.dockerfile", "*.Containerfile"], (FLAGS,)),
    **dict.fromkeys(["Makefile", "makefile", "GNUmakefile", "Jenkinsfile", "Procfile"], (FLAGS,)),
    **dict.fromkeys(["Dockerfile", "dockerfile", "Containerfile"], (FLAGS,)),
    **dict.fromkeys(["justfile", "Justfile", ".justfile"], (FLAGS,)),
}
# Files whose structure may hold a config key of one word: TOML, and blocks and cells holding it
CONFIG_SUFFIXES = (".toml", ".md", ".markdown", ".ipynb")
NOT_UTF8 = (
    "file not decodable as UTF-8: decoded as latin-1 to find old names, so none is fixed "
    "(save it as UTF-8 to fix them)"
)
PARALLEL_FILES = 500  # a tree of fewer files is checked in this process alone
SHELLS = re.compile(r"#!.*\b(?:(?:ba|z|k|mk|da|a)?sh|make|just)\b")
CONTAINER_FILES = ("Dockerfile.", "Containerfile.")  # Dockerfile.gpu


def kind_of(path: Path, head: str) -> tuple[str, ...]:
    """The checkers of a file, by its suffix, its name, or (`head`: its first characters) the
    interpreter its shebang names."""
    shell = path.name.startswith(CONTAINER_FILES) or SHELLS.match(head)
    return KINDS.get(f"*{path.suffix}") or KINDS.get(path.name) or ((FLAGS,) if shell else ())


@functools.cache
def checker(entry: str) -> Handler:
    """The checker a "module:function" entry of KINDS names, imported on first use."""
    module, _, name = entry.partition(":")
    handler: Handler = getattr(importlib.import_module(module), name)
    return handler


def check_file(
    path: Path, targets: Targets, ignores: Ignores, fixes: bool = False
) -> FileReport | None:
    """One file's report, or None for a file `check` does not read (binary). With `fixes`, the
    report carries the text with every kept fix made. An error of wbmigrate's own is reported
    for this file alone, never raised."""
    label = path.as_posix()
    work = partial(_check_file, path, label, targets, ignores, fixes)
    return guarded(label, work, lambda finding: FileReport(label, (finding,)))


def _check_file(
    path: Path, label: str, targets: Targets, ignores: Ignores, fixes: bool
) -> FileReport | None:
    try:  # never through a link: one put in a file's place since the tree was listed
        data, stat = read_file(path, MAX_SPEC_BYTES, follow=False)
    except TooBig as exc:  # too big for a file of no kind `check` knows: taken as data
        return _error(label, f"not read: {exc}") if kind_of(path, "") else None
    except OSError as exc:
        return _error(label, f"cannot read it: {exc.strerror or exc}")
    if is_binary(data):
        return None
    spec_like = path.suffix in (".json", ".yaml", ".yml")
    config_like = spec_like or path.suffix in CONFIG_SUFFIXES
    scan = targets.prefilter.scan(data, spec_like, config_like, data_only=spec_like)
    if scan is None:  # no old name in its bytes, in any encoding that spells ASCII as ASCII
        return FileReport(label)
    text, undecodable = _decoded(data)
    checked = check_text(kind_of(path, text[:200]), label, text, targets)
    accounted = [f.span for f in checked.findings] + checked.seen
    place = checked.place or (lambda _: of_file(path))
    findings = checked.findings + residual(label, text, targets, accounted, place, scan.names)
    if undecodable is not None:  # read, but never written: its encoding is only a guess
        findings = [replace(f, fix=()) for f in findings]
        findings.append(Lines(text).finding(label, *undecodable, Rule.PARSE_ERROR, NOT_UTF8))
        fixes = False
    findings.sort(key=lambda f: (f.line, f.column))
    kept, suppressed = suppress(text, findings, path, ignores)
    fixable = [f for f in kept if f.fixable] if fixes else []
    fixed = checked.fix_text(fixable) if fixable else None
    read = Stamp.of(data, stat.st_mtime_ns) if fixed is not None else None
    return FileReport(label, tuple(kept), text, fixed, suppressed, read)


def check_text(entries: tuple[str, ...], label: str, text: str, targets: Targets) -> Checked:
    """The findings of the checkers `entries` names (a file kind's, in KINDS), and how to fix
    chosen ones: one checker after the other, from the first pass's findings. A checker after
    one whose fixes changed the text checks that text again, so its fixes land where the text
    now has them and never collide with those made (a YAML file's flags after its keys); its
    chosen findings are the same ones found there again. A fix a checker's `fix_text` refuses
    (it would not parse, or not round-trip) is not made."""
    handlers = [checker(entry) for entry in entries]
    results = [handler(label, text, targets) for handler in handlers]
    seen = [span for result in results for span in result.seen]
    place = next((result.place for result in results if result.place), None)
    merged = Checked([f for result in results for f in result.findings], seen=seen, place=place)

    def fix_text(chosen: list[Finding]) -> str | None:
        wanted, current = {f.identity for f in chosen}, text
        for handler, checked in zip(handlers, results, strict=True):
            picked = [f for f in checked.findings if f.identity in wanted]
            if not picked:
                continue
            if current != text:  # an earlier checker changed the text: find them again there
                checked = handler(label, current, targets)
                picked = same_findings(picked, checked.findings)
            new = checked.fix_text(picked) if checked.fix_text else apply_fixes(current, picked)
            current = new if new is not None else current
        return current if current != text else None

    merged.fix_text = fix_text
    return merged


def same_findings(wanted: list[Finding], found: list[Finding]) -> list[Finding]:
    """The findings of `found` that are `wanted` ones, by rule, message and order, in a text
    another checker's fixes have moved."""
    left = Counter((finding.rule, finding.message) for finding in wanted)
    picked = []
    for finding in found:
        if left[finding.rule, finding.message] > 0:
            left[finding.rule, finding.message] -= 1
            picked.append(finding)
    return picked


def _decoded(data: bytes) -> tuple[str, tuple[int, int] | None]:
    """The text of a file, and where its first byte that is not UTF-8 is (None: it is UTF-8).
    A file that is not UTF-8 is read as latin-1, which decodes any bytes one character each,
    so every old name (ASCII) is found at its own line and column."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return data.decode("latin-1"), (exc.start, exc.end)


def _error(label: str, message: str) -> FileReport:
    return FileReport(label, (Lines("").finding(label, 0, 0, Rule.PARSE_ERROR, message),))


def check_paths(
    paths: Iterable[Path],
    targets: Targets,
    config: CheckConfig,
    extra_ignores: Iterable[Rule] = (),
    exclude: Iterable[str] = (),
    fixes: bool = False,
    force_exclude: bool = False,
    processes: int | None = None,
) -> list[FileReport]:
    """The report of every file `check` reads under `paths`, in order; over a large tree, from
    a process per core (`processes`: how many; see `wbmigrate.parallel`)."""
    ignores = Ignores.of(config, extra_ignores)
    found = list(find_files(paths, [*config.exclude, *exclude], force_exclude=force_exclude))
    check = partial(check_file, targets=targets, ignores=ignores, fixes=fixes)
    count = _processes(len(found)) if processes is None else processes
    reports = each(found, check, count, prepare=partial(_prepare, targets))
    return [report for report in reports if report is not None]


def _processes(files: int) -> int:
    """A process per core for a large tree; below PARALLEL_FILES, starting a worker (a fork,
    and its reports sent back) costs about what it saves: most files are passed over after
    one look at their bytes."""
    return 1 if files < PARALLEL_FILES else min(cores(), files // (PARALLEL_FILES // 2))


def _prepare(targets: Targets) -> None:
    """What every process needs, made before workers are forked, once for all of them: the
    prefilter. Checkers are not: each process imports those its files need (importing them
    all first cost the check benchmark 0.03 s for Markdown and notebooks, which none of its
    files needed, and saved nothing of those it needs, imported meanwhile in every process)."""
    _ = targets.prefilter  # a worker forked after this inherits it, never builds its own


def add_findings(
    reports: list[FileReport],
    found: Callable[[Path], tuple[str, list[Finding]]],
    config: CheckConfig,
    extra_ignores: Iterable[Rule] = (),
) -> list[FileReport]:
    """The reports with the findings of a later pass over each file as it now is on disk
    (`--validate`, after any fix was written), ignored or suppressed like any other finding."""
    ignores = Ignores.of(config, extra_ignores)
    out = []
    for report in reports:
        path = Path(report.path)
        text, more = found(path)
        kept, suppressed = suppress(text, more, path, ignores)
        if more:
            findings = sorted([*report.findings, *kept], key=lambda f: (f.line, f.column))
            report = replace(
                report, findings=tuple(findings), suppressed=report.suppressed + suppressed
            )
        out.append(report)
    return out


def write_fixes(reports: list[FileReport]) -> tuple[set[str], list[str]]:
    """Write every fixed file in place, keeping its permissions, unless it is a link or
    changed since it was read: the paths written, and a one-line reason per file refused."""
    written, refused = set(), []
    for report in reports:
        if report.fixed is not None and report.fixed != report.text:
            try:
                write_text(Path(report.path), report.fixed, read=report.read)
            except (UnsafeWrite, OSError) as exc:
                refused.append(
                    str(exc) if isinstance(exc, UnsafeWrite) else f"{report.path}: {exc}"
                )
                continue
            written.add(report.path)
    return written, refused


@dataclass(frozen=True)
class Fixed:
    """What --fix did: what is left in each file, how many findings the files written had
    fixes for, and a line for each file not written."""

    reports: list[FileReport]
    count: int
    refused: list[str]


def fix_files(
    reports: list[FileReport],
    targets: Targets,
    config: CheckConfig,
    extra_ignores: Iterable[Rule] = (),
) -> Fixed:
    """Write every fixed file (see `write_fixes`); a file not written keeps its findings. A
    file written with findings left (without a fix) is checked again as it now is, as ruff
    does, so they are reported where they now are: a fix moves what follows it, a migration
    note the blocks after it. One with none left has none (what a fix writes is clean on a
    second look: the tests hold every kind to it); checking it again would cost a large fix
    nearly as much again (5,000 files, 10% fixed: 3.0 s -> 5.7 s)."""
    written, refused = write_fixes(reports)
    count = sum(len([f for f in r.findings if f.fixable]) for r in reports if r.path in written)
    again = partial(check_file, targets=targets, ignores=Ignores.of(config, extra_ignores))
    left = [_left(r, again) if r.path in written else r for r in reports]
    return Fixed(left, count, refused)


def _left(report: FileReport, again: Callable[[Path], FileReport | None]) -> FileReport:
    if all(f.fixable for f in report.findings):
        return replace(report, findings=())
    return again(Path(report.path)) or report
