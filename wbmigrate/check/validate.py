"""`check --validate`: each prime-rl config `check` reads, loaded by prime-rl's own loader into the
config model it is for (as `uv run rl @ rl.toml` loads it), and what the schema rejects reported
at the line of the key. prime_rl is the operator's, never a dependency of wbmigrate: it is
imported here only, and only when asked.

Which model a file is for: those that know the most of its keys, at every depth (an rl.toml's
[trainer], [orchestrator] and [inference] are RLConfig's, and so is what is in them). It is valid
when one of them loads it. A file most of whose keys no model knows (a Helm values file with an
`orchestrator:` of its own) is no prime-rl config, and is not validated; one that several models
could be and none loads, or that the loader fails on, gets a note: never passed off as
validated, nor failed on a guess.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
import tomllib
import typing
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from wbmigrate.check.hosts import JsonDocument, YamlDocument
from wbmigrate.check.model import Finding, Lines, Rule
from wbmigrate.check.targets import Targets
from wbmigrate.check.toml_config import placed
from wbmigrate.check.toml_keys import Scan
from wbmigrate.edit.located_yaml import load_located_all
from wbmigrate.errors import bug
from wbmigrate.rewrite import too_big

# prime-rl's entry points and the config model each loads (`[project.scripts]`; the classes its
# own tests/unit/test_configs.py loads every shipped config with), in that order.
MODELS = (
    ("rl", "prime_rl.configs.rl", "RLConfig"),
    ("trainer", "prime_rl.configs.trainer", "TrainerConfig"),
    ("sft", "prime_rl.configs.sft", "SFTConfig"),
    ("orchestrator", "prime_rl.configs.orchestrator", "OrchestratorConfig"),
    ("inference", "prime_rl.configs.inference", "InferenceConfig"),
    ("env-server", "prime_rl.configs.env_server", "EnvServerConfig"),
    ("evals", "prime_rl.configs.evals", "EvalsConfig"),
)
LOADER = "prime_rl.utils.config"  # its `cli` is pydantic_config's, which every entry point calls
DISTRIBUTIONS = ("prime-rl", "prime-rl-configs")
SUFFIXES = (".toml", ".json", ".yaml", ".yml")
FALLBACK = "configs were checked by key against the mapping only"
NOT_IMPORTABLE = (
    f"--validate: prime_rl is not importable here; {FALLBACK} (run wbmigrate in prime-rl's "
    "environment to validate them with its schema)"
)

Span = tuple[int, int]
Loaded = list[dict[str, Any]] | str | None  # valid, the schema's errors, or why the load failed


@dataclass(frozen=True)
class Model:
    """One of prime-rl's config models: the command that loads it, and its class."""

    entry: str
    cls: Any  # a pydantic model class

    @property
    def name(self) -> str:
        return str(self.cls.__name__)


@dataclass(frozen=True)
class Schema:
    """prime-rl's config models as installed here, and its loader."""

    models: tuple[Model, ...]
    load: Callable[..., Any]  # load(cls, args=["@", path]), as `uv run rl @ path` does
    invalid: type[BaseException]  # pydantic's ValidationError
    version: str  # "prime-rl-configs 0.4.0", for messages


def load_schema() -> Schema | str:
    """prime-rl's models and loader, or the one line that says why they cannot be used."""
    try:
        importlib.import_module("prime_rl")
    except ModuleNotFoundError as exc:
        if exc.name == "prime_rl":
            return NOT_IMPORTABLE
        return _unusable(exc)
    except Exception as exc:  # prime_rl's own import failed: said, never raised
        return _unusable(exc)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            load = importlib.import_module(LOADER).cli
            invalid = importlib.import_module("pydantic").ValidationError
            models = tuple(_models())
    except Exception as exc:
        return _unusable(exc)
    if not models:
        return f"--validate: prime_rl has none of the config models wbmigrate knows; {FALLBACK}"
    return Schema(models, load, invalid, _version())


def _unusable(exc: BaseException) -> str:
    reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return f"--validate: prime_rl is installed but cannot be used here ({reason}); {FALLBACK}"


def _models() -> Iterator[Model]:
    """The models this prime_rl has (a module it does not have is skipped; one that fails to
    import makes the schema unusable)."""
    for entry, module_name, class_name in MODELS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and f"{module_name}.".startswith(f"{exc.name}."):
                continue
            raise
        cls = getattr(module, class_name, None)
        if cls is not None:
            yield Model(entry, cls)


