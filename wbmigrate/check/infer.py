"""`mappings infer`: walk a repository's main line commit by commit and say, for each, which
logged W&B keys and config fields it renamed, removed or added (`mapping.infer` pairs them).

Only the Python files a commit changed are read, before and after; a key that leaves them is
removed only if no Python file of the repository still names it, and a key that enters them
is new only if none named it before (so a key moved between files is neither).

What one module logs: a string literal where `python_context` places a W&B key (`wandb.log`,
`define_metric`), or a metric-shaped literal (`ns/name`) as a key of a dict literal or of
`metrics["..."] = ...` that no code reads history from, and whose value is not a string or a
dict written in the code (W&B charts neither: a table of model names is no metric). A key
built at run time (an f-string) is kept as a pattern for review, never guessed. A config field
is an annotated attribute of a pydantic model or dataclass; `config_paths` gives each its
dotted path from the root config. (Over 300 lines: one command's walk and what it reads.)
"""

from __future__ import annotations

import ast
import difflib
import fnmatch
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from wbmigrate import gitlog
from wbmigrate.check.model import PYTHON_LINE_END
from wbmigrate.check.python_context import Kind, Module
from wbmigrate.mapping.infer import (
    NAMES_DIFFER,
    Found,
    Gone,
    InferredStep,
    Pair,
    Place,
    pair,
    ranked,
    similarity,
)

T = TypeVar("T")


def infer(repo: Path, start: str, to: str, paths: tuple[str, ...] = ()) -> list[InferredStep]:
    """The main line's commits from `start` (included) to `to`, each with what it changed."""
    commits = gitlog.main_line(repo, start, to)
    state = _State(repo, paths)
    if commits[0].parent:
        state.read_configs(commits[0].parent)
    return [state.step(commit) for commit in commits]


def is_config_file(path: str) -> bool:
    """Where config classes live: a Python file with "config" in its path (`configs/rl.py`)."""
    return path.endswith(".py") and "config" in path.lower()


