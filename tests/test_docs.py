"""The docs are part of the product: the commands of README.md and docs/*.md run, their output
is real, and they are complete (every command, validation code and cited test)."""

from __future__ import annotations

import contextlib
import os
import re
import runpy
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner
from helpers import FIXTURES, REPO, organisation

from testserver import WandbServer
from wbmigrate import __version__
from wbmigrate.cli import cli
from wbmigrate.cli import project as cli_project

README = (REPO / "README.md").read_text()
DOCS = REPO / "docs"
# Every page whose console blocks run: the README, then docs/ in name order.
PAGES = {"README.md": README} | {
    f"docs/{page.name}": page.read_text() for page in sorted(DOCS.glob("*.md"))
}
BLOCK = re.compile(r"^```(\w+)(?: (live|org|sandbox))?\n(.*?)^```$", re.S | re.M)
# The docs show live examples against a W&B server at this address; the tests use the local
# test server, whose port differs.
README_SERVER = "http://127.0.0.1:8080"


def _blocks(language: str, server: str = "") -> list[tuple[str, str]]:
    """(page, body) of every block of `language` in the docs; `server`: those run against the
    demo project (`live`) or the organisation of `helpers.organisation` (`org`)."""
    return [
        (page, body)
        for page, text in PAGES.items()
        for lang, flag, body in BLOCK.findall(text)
        if lang == language and flag == server
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
    return [example for _, block in _blocks("console") for example in _examples(block)]


# A documented command run in this process (click's runner, as the `run` fixture), which saves
# an interpreter start and the mapping's loading per command: `[cd DIR && ]wbmigrate ARGS
# [> FILE] [2> FILE] [2>&1] [| FILTER]`, ARGS without anything a shell would expand. The filter
# (head, tail, grep, cmp) runs in a shell, fed what wbmigrate wrote; any other command too.
IN_PROCESS = re.compile(
    r"(?:cd (?P<cd>[\w./-]+) && )?wbmigrate (?P<args>[^|<>&;$`\\*?\[~{}()]+?)"
    r"(?: > (?P<out>\S+))?(?: 2> (?P<err>\S+))?(?P<both> 2>&1)?(?: \| (?P<filter>.+))?"
)
TERMINAL = {"COLUMNS": "100"}  # the width help is laid out for


def _run(command: str, cwd: Path, env: dict[str, str]) -> tuple[str, int]:
    """Run a documented command as a shell would; stdout and stderr interleaved as on a
    terminal."""
    if match := IN_PROCESS.fullmatch(command):
        return _run_here(match, cwd, env)
    return _shell(command, cwd, env)


def _shell(
    command: str, cwd: Path, env: dict[str, str], given: str | None = None
) -> tuple[str, int]:
    """`command` in a shell (`given` on its stdin)."""
    env = {
        **os.environ,
        **env,
        **TERMINAL,
        "PYTHONUNBUFFERED": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    result = subprocess.run(
        command,
        shell=True,
        cwd=cwd,
        env=env,
        input=given,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    return result.stdout, result.returncode


def _run_here(match: re.Match[str], cwd: Path, env: dict[str, str]) -> tuple[str, int]:
    """A command of `IN_PROCESS`, its streams sent where the shell would send them. A progress
    line (`Applying: n/N objects ...`, every `PROGRESS_EVERY` seconds) would come only on a
    machine slow enough to take that long: none is shown, none is waited for."""
    cwd = cwd / match["cd"] if match["cd"] else cwd
    with contextlib.chdir(cwd), mock.patch.object(cli_project, "PROGRESS_EVERY", 3600.0):
        result = CliRunner().invoke(
            cli, shlex.split(match["args"]), prog_name="wbmigrate", env={**env, **TERMINAL}
        )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    if not (match["out"] or match["err"] or match["both"] or match["filter"]):
        return result.output, result.exit_code  # both streams, in the order written
    out, err = (result.output, "") if match["both"] else (result.stdout, result.stderr)
    for path, text in ((match["out"], out), (match["err"], err)):
        if path:
            (cwd / path).write_text(text)
    out, err = ("" if match["out"] else out), ("" if match["err"] else err)
    if match["filter"]:
        filtered, code = _shell(match["filter"], cwd, env, given=out)
        return err + filtered, code
    return err + out, result.exit_code


GENERATE = runpy.run_path(str(DOCS / "generate.py"))  # docs/generate.py: the CLI reference
COMMANDS = [" ".join(("wbmigrate", *path)) for path in GENERATE["command_paths"](cli)]


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


def _first_line(block: tuple[str, str]) -> str:
    return f"{block[0]}: {block[1].splitlines()[0]}"


@pytest.mark.parametrize("block", _blocks("console", "live"), ids=_first_line)
def test_live_console_example(block, wandb_server, tmp_path):
    """Live examples run in order against a fresh test server holding the demo project."""
    _run_block(block[1], wandb_server, tmp_path)


@pytest.mark.parametrize("block", _blocks("console", "org"), ids=_first_line)
def test_organisation_console_example(block, tmp_path):
    """Organisation examples run against three projects: the demo with runs on both sides of
    the boundary, one not upgraded, one that answers 403."""
    demo, qwen, locked = organisation()
    with WandbServer(demo, more=[qwen, locked]) as server:
        _run_block(block[1], server, tmp_path)


def test_the_sandbox_runs_as_written(tmp_path):
    """The README's sandbox starts as written from a clone, serves the demo project that the
    quickstart's first session then plans, and stops on Ctrl-C (exit 0). Where port 8080 is
    taken, the same command with `--port 0` (the port it took is in what it prints)."""
    [(_, block)] = _blocks("console", "sandbox")
    [(command, shown, _)] = _examples(block)
    started = _start(command, len(shown.splitlines()))
    server, printed = started or _start(f"{command} --port 0", len(shown.splitlines()))
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+", printed)[0]
        assert printed.replace(url, README_SERVER) == shown
        env = dict(re.findall(r"(WANDB_\w+)=(\S+)", printed)) | {"HOME": str(tmp_path)}
        quickstart = next(b for page, b in _blocks("console", "live") if page == "README.md")
        for command, output, code in _examples(quickstart):
            got, got_code = _run(command, tmp_path, env)
            assert (got.replace(url, README_SERVER), got_code) == (output, code), command
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0
    _, errors = server.communicate()
    assert errors == ""


def _start(command: str, lines: int) -> tuple[subprocess.Popen[str], str] | None:
    """The sandbox, started, and its first `lines` lines; None when its port is taken (it
    says so and exits 1 at once)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    server = subprocess.Popen(
        shlex.split(command),
        cwd=REPO,
        env={**os.environ, "PATH": path},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    printed = "".join(server.stdout.readline() for _ in range(lines))
    if printed:
        return server, printed
    server.communicate(timeout=30)
    return None


def _run_block(block: str, server: WandbServer, home: Path) -> None:
    env = {"WANDB_API_KEY": server.api_key, "WANDB_BASE_URL": server.url, "HOME": str(home)}
    for command, output, code in _examples(block):
        got, got_code = _run(command, home, env)
        assert (got.replace(server.url, README_SERVER), got_code) == (output, code), command


def test_python_examples_run():
    for page, block in _blocks("python"):
        exec(compile(block, page, "exec"), {})


@pytest.mark.parametrize("path", COMMANDS)
def test_every_command_is_documented(path):
    """In the README's command table, and with a section of its own in the CLI reference."""
    assert f"`{path}" in README
    assert f"\n## `{path}`\n" in PAGES["docs/cli.md"]


def test_the_cli_reference_is_generated_from_help():
    """docs/cli.md is what `python docs/generate.py` writes from today's `--help`."""
    assert PAGES["docs/cli.md"] == GENERATE["render"](), "stale: run python docs/generate.py"


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_resolves(page):
    base = (REPO / page).parent
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", PAGES[page]):
        if not re.match(r"[a-z]+:", target):
            assert (base / target).exists(), f"{page}: {target}"


def test_the_readme_links_every_docs_page():
    for page in PAGES:
        if page.startswith("docs/"):
            assert f"]({page})" in README, page


def test_every_validation_rule_is_documented():
    headers = [p.read_text() for p in (FIXTURES / "mappings").glob("*/*.yaml")]
    codes = {m[1] for text in headers if (m := re.match(r"# expect-\w+: ([a-z-]+)", text))}
    codes.add("encoding")  # tested in test_mapping_files.test_not_utf8
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", PAGES["docs/mappings.md"], re.M))
    assert codes <= documented


def test_changelog_mentions_this_version():
    assert f"## {__version__} " in (REPO / "CHANGELOG.md").read_text()


def test_ci_script_is_executable():
    assert os.access(REPO / ".ci/run", os.X_OK)


def test_every_test_the_guarantees_cite_exists():
    """Each `file.py::name` (and each `::name` after it, in the same cell) of the guarantees
    table names a test that exists, and every file named exists."""
    section = PAGES["docs/guarantees.md"].split("\n## ", 1)[0]
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


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_documented_completion_command_prints_a_script_that_completes(shell, tmp_path):
    """docs/cli.md's line for each shell, as documented, loads a script that asks wbmigrate
    for completions (and bash's asks and gets the commands)."""
    command, _ = GENERATE["COMPLETION"][shell]
    assert command in PAGES["docs/cli.md"].partition("## Shell completion")[2]
    source = command.removeprefix('eval "$(').removesuffix(')"').split(" > ")[0]
    script, code = _run(source, tmp_path, {})
    assert code == 0
    assert f"_WBMIGRATE_COMPLETE={shell}_complete" in script
    env = {"_WBMIGRATE_COMPLETE": "bash_complete", "COMP_WORDS": "wbmigrate pl", "COMP_CWORD": "1"}
    completed, _ = _run("wbmigrate", tmp_path, env)
    assert completed.splitlines() == ["plain,plan"]