def _version() -> str:
    for name in DISTRIBUTIONS:
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    return "prime_rl"


@functools.cache
def _fields(cls: Any) -> dict[str, Any]:
    """The keys a model accepts (its fields and their aliases), each with its field's type."""
    found = {}
    for name, info in getattr(cls, "model_fields", {}).items():
        found[name] = info.annotation
        for alias in (info.alias, info.validation_alias):
            names = [alias, *getattr(alias, "choices", ())]
            found.update((a, info.annotation) for a in names if isinstance(a, str))
    return found


# --- one file -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What --validate made of one file: `model` is the model it was loaded as, when it was."""

    path: str
    status: str  # "valid", "invalid", "not validated", or "" (no prime-rl config)
    model: str = ""
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class Renames:
    """The mapping's config renames, by dotted key: the other name and the step's version; and
    the prime-rl installed here, which may predate a rename."""

    old: dict[str, tuple[str, str]]  # old key -> (new leaf, version)
    new: dict[str, tuple[str, str]]  # new key -> (old leaf, version)
    installed: str = "prime_rl"

    @classmethod
    def of(cls, targets: Targets, installed: str) -> Renames:
        old, new = {}, {}
        for step in targets.migration.steps:
            for rename in step.config:
                for before, after in {rename.old: rename.new, **rename.toml}.items():
                    old[before] = (after.rpartition(".")[2], step.version)
                    new[after] = (before.rpartition(".")[2], step.version)
        return cls(old, new, installed)

    def leaves(self) -> dict[str, str]:
        """Top-level keys each name stands for too (a standalone config's old key is known to
        a model that has its new name, and the other way round)."""
        pairs = [(k, v[0]) for k, v in self.old.items() if "." not in k]
        return {**dict(pairs), **{b: a for a, b in pairs}}


def validate_file(path: Path, schema: Schema, renames: Renames) -> tuple[str, Outcome]:
    """The file's text as it is now, and what prime-rl's schema makes of it."""
    label = path.as_posix()
    try:
        if path.suffix not in SUFFIXES or too_big(path.stat().st_size):
            return "", Outcome(label, "")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):  # `check` reports it already
        return "", Outcome(label, "")
    document = _document(path.suffix, text)
    if document is None or not isinstance(document.data, dict):
        return text, Outcome(label, "")
    try:
        chosen = candidates(document.data, schema.models, renames)
    except RecursionError:  # nested too deeply for any config (`check` says so)
        chosen = []
    if not chosen:
        return text, Outcome(label, "")
    results = [(model, _load(schema, model, path)) for model in chosen]
    return text, _judged(label, document, results, path.stem, renames)


def candidates(data: dict[str, Any], models: Iterable[Model], renames: Renames) -> list[Model]:
    """The models the file may be for: those that know the most of its keys at every depth,
    when that is most of them (else it is no prime-rl config)."""
    leaves = renames.leaves()
    known = {model: _known(model.cls, data, leaves) for model in models}
    most = max(known.values(), default=0)
    if most * 2 <= _count(data):
        return []
    return [model for model, count in known.items() if count == most]


def _known(cls: Any, data: Any, leaves: dict[str, str]) -> int:
    """How many keys of `data`, at every depth, the model knows, following its fields' models
    (a key the mapping renames counts as its other name)."""
    if isinstance(data, list):
        return sum(_known(cls, item, leaves) for item in data)
    if not isinstance(data, dict):
        return 0
    fields, count = _fields(cls), 0
    for key, value in data.items():
        name = key if key in fields else leaves.get(key)
        if name not in fields:
            continue
        inner = list(dict.fromkeys(_models_in(fields[name])))
        count += 1 + max((_known(model, value, leaves) for model in inner), default=0)
    return count


def _count(data: Any) -> int:
    """How many keys `data` holds, at every depth."""
    if isinstance(data, dict):
        return sum(1 + _count(value) for value in data.values())
    return sum(map(_count, data)) if isinstance(data, list) else 0