@dataclass
class _State:
    """What the walk carries from commit to commit: the config classes of each config file and
    their dotted paths (a key that comes back is `mapping.infer.draft`'s to see)."""

    repo: Path
    paths: tuple[str, ...]
    classes: dict[str, dict[str, ConfigClass]] = field(default_factory=dict)  # file -> classes
    fields: dict[str, ConfigField] = field(default_factory=dict)  # by dotted path

    def wanted(self, path: str) -> bool:
        return path.endswith(".py") and (
            not self.paths or any(fnmatch.fnmatch(path, glob) for glob in self.paths)
        )

    def read_configs(self, rev: str) -> None:
        listed = gitlog.git(self.repo, "ls-tree", "-r", "-z", "--name-only", rev).decode()
        files = [p for p in listed.split("\0") if is_config_file(p) and self.wanted(p)]
        texts = gitlog.read_files(self.repo, [(rev, p) for p in files])
        self.classes = {
            p: logged_keys(p, texts[rev, p]).classes for p in files if (rev, p) in texts
        }
        self.fields = config_paths(_merged(self.classes))

    def step(self, commit: gitlog.Commit) -> InferredStep:
        parent, rev = commit.parent or "", commit.rev
        files = [p for p in commit.files if self.wanted(p)]
        texts = gitlog.read_files(self.repo, [(r, p) for p in files for r in (parent, rev) if r])
        files = [p for p in files if is_config_file(p) or _strings_changed(texts, parent, rev, p)]
        before = {p: logged_keys(p, texts[parent, p]) for p in files if (parent, p) in texts}
        after = {p: logged_keys(p, texts[rev, p]) for p in files if (rev, p) in texts}
        found = self._metrics(commit, parent, before, after)
        metrics, metric_notes = _apart(found, texts, parent, rev)
        config, config_notes = self._config(files, after)
        config, apart = _apart(config, texts, parent, rev)
        notes = (*metric_notes, *config_notes, *apart)
        old = _merged({p: keys.patterns for p, keys in before.items()})
        new = _merged({p: keys.patterns for p, keys in after.items()})
        patterns = (
            *(("removed", k, v) for k, v in old.items() if k not in new),
            *(("added", k, v) for k, v in new.items() if k not in old),
        )
        return InferredStep(
            rev, commit.pull, commit.date, commit.subject, metrics, config, patterns, notes
        )

    def _metrics(
        self, commit: gitlog.Commit, parent: str, before: dict[str, Keys], after: dict[str, Keys]
    ) -> Found:
        old = _merged({p: keys.metrics for p, keys in before.items()})
        new = _merged({p: keys.metrics for p, keys in after.items()})
        removed = {k: v for k, v in old.items() if k not in new}
        added = {k: v for k, v in new.items() if k not in old}
        # A key another file still names is not removed; one another file named is not new.
        for key in gitlog.mentioned(self.repo, commit.rev, removed) if removed else ():
            removed.pop(key, None)
        existing = _spread(before, after)
        for key in gitlog.mentioned(self.repo, parent, added) if added and parent else ():
            existing[key] = added.pop(key)
        found = pair(removed, added)
        if not (found.removed and existing):
            return found
        # A key gone where one already logged elsewhere now is: renamed into it, and the two
        # series become one (`completion_len/avg` into `completion_len/mean`).
        left = {gone.name: gone.before for gone in found.removed}
        merged = [
            replace(p, review=f"{p.new} was already logged elsewhere; {p.review}")
            for p in ranked(left, existing)
        ]
        gone = tuple(g for g in found.removed if g.name in left)
        return replace(found, renamed=found.renamed + tuple(merged), removed=gone)

    def _config(self, files: list[str], after: dict[str, Keys]) -> tuple[Found, list[str]]:
        changed = [p for p in files if is_config_file(p)]
        if not changed:
            return Found(), []
        for path in changed:
            self.classes.pop(path, None)
            if path in after:
                self.classes[path] = after[path].classes
        old, self.fields = self.fields, config_paths(_merged(self.classes))
        removed = {k: f.place for k, f in old.items() if k not in self.fields}
        added = {k: f.place for k, f in self.fields.items() if k not in old}
        aliases = {k: self.fields[k].aliases for k in added if self.fields[k].aliases}
        # A value is never renamed into a section, nor a section into a value.
        sections = {k.rpartition(".")[0] for k in [*old, *self.fields]}
        sides = [
            pair(
                {k: v for k, v in removed.items() if (k in sections) is section},
                {k: v for k, v in added.items() if (k in sections) is section},
                aliases,
            )
            for section in (True, False)
        ]
        found = Found(*(sum((getattr(f, part) for f in sides), ()) for part in _PARTS))
        return _unlikely(_collapse(found))


_QUOTED = re.compile(r"""(["'])((?:\\.|(?!\1).)*?)\1""")


def _strings_changed(texts: dict[tuple[str, str], str], parent: str, rev: str, path: str) -> bool:
    """Whether the quoted strings of a file differ before and after: if not, no key it logs
    changed, and parsing it twice (most of the time of a long history) can be skipped."""
    before, after = texts.get((parent, path)), texts.get((rev, path))
    if before is None or after is None:
        return True
    return {m[2] for m in _QUOTED.finditer(before)} != {m[2] for m in _QUOTED.finditer(after)}


_PARTS = ("renamed", "removed", "added")


def _unlikely(found: Found) -> tuple[Found, list[str]]:
    """Pairs made by name similarity alone that change both a field's section and its name are
    left out: a knob replaced by a new section's (#3285's `max_inflight_episodes` by
    `concurrency.max_inflight`) is not the same setting under another name."""

    def why(p: Pair) -> str:
        (old_section, _, old), (new_section, _, new) = p.old.rpartition("."), p.new.rpartition(".")
        moved = old_section != new_section and old != new and not _same_words(p.old, p.new)
        if not p.review or p.deprecation or not moved:
            return ""
        return f"changes both its section and its name (similarity {similarity(p.old, p.new):.2f})"

    return _left_out(found, why)


