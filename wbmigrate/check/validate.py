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

import importlib
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

from wbmigrate.check.config_models import Document, Model, Renames, candidates, parsed
from wbmigrate.check.model import Finding, guarded
from wbmigrate.check.targets import Targets
from wbmigrate.rewrite import MAX_SPEC_BYTES, too_big
from wbmigrate.safe_write import read_file

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
Loaded = list[dict[str, Any]] | str | None  # valid, the schema's errors, or why the load failed


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
    except Exception as exc:  # not installed, or its own import failed: said, never raised
        missing = isinstance(exc, ModuleNotFoundError) and exc.name == "prime_rl"
        return NOT_IMPORTABLE if missing else _unusable(exc)
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


@dataclass(frozen=True)
class Outcome:
    """What --validate made of one file: `model` is the model it was loaded as, when it was."""

    path: str
    status: str  # "valid", "invalid", "not validated", or "" (no prime-rl config)
    model: str = ""
    findings: tuple[Finding, ...] = ()


def validate_file(path: Path, schema: Schema, renames: Renames) -> tuple[str, Outcome]:
    """The file's text as it is now, and what prime-rl's schema makes of it."""
    label = path.as_posix()
    try:
        if path.suffix not in SUFFIXES or too_big(path.stat().st_size):
            return "", Outcome(label, "")
        text = read_file(path, MAX_SPEC_BYTES)[0].decode("utf-8")
    except (OSError, UnicodeDecodeError):  # `check` reports it already
        return "", Outcome(label, "")
    document = parsed(path.suffix, text)
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
    label: str, document: Document, results: list[tuple[Model, Loaded]], stem: str, renames: Renames
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


class Validation:
    """--validate over one run of `check`: each file's findings, and what was validated."""

    def __init__(self, schema: Schema, targets: Targets) -> None:
        self.schema = schema
        self.renames = Renames.of(targets, schema.version)
        self.outcomes: list[Outcome] = []

    def __call__(self, path: Path) -> tuple[str, list[Finding]]:
        label, work = path.as_posix(), partial(validate_file, path, self.schema, self.renames)
        failed = partial(Outcome, label, "not validated")
        text, outcome = guarded(label, work, lambda f: ("", failed(findings=(f,))), "--validate")
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
        total = sum(status.values())
        return (
            f"{head} {total} prime-rl config{'' if total == 1 else 's'}: "
            f"{status['valid']} valid" + (f" ({by_model})" if by_model else "") + ", "
            f"{status['invalid']} invalid, {status['not validated']} not validated"
        )