def _load(schema: Schema, model: Model, path: Path) -> Loaded:
    """Load the file into `model` with prime-rl's loader: None when it is valid."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            schema.load(model.cls, args=["@", str(path)])
        except (Exception, SystemExit) as exc:  # whatever the loader raises is reported
            cause = exc if isinstance(exc, schema.invalid) else exc.__cause__
            if isinstance(cause, schema.invalid):
                return list(cause.errors())  # type: ignore[attr-defined]
            return _first_sentence(f"{type(exc).__name__}: {exc}")
    return None


def _first_sentence(text: str) -> str:
    """What a loader's error says first (verifiers' go on for lines), at most 200 characters."""
    first = text.strip().splitlines()[0] if text.strip() else text
    first = first.split(". ")[0].rstrip(".")
    return first if len(first) <= 200 else first[:197] + "..."


def _judged(
    label: str,
    document: Document,
    results: list[tuple[Model, Loaded]],
    stem: str,
    renames: Renames,
) -> Outcome:
    valid = [model for model, loaded in results if loaded is None]
    if valid:
        return Outcome(label, "valid", valid[0].name)
    crashed = [(model, loaded) for model, loaded in results if isinstance(loaded, str)]
    if crashed:
        names = " or ".join(model.name for model, _ in crashed)
        note = f"not validated: prime-rl's loader failed on it as {names} ({crashed[0][1]})"
        return Outcome(label, "not validated", "", (document.note(label, note),))
    failed = [(model, loaded) for model, loaded in results if isinstance(loaded, list)]
    picked = _pick(failed, stem)
    if picked is None:
        names = " or ".join(model.name for model, _ in failed)
        note = f"not validated: could not tell which prime-rl config this is ({names}: "
        note += "it loads as none)"
        return Outcome(label, "not validated", "", (document.note(label, note),))
    model, errors = picked
    found = tuple(document.finding(label, error, model, renames) for error in errors)
    return Outcome(label, "invalid", model.name, found)


def _pick(
    failed: list[tuple[Model, list[dict[str, Any]]]], stem: str
) -> tuple[Model, list[dict[str, Any]]] | None:
    """The model whose errors to report: the only one, the one the file is named after (a
    resolved `orchestrator.json`), or the one with the fewest; None when several are as close."""
    if len(failed) == 1:
        return failed[0]
    named = [one for one in failed if one[0].entry == stem]
    fewest = min(len(errors) for _, errors in failed)
    closest = named or [one for one in failed if len(one[1]) == fewest]
    return closest[0] if len(closest) == 1 else None


# --- where each error is, and what it says --------------------------------------------------


DataPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Document:
    """A config file's text, its data, and where the key at a path of it is."""

    text: str
    data: Any
    span: Callable[[DataPath], Span]

    def note(self, label: str, message: str) -> Finding:
        return Lines(self.text).finding(label, 0, 0, Rule.NOT_VALIDATED, message)

    def finding(self, label: str, error: dict[str, Any], model: Model, renames: Renames) -> Finding:
        path, shown = _data_path(self.data, tuple(error.get("loc", ())))
        start, end = self.span(path)
        message = _message(error, shown, model, renames)
        return Lines(self.text).finding(label, start, end, Rule.CONFIG_INVALID, message)


def _document(suffix: str, text: str) -> Document | None:
    """The parsed file, or None when it does not parse (`check` says so) or holds several YAML
    documents (prime-rl reads one)."""
    try:
        if suffix == ".toml":
            data = tomllib.loads(text)
            scan = placed(text, data)
            return Document(text, data, lambda path: _toml_span(scan, path))
        if suffix == ".json":
            json_document = JsonDocument(text, json.loads(text))
            return Document(text, json_document.data, lambda p: json_document.span(p, key=True))
        located = load_located_all(text)
    except (ValueError, RecursionError, yaml.YAMLError):  # TOMLDecodeError is a ValueError
        return None
    if len(located) != 1:
        return None
    yaml_document = YamlDocument(text, located[0], located)
    return Document(text, yaml_document.data, lambda p: yaml_document.span(p, key=True))


def _toml_span(scan: Scan | None, path: DataPath) -> Span:
    """The key at `path` (in an array of tables, its n-th occurrence), else the first key of
    the nearest table that is there; the file's start when the keys could not be placed."""
    names = tuple(part for part in path if isinstance(part, str))
    index = next((part for part in path if isinstance(part, int)), 0)
    for end in range(len(names), 0, -1):
        exact = [key for key in (scan.keys if scan else ()) if key.path == names[:end]]
        inside = [key for key in (scan.keys if scan else ()) if key.path[:end] == names[:end]]
        found = exact[min(index, len(exact) - 1)] if exact else inside[0] if inside else None
        if found is not None:
            return found.start, found.end
    return 0, 0