def _same_words(old: str, new: str) -> bool:
    """One name nested or flattened: `weights.path` and `weights_path`, `resume_step` and
    `resume.step`."""
    olds, news = old.split("."), new.split(".")
    return "_".join(olds[-2:]) == news[-1] or olds[-1] == "_".join(news[-2:])


def _apart(
    found: Found, texts: dict[tuple[str, str], str], parent: str, rev: str
) -> tuple[Found, list[str]]:
    """One key out of a function and one unlike it in, in two places of it, are no rename
    (#1211's `time/eval` and `val_reward/mean`): only one block of lines the commit replaced
    holding both says one took the other's place."""

    def why(p: Pair) -> str:
        if not p.review.startswith(NAMES_DIFFER) or _one_block(texts, parent, rev, p):
            return ""
        return (
            f"the only change in {p.after.scope or p.after.file}, but not in one place, and the"
            f" names differ (similarity {similarity(p.old, p.new):.2f})"
        )

    return _left_out(found, why)


def _one_block(texts: dict[tuple[str, str], str], parent: str, rev: str, p: Pair) -> bool:
    old, new = texts.get((parent, p.before.file)), texts.get((rev, p.after.file))
    if p.before.file != p.after.file or old is None or new is None:
        return False
    lines = difflib.SequenceMatcher(
        None, PYTHON_LINE_END.split(old), PYTHON_LINE_END.split(new), autojunk=False
    )
    return any(
        tag == "replace" and i < p.before.line <= j and k < p.after.line <= m
        for tag, i, j, k, m in lines.get_opcodes()
    )


def _left_out(found: Found, why: Callable[[Pair], str]) -> tuple[Found, list[str]]:
    """The pairs `why` gives a reason against, as notes: their old key removed, their new one
    added."""
    reasons = [(p, why(p)) for p in found.renamed]
    left = [(p, reason) for p, reason in reasons if reason]
    kept = tuple(p for p, reason in reasons if not reason)
    removed = found.removed + tuple(Gone(p.old, p.before) for p, _ in left)
    added = found.added + tuple(p.new for p, _ in left)
    return Found(kept, removed, added), [f"not paired: {p.old} -> {p.new}: {r}" for p, r in left]


def _collapse(found: Found) -> Found:
    """A section moved is one entry: its fields, moved with it under the same names, are not.
    Nor is a key only a root config now holds, or no longer holds (`x` and `orchestrator.x`):
    the section's own file still names it the same."""
    moved = {p.old: p.new for p in found.renamed}

    def rooted(old: str, new: str) -> bool:
        return new.endswith(f".{old}") or old.endswith(f".{new}")

    def carried(old: str, new: str) -> bool:
        old_parent, _, old_leaf = old.rpartition(".")
        new_parent, _, new_leaf = new.rpartition(".")
        return old_leaf == new_leaf and bool(old_parent) and moved.get(old_parent) == new_parent

    kept = [p for p in found.renamed if not carried(p.old, p.new) and not rooted(p.old, p.new)]
    return replace(found, renamed=tuple(kept))


def _spread(before: dict[str, Keys], after: dict[str, Keys]) -> dict[str, Place]:
    """Keys logged in a function now that did not log them, still logged everywhere they were
    (#1714's eval dict took up `completion_len/mean`, which the trainer logged already); a key
    that left a function only moved."""
    old = {s for keys in before.values() for s in keys.scopes}
    new = {s: p for keys in after.values() for s, p in keys.scopes.items()}
    kept = {key for key, _ in old} - {key for key, _ in old - new.keys()}
    return {key: new[key, scope] for key, scope in sorted(new.keys() - old) if key in kept}


