"""The W&B keys a Python module logs and the config fields it declares, for `mappings infer`.

A logged key is a string literal where `python_context` places a W&B key (`wandb.log`,
`define_metric`), or a metric-shaped literal (`ns/name`) as a key of a dict literal or of
`metrics["..."] = ...` that no code reads history from, and whose value is not a string or a
dict written in the code (W&B charts neither: a table of model names is no metric). A key
built at run time (an f-string) is kept as a pattern for review, never guessed. A config field
is an annotated attribute of a pydantic model or dataclass; `config_paths` gives each its
dotted path from the root config.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from wbmigrate.check.python_context import Kind, Module
from wbmigrate.mapping.infer import Place

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


def logged_keys(file: str, text: str, configs: bool = False) -> Keys:
    """The keys of one module; a module Python cannot parse has none (it logs nothing)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return Keys()
    module = Module.of(tree)
    lines = text.splitlines()
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
        elif configs and isinstance(node, ast.ClassDef):
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
        if "ClassVar" in _names(item.annotation) or item.target.id.startswith("_"):
            continue
        aliases = tuple(_aliases(item.value)) if item.value is not None else ()
        types = tuple(_names(item.annotation))
        fields.append(ConfigField(item.target.id, types, aliases, place(item)))
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


def _aliases(value: ast.AST) -> Iterator[str]:
    """The old names in `Field(..., validation_alias=AliasChoices("new", "old"))` or `alias=`."""
    if not isinstance(value, ast.Call):
        return
    for keyword in value.keywords:
        if keyword.arg in ("validation_alias", "alias"):
            for node in ast.walk(keyword.value):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    yield node.value


def config_paths(classes: dict[str, ConfigClass]) -> dict[str, tuple[ConfigField, str]]:
    """Every config field by its dotted path from a root config (a config class no other one
    holds), with the class that declares it."""
    configs = {name for name in classes if _is_config(name, classes, 0)}
    held = {t for name in configs for f in _fields(name, classes, 0) for t in f.types}
    paths: dict[str, tuple[ConfigField, str]] = {}

    def walk(name: str, prefix: str, seen: tuple[str, ...]) -> None:
        for found in _fields(name, classes, 0):
            path = f"{prefix}{found.name}"
            paths.setdefault(path, (found, name))
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