def _data_path(data: Any, loc: tuple[Any, ...]) -> tuple[DataPath, str]:
    """Where pydantic's `loc` is in the data (a union's tag is not), and how to show it: a
    missing key is shown, and located at its parent."""
    path: list[str | int] = []
    shown, node = "", data
    for number, part in enumerate(loc):
        there = isinstance(node, dict) and part in node
        there = there or (isinstance(node, list) and isinstance(part, int) and part < len(node))
        if there:
            node = node[part]
            path.append(part)
        elif number < len(loc) - 1 or not isinstance(node, dict):
            continue
        shown = f"{shown}[{part}]" if isinstance(part, int) else f"{shown}.{part}".lstrip(".")
    return tuple(path), shown


def _message(error: dict[str, Any], shown: str, model: Model, renames: Renames) -> str:
    loc = tuple(error.get("loc", ()))
    owner = _owner(model.cls, loc)
    where = shown or "the file"
    kind = error.get("type")
    if kind == "extra_forbidden":
        key = re.sub(r"\[\d+\]", "", shown)  # a list's index is no part of a dotted key
        text = f"{where}: unknown to prime-rl's {owner}{_renamed(key, renames)}"
    elif kind == "missing":
        text = f"{where}: missing (required by prime-rl's {owner})"
    else:
        text = f"{where}: {error.get('msg', kind)}{_got(error)} (prime-rl's {owner})"
    return text if owner == model.name else f"{text}; loaded as {model.name}"


def _renamed(key: str, renames: Renames) -> str:
    if key in renames.old:
        new, version = renames.old[key]
        return f" (renamed {new} in {version})"
    if key in renames.new:
        old, version = renames.new[key]
        return (
            f" (the new name of {old} from {version}: the {renames.installed} installed here "
            "predates it)"
        )
    return ""


def _got(error: dict[str, Any]) -> str:
    value = error.get("input")
    if value is None or isinstance(value, dict | list):
        return ""
    shown = repr(value)
    return f" (got {shown if len(shown) <= 60 else shown[:57] + '...'})"


def _owner(cls: Any, loc: tuple[Any, ...]) -> str:
    """The name of the model that holds the last key of `loc` (the file's model if unsure)."""
    options = [cls]
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        holding = [_fields(o)[part] for o in options if part in _fields(o)]
        if holding:
            options = list(dict.fromkeys(_models_in(holding[0])))
        else:  # a union's tag: the variant it names
            options = [o for o in options if _tagged(o, part)] or options
        if not options:
            break
    return str(options[0].__name__) if len(options) == 1 else str(cls.__name__)


def _models_in(annotation: Any) -> list[Any]:
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models_in(arg)]


def _tagged(model: Any, tag: str) -> bool:
    return bool(model.__name__ == tag or any(f.default == tag for f in model.model_fields.values()))


# --- a run ----------------------------------------------------------------------------------


class Validation:
    """--validate over one run of `check`: each file's findings, and what was validated."""

    def __init__(self, schema: Schema, targets: Targets) -> None:
        self.schema = schema
        self.renames = Renames.of(targets, schema.version)
        self.outcomes: list[Outcome] = []

    def __call__(self, path: Path) -> tuple[str, list[Finding]]:
        try:
            text, outcome = validate_file(path, self.schema, self.renames)
        except Exception as exc:  # a bug of ours: said for this file, and the run goes on
            message = bug(exc, "this file", "--validate", text=True)
            finding = Lines("").finding(path.as_posix(), 0, 0, Rule.INTERNAL_ERROR, message)
            text, outcome = "", Outcome(path.as_posix(), "not validated", findings=(finding,))
        self.outcomes.append(outcome)
        return text, list(outcome.findings)

    def summary(self) -> str:
        """One line: how many configs were validated, as which models, and with what result."""
        head = f"--validate ({self.schema.version}):"
        status = Counter(o.status for o in self.outcomes if o.status)
        if not status:
            return f"{head} none of the files checked is a prime-rl config"
        models = Counter(o.model for o in self.outcomes if o.status == "valid")
        by_model = ", ".join(f"{name} {count}" for name, count in models.most_common())
        return (
            f"{head} {_configs(sum(status.values()))}: "
            f"{status['valid']} valid" + (f" ({by_model})" if by_model else "") + ", "
            f"{status['invalid']} invalid, {status['not validated']} not validated"
        )


def _configs(count: int) -> str:
    return f"{count} prime-rl config{'' if count == 1 else 's'}"