def _merged(tables: dict[str, dict[str, T]]) -> dict[str, T]:
    """One table of the tables of several files, read in the order of their paths."""
    return {k: v for path in sorted(tables) for k, v in tables[path].items()}


def repository_url(repo: Path) -> str | None:
    """The web address of the repository's `origin` on GitHub, if it has one."""
    try:
        remote = gitlog.git(repo, "remote", "get-url", "origin").decode().strip()
    except gitlog.GitError:
        return None
    found = re.fullmatch(
        r"(?:https://|git@|ssh://git@)github\.com[:/]([\w.-]+/[\w.-]+?)(?:\.git)?/?", remote
    )
    return f"https://github.com/{found[1]}" if found else None


# --- what one module logs and declares -------------------------------------------------------

# A whole W&B key with a namespace: ASCII, no spaces, not a file name.
_METRIC = re.compile(r"[A-Za-z_][\w.@:+\-]*(?:/[\w.@:+\-]+)+\Z", re.ASCII)
_FILE = re.compile(r"\.(?:py|json|ya?ml|toml|txt|md|jsonl|parquet|safetensors|bin|pt|csv)\Z")
_PYDANTIC = {"BaseModel", "BaseSettings", "BaseConfig"}
DEPTH = 8  # how deep config classes nest before a path is cut


@dataclass(frozen=True)
class ConfigField:
    name: str
    types: tuple[str, ...]  # the class names its annotation mentions
    aliases: tuple[str, ...]  # old names that still validate (validation_alias, AliasChoices)
    place: Place


@dataclass(frozen=True)
class ConfigClass:
    name: str
    bases: tuple[str, ...]
    fields: tuple[ConfigField, ...]
    dataclass: bool


@dataclass
class Keys:
    """What one module logs and declares."""

    metrics: dict[str, Place] = field(default_factory=dict)
    scopes: dict[tuple[str, str], Place] = field(default_factory=dict)  # (key, function)
    patterns: dict[str, Place] = field(default_factory=dict)  # f-string keys, as written
    classes: dict[str, ConfigClass] = field(default_factory=dict)


