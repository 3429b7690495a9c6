"""Shared paths and a CLI runner that keeps stdout and stderr apart."""

from __future__ import annotations

import signal

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings

from wbmigrate.cli import cli
from wbmigrate.engine import regexes

# Property tests draw the same examples on every run (a failure reproduces as it was seen) and
# keep no example database between runs.
settings.register_profile("suite", derandomize=True, database=None)
settings.load_profile("suite")


ENGINE_MATCH_TIMEOUT = regexes.MATCH_TIMEOUT


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as Python has it. A suite started in the background of a shell without job
    control (`pytest &` in a script) inherits Ctrl-C ignored, and so would every `wbmigrate`
    and test server it starts: the tests of Ctrl-C would wait out their bounds and fail."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked slow first (each takes seconds): started early, none of them keeps one
    core busy at the end while the other has nothing left to do."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def unhurried_regexes(monkeypatch):
    """The engine judges a regex within wall-clock budgets; on a loaded machine (both cores
    testing, a server's threads beside the engine) a plain pattern can run out of them and be
    left for review, and a plan then differs from the one asserted. The tests of the budgets
    set their own."""
    monkeypatch.setattr(regexes, "MATCH_TIMEOUT", 1.0)
    monkeypatch.setattr(regexes, "TOTAL_TIMEOUT", 30.0)


@pytest.fixture
def engine_match_budget(monkeypatch):
    """The engine's own budget for one match, for a test of a catastrophic pattern: it is cut
    there whichever budget, and the unhurried one would let each of its matches run a second."""
    monkeypatch.setattr(regexes, "MATCH_TIMEOUT", ENGINE_MATCH_TIMEOUT)


@pytest.fixture
def run():
    """Run `wbmigrate ARGS...` in-process; returns click's Result (stdout, stderr, exit_code)."""

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, list(args), prog_name="wbmigrate", catch_exceptions=False)

    return invoke


@pytest.fixture
def wandb_server():
    """A local W&B-compatible server holding the demo project, plus a draft of one report."""
    from helpers import FIXTURES

    from testserver import WandbServer, WandbState

    state = WandbState()
    state.load_demo(FIXTURES / "demo-project", draft=True)
    with WandbServer(state) as server:
        yield server


@pytest.fixture
def org(tmp_path, monkeypatch):
    """Three projects of `team` (`helpers.organisation`: one answers 403) on a test server, and
    the environment a user has for them: the key and host exported, a home folder of its own,
    tmp_path as the current folder."""
    from helpers import organisation

    from testserver import WandbServer

    demo, qwen, locked = organisation()
    with WandbServer(demo, more=[qwen, locked]) as server:
        home = tmp_path / "home"
        home.mkdir()
        monkeypatch.setenv("WANDB_API_KEY", server.api_key)
        monkeypatch.setenv("WANDB_BASE_URL", server.url)
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        monkeypatch.delenv("WANDB_ENTITY", raising=False)
        monkeypatch.delenv("NETRC", raising=False)
        monkeypatch.chdir(tmp_path)
        yield server


@pytest.fixture
def clock(monkeypatch):
    """The clock of every client made from now on: retries' waits pass at once (`FastClock`)."""
    from helpers import FastClock

    fast = FastClock()
    monkeypatch.setattr("wbmigrate.live.transport.CLOCK", fast)
    return fast


@pytest.fixture
def live(wandb_server, clock, tmp_path, monkeypatch):
    """The environment a user has after `export WANDB_API_KEY=...`: pointed at the test server,
    with a home folder of its own (no ~/.netrc) and backups written under tmp_path; retries
    wait on `clock`, which lets no time pass."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("WANDB_API_KEY", wandb_server.api_key)
    monkeypatch.setenv("WANDB_BASE_URL", wandb_server.url)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("NETRC", raising=False)
    monkeypatch.chdir(tmp_path)
    return wandb_server
