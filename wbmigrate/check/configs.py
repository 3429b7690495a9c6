"""`verify`'s check of the configs among a folder of specs: `check`'s key rule and, when
`prime_rl` is importable, its `--validate`, as `verify` findings. It lives here, beside the
rules it runs, so `verify`'s command only parses, calls and prints."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from wbmigrate.check.config import find_config
from wbmigrate.check.model import FileReport, Rule
from wbmigrate.check.run import add_findings, check_paths
from wbmigrate.check.targets import targets_for
from wbmigrate.check.validate import Validation, load_schema
from wbmigrate.engine.model import Options
from wbmigrate.mapping import Migration
from wbmigrate.verify import Check, Finding

KEPT = {Rule.RENAMED_CONFIG_KEY: Check.OLD_NAME_LEFT, Rule.CONFIG_INVALID: Check.CONFIG_INVALID}


def verify_configs(
    target: Path,
    migration: Migration,
    options: Options,
    status: Callable[[str], None],
    specs: Iterable[str] = (),
) -> list[Finding]:
    """An old key left in a config (the mapping's key check) and what prime-rl's own schema
    rejects; `status` is told whether the schema could be used. `specs`: the files verified as
    specs already, whose keys are not looked at again."""
    config, targets = find_config(Path.cwd()), targets_for(migration, options)
    ignores = set(Rule) - set(KEPT)
    verified = {Path(path).resolve() for path in specs}
    reports = [
        report
        for report in check_paths([target], targets, config, ignores)
        if Path(report.path).resolve() not in verified
    ]
    schema = load_schema()
    if isinstance(schema, str):
        if any(_config_like(r) for r in reports):  # else nothing was left unvalidated
            status(schema)
    else:
        validation = Validation(schema, targets)
        reports = add_findings(reports, validation, config, ignores)
        status(validation.summary())
    return [
        Finding(KEPT[f.rule], f.path, f.path, (f"line {f.line}",), f"line {f.line}", f.message)
        for report in reports
        for f in report.findings
        if f.rule in KEPT
    ]


def _config_like(report: FileReport) -> bool:
    """A file that may be a prime-rl config: TOML or YAML, or one with an old config key."""
    suffix = Path(report.path).suffix
    return suffix in (".toml", ".yaml", ".yml") or any(
        f.rule is Rule.RENAMED_CONFIG_KEY for f in report.findings
    )