def logged_keys(file: str, text: str) -> Keys:
    """The keys of one module, and its config classes if it is a config file; a module Python
    cannot parse has none (it logs nothing)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return Keys()
    module = Module.of(tree)
    lines = PYTHON_LINE_END.split(text)
    keys = Keys()

    def place(node: ast.AST) -> Place:
        line = getattr(node, "lineno", 1)
        code = lines[line - 1].strip() if line <= len(lines) else ""
        return Place(file, line, _scope(module, node), code)

    for node, parent in module.parents.items():
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if not isinstance(parent, ast.JoinedStr) and _logged(module, node, node.value):
                here = place(node)
                keys.metrics.setdefault(node.value, here)
                keys.scopes.setdefault((node.value, here.scope or file), here)
        elif isinstance(node, ast.JoinedStr) and (pattern := _pattern(node)):
            if _logged(module, node, pattern.replace("{", "").replace("}", "")):
                keys.patterns.setdefault(pattern, place(node))
        elif isinstance(node, ast.ClassDef) and is_config_file(file):
            found = _config_class(node, place)
            keys.classes[found.name] = found
    return keys


def _logged(module: Module, node: ast.AST, value: str) -> bool:
    context = module.context(node)
    if context.kind in (Kind.LOG, Kind.DEFINE):
        return bool(value) and not value.endswith("*")  # `define_metric("x/*")` is a glob
    if context.kind is not Kind.UNKNOWN or not _METRIC.match(value) or _FILE.search(value):
        return False
    parent = module.parents.get(node)
    stored = isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store)
    if isinstance(parent, ast.Dict) and _written(parent, node):
        return False
    return context.dict_key or stored


def _written(table: ast.Dict, key: ast.AST) -> bool:
    """Whether a key's value is a string or a dict written in the code: a table of names
    (`{"Qwen/Qwen3-8B": "hermes"}`), not metrics."""
    value = next((v for k, v in zip(table.keys, table.values, strict=True) if k is key), None)
    text = isinstance(value, ast.Constant) and isinstance(value.value, str)
    return text or isinstance(value, ast.Dict | ast.JoinedStr)


def _pattern(node: ast.JoinedStr) -> str:
    """`f"eval/{env}/avg"` as written, `eval/{env}/avg`; empty when it has no fixed `/`."""
    text = "".join(
        str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
        for v in node.values
        if isinstance(v, ast.Constant | ast.FormattedValue)
    )
    fixed = "".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))
    return text if "/" in fixed and "\n" not in text else ""


def _scope(module: Module, node: ast.AST) -> str:
    """The functions and classes around a node, as `Class.method`."""
    names = []
    while (node := module.parents.get(node)) is not None:  # type: ignore[assignment]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
    return ".".join(reversed(names))


def _config_class(node: ast.ClassDef, place: Callable[[ast.AST], Place]) -> ConfigClass:
    bases = tuple(_last(base) for base in node.bases)
    fields = []
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        types = tuple(_names(item.annotation))
        if "ClassVar" in types or item.target.id.startswith("_"):
            continue
        fields.append(ConfigField(item.target.id, types, tuple(_aliases(item.value)), place(item)))
    decorated = any("dataclass" in _last(d) for d in node.decorator_list)
    return ConfigClass(node.name, bases, tuple(fields), decorated)


def _last(node: ast.AST) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    node = node.value if isinstance(node, ast.Subscript) else node
    return ast.unparse(node).rpartition(".")[2]


def _names(annotation: ast.AST) -> Iterator[str]:
    """Every class name an annotation mentions, inside strings (`"VLMConfig | None"`) too."""
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield from re.findall(r"[A-Za-z_]\w*", node.value)


def _aliases(value: ast.AST | None) -> Iterator[str]:
    """The old names in `Field(..., validation_alias=AliasChoices("new", "old"))` or `alias=`."""
    if not isinstance(value, ast.Call):
        return
    for keyword in value.keywords:
        if keyword.arg in ("validation_alias", "alias"):
            for node in ast.walk(keyword.value):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    yield node.value


def config_paths(classes: dict[str, ConfigClass]) -> dict[str, ConfigField]:
    """Every config field by its dotted path from a root config (a config class no other one
    holds)."""
    configs = {name for name in classes if _is_config(name, classes, 0)}
    held = {t for name in configs for f in _fields(name, classes, 0) for t in f.types}
    paths: dict[str, ConfigField] = {}

    def walk(name: str, prefix: str, seen: tuple[str, ...]) -> None:
        for found in _fields(name, classes, 0):
            path = f"{prefix}{found.name}"
            paths.setdefault(path, found)
            for inner in found.types:
                if inner in configs and inner not in seen and len(seen) < DEPTH:
                    walk(inner, f"{path}.", (*seen, inner))

    for root in sorted(configs - held):
        walk(root, "", (root,))
    return paths


def _is_config(name: str, classes: dict[str, ConfigClass], depth: int) -> bool:
    found = classes.get(name)
    if found is None or depth > DEPTH:
        return False
    if found.dataclass or _PYDANTIC & set(found.bases):
        return True
    return any(_is_config(base, classes, depth + 1) for base in found.bases)


def _fields(name: str, classes: dict[str, ConfigClass], depth: int) -> list[ConfigField]:
    """A class's fields with those it inherits (a subclass's own field wins)."""
    found = classes.get(name)
    if found is None or depth > DEPTH:
        return []
    inherited = [f for base in found.bases for f in _fields(base, classes, depth + 1)]
    own = {f.name for f in found.fields}
    return [f for f in inherited if f.name not in own] + list(found.fields)
