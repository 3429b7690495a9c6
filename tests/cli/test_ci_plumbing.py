"""What other tools run: the pre-commit hooks (`.pre-commit-hooks.yaml`) and the GitHub Action
(`action.yml`). Their files are checked for shape; pre-commit itself, when installed, runs the
hooks' entry and file selection over a scratch repository (offline: `language: system` stands
in for the virtualenv pre-commit would otherwise build from the network)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import REPO

from wbmigrate.check.places import PROSE_SUFFIXES
from wbmigrate.check.run import KINDS

HOOKS = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
OLD_CONFIG = "[orchestrator]\nmax_off_policy_steps = 8\n"


# --- the pre-commit hooks --------------------------------------------------------------------


def test_both_hooks_apply_excludes_to_the_files_pre_commit_names():
    by_id = {hook["id"]: hook for hook in HOOKS}
    assert by_id["wbmigrate-check"]["entry"] == "wbmigrate check --force-exclude"
    assert by_id["wbmigrate-fix"]["entry"] == "wbmigrate check --force-exclude --fix"
    assert all(hook["language"] == "python" for hook in HOOKS)
    assert HOOKS[0]["types_or"] == HOOKS[1]["types_or"]


def _samples(folder: Path) -> list[Path]:
    """One file of every kind `check` reads: each suffix and name it knows, a shebang script
    without an extension (not executable, as a checkout may leave it) and the prose kinds."""
    kinds = [kind.replace("*", "sample") for kind in KINDS]
    names = kinds + [f"sample{suffix}" for suffix in PROSE_SUFFIXES]
    paths = []
    for name in names:
        path = folder / name
        path.write_text("x = 1\n")
        paths.append(path)
    script = folder / "train"
    script.write_text("#!/usr/bin/env bash\nuv run rl\n")
    script.chmod(0o755)
    return [*paths, script]


def test_types_or_takes_every_kind_of_file_check_reads(tmp_path):
    identify = pytest.importorskip("identify.identify")
    types = set(HOOKS[0]["types_or"])
    generic = {"text", "file", "executable", "non-executable"}
    for path in _samples(tmp_path):
        tags = identify.tags_from_path(str(path))
        assert tags & types, (path.name, tags)  # pre-commit hands it to the hook
        specific = tags - generic
        assert not specific or specific & types, (path.name, specific)  # named by its own tag
    for tag in types:
        assert tag in identify.ALL_TAGS, tag


@pytest.fixture
def scratch(tmp_path):
    """A git repository with an old key in a tracked config, one in an excluded vendor folder,
    and files of other kinds."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    (repo / "configs").mkdir(parents=True)
    (repo / "vendor").mkdir()
    (repo / "configs" / "rl.toml").write_text(OLD_CONFIG)
    (repo / "vendor" / "rl.toml").write_text(OLD_CONFIG)
    (repo / "job.sbatch").write_text("#!/bin/bash\nsrun rl --orchestrator.max_off_policy_steps=8\n")
    (repo / "notes.txt").write_text("nothing to see\n")
    (repo / "pyproject.toml").write_text('[tool.wbmigrate]\nexclude = ["vendor/"]\n')
    hooks = [{**hook, "language": "system"} for hook in HOOKS]
    config = {"repos": [{"repo": "local", "hooks": hooks}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    for command in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *command], cwd=repo, check=True)
    return repo


def _pre_commit(repo: Path, hook: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home"),
        "PYTHONPATH": str(REPO),
    }
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", hook, "--all-files", "--color", "never"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_pre_commit_runs_the_hooks_over_what_check_reads(scratch):
    pytest.importorskip("pre_commit")
    found = _pre_commit(scratch, "wbmigrate-check")
    assert found.returncode == 1, found.stdout + found.stderr
    assert "configs/rl.toml" in found.stdout
    assert "job.sbatch" in found.stdout  # no identify tag of its own: `text` brings it
    assert "vendor/rl.toml" not in found.stdout  # excluded, though pre-commit names it
    fixed = _pre_commit(scratch, "wbmigrate-fix")
    assert fixed.returncode == 1  # pre-commit fails a hook that changed files
    assert (scratch / "configs" / "rl.toml").read_text() == OLD_CONFIG.replace(
        "max_off_policy_steps", "max_staleness"
    )
    assert "--orchestrator.max_staleness=8" in (scratch / "job.sbatch").read_text()
    assert (scratch / "vendor" / "rl.toml").read_text() == OLD_CONFIG
    again = _pre_commit(scratch, "wbmigrate-check")
    assert again.returncode == 0, again.stdout + again.stderr


# --- the GitHub Action -------------------------------------------------------------------------


def test_action_is_a_composite_with_its_inputs():
    assert ACTION["runs"]["using"] == "composite"
    inputs = ACTION["inputs"]
    assert inputs["paths"]["default"] == "."
    assert inputs["args"]["default"] == ""
    assert inputs["version"]["default"] == ""
    assert inputs["upload-sarif"]["default"] == "false"
    assert all("description" in spec for spec in inputs.values())
    assert {"name", "description", "branding"} <= set(ACTION)


def _steps() -> list[dict]:
    steps: list[dict] = ACTION["runs"]["steps"]
    return steps


def test_action_installs_then_writes_sarif_uploads_it_and_annotates():
    steps = _steps()
    runs = [step.get("run", "") for step in steps]
    install = next(i for i, run in enumerate(runs) if "pip install" in run)
    sarif = next(i for i, run in enumerate(runs) if "--format sarif" in run)
    upload = next(
        i for i, s in enumerate(steps) if s.get("uses", "").startswith("github/codeql-action/")
    )
    annotate = next(i for i, run in enumerate(runs) if "--format github" in run)
    assert install < sarif < upload < annotate  # the gate's failure comes last
    assert steps[upload]["uses"] == "github/codeql-action/upload-sarif@v3"
    assert steps[upload]["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    for step in (steps[sarif], steps[upload]):
        assert step["if"] == "${{ inputs.upload-sarif == 'true' }}"
    assert "if" not in steps[annotate]
    for index in (sarif, annotate):
        assert re.search(r"wbmigrate check \$PATHS \$ARGS --format", runs[index])


def test_action_shell_steps_take_inputs_only_through_the_environment():
    """A run script that pasted `${{ inputs.x }}` into itself could be made to run anything."""
    for step in _steps():
        if "run" in step:
            assert step["shell"] == "bash"
            assert "${{" not in step["run"], step["run"]


def test_action_installs_its_own_revision_a_release_or_a_requirement(tmp_path):
    """The install script, run with pip replaced by an echo, for each kind of `version`."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    script = next(step["run"] for step in _steps() if "pip install" in step.get("run", ""))
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\necho "$@"\n')
    fake.chmod(0o755)
    (tmp_path / "wbmigrate").write_text("#!/bin/sh\n")
    (tmp_path / "wbmigrate").chmod(0o755)
    expected = {
        "": "/action",
        "0.1.0": "wbmigrate==0.1.0",
        "wbmigrate @ git+https://example.org/x": "wbmigrate @ git+https://example.org/x",
    }
    for version, requirement in expected.items():
        env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "VERSION": version, "SOURCE": "/action"}
        out = subprocess.run(
            ["bash", "-e", "-c", script], env=env, capture_output=True, text=True, check=True
        ).stdout
        assert out.splitlines()[0] == f"-m pip install --disable-pip-version-check {requirement}"
