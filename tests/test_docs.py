"""The README is part of the product: its commands run, its output is real, it is complete."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from helpers import FIXTURES, REPO, organisation

from testserver import WandbServer
from wbmigrate import __version__
from wbmigrate.cli import cli

README = (REPO / "README.md").read_text()
BLOCK = re.compile(r"^```(\w+)(?: (live|org))?\n(.*?)^```$", re.S | re.M)
# The README shows live examples against a W&B server at this address; the tests use the
# local test server, whose port differs.
README_SERVER = "http://127.0.0.1:8080"


def _blocks(language: str, server: str = "") -> list[str]:
    """The README's blocks of `language`; `server`: those run against the demo project
    (`live`) or the organisation of `helpers.organisation` (`org`)."""
    return [
        body for lang, flag, body in BLOCK.findall(README) if lang == language and flag == server
    ]


def _examples(block: str) -> list[tuple[str, str, int]]:
    """(command, expected output, exit code) for each `$ ` line; `[exit N]` ends the output of
    a command that fails; `$ export ...` lines only show what the reader sets up."""
    examples = []
    for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
        command, _, output = chunk.partition("\n")
        if command.startswith("export "):
            continue
        code = 0
        if marker := re.search(r"^\[exit (\d+)\]\n\Z", output, re.M):
            code, output = int(marker[1]), output[: marker.start()]
        examples.append((command, output, code))
    return examples


def _console_examples() -> list[tuple[str, str, int]]:
    return [example for block in _blocks("console") for example in _examples(block)]


def _run(command: str, cwd: Path, env: dict[str, str]) -> tuple[str, int]:
    """Run a README command in a shell; stdout and stderr interleaved as on a terminal."""
    env = {
        **os.environ,
        **env,
        "PYTHONUNBUFFERED": "1",
        "COLUMNS": "100",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    result = subprocess.run(
        command,
        shell=True,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    return result.stdout, result.returncode


def _command_paths(group: click.Group, prefix: str = "wbmigrate") -> list[str]:
    paths = []
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        paths.append(f"{prefix} {name}")
        if isinstance(command, click.Group):
            paths += _command_paths(command, f"{prefix} {name}")
    return paths


def test_readme_opens_with_the_two_commands():
    first = BLOCK.search(README)
    assert first is not None
    assert first[1] == "sh"
    install, test = first[3].splitlines()
    assert " && pip install . && wbmigrate " in install
    assert " && pip install '.[test]' && pytest" in test
    assert README.index(first[0]) < README.index("\n## ")  # before any section


@pytest.mark.parametrize(
    ("command", "output", "code"),
    _console_examples(),
    ids=lambda value: value if isinstance(value, str) and value.startswith("wbmigrate") else "",
)
def test_console_example(command, output, code):
    assert _run(command, REPO, {}) == (output, code)


@pytest.mark.parametrize("block", _blocks("console", "live"), ids=lambda b: b.split("\n")[0])
def test_live_console_example(block, wandb_server, tmp_path):
    """Live examples run in order against a fresh test server holding the demo project."""
    _run_block(block, wandb_server, tmp_path)


@pytest.mark.parametrize("block", _blocks("console", "org"), ids=lambda b: b.split("\n")[0])
def test_organisation_console_example(block, tmp_path):
    """Organisation examples run against three projects: the demo with runs on both sides of
    the boundary, one not upgraded, one that answers 403."""
    demo, qwen, locked = organisation()
    with WandbServer(demo, more=[qwen, locked]) as server:
        _run_block(block, server, tmp_path)


def _run_block(block: str, server: WandbServer, home: Path) -> None:
    env = {"WANDB_API_KEY": server.api_key, "WANDB_BASE_URL": server.url, "HOME": str(home)}
    for command, output, code in _examples(block):
        got, got_code = _run(command, home, env)
        assert (got.replace(server.url, README_SERVER), got_code) == (output, code), command


def test_python_examples_run():
    for block in _blocks("python"):
        exec(compile(block, "README.md", "exec"), {})


@pytest.mark.parametrize("path", _command_paths(cli))
def test_every_command_is_documented(path):
    assert f"`{path}" in README


def test_every_validation_rule_is_documented():
    headers = [p.read_text() for p in (FIXTURES / "mappings").glob("*/*.yaml")]
    codes = {m[1] for text in headers if (m := re.match(r"# expect-\w+: ([a-z-]+)", text))}
    codes.add("encoding")  # tested in test_mapping_files.test_not_utf8
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", README, re.M))
    assert codes <= documented


def test_changelog_mentions_this_version():
    assert f"## {__version__} " in (REPO / "CHANGELOG.md").read_text()


def test_ci_script_is_executable():
    assert os.access(REPO / ".ci/run", os.X_OK)


def test_every_test_the_guarantees_cite_exists():
    """Each `file.py::name` (and each `::name` after it, in the same cell) of the Guarantees
    section names a test that exists, and every file named exists."""
    section = README.split("## Guarantees", 1)[1].split("\n## ", 1)[0]
    cited = 0
    for cell in re.findall(r"\|([^|\n]*)\|\n", section):
        current = None
        for match in re.finditer(r"`(test_\w+\.py)?(?:::(\w+))?`", cell):
            file, name = match.groups()
            current = file or current
            assert current, cell
            (found,) = (REPO / "tests").rglob(current)  # test file names are unique
            source = found.read_text()
            if name:
                assert re.search(rf"^def {name}\(", source, re.M), f"{current}::{name}"
                cited += 1
    for path in re.findall(r"`(fixtures/[\w/.-]+)`", section):
        assert (REPO / path).exists(), path
    assert cited >= 20
