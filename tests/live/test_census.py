"""The key census over `responses`: runs newest first up to the cap, keys read in batches by
name, W&B's own keys left out, finished runs cached, a damaged cache ignored."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
import responses
from helpers import returns_soon

from wbmigrate import find_mapping
from wbmigrate.engine.history import history_of
from wbmigrate.live import census as census_module
from wbmigrate.live.census import (
    KEYS_BATCH,
    app_url,
    cache_folder,
    logged_keys,
    read_run_keys,
)
from wbmigrate.live.client import Client
from wbmigrate.live.shapes import ShapeError

BASE = "https://api.wandb.ai"
MIGRATION = find_mapping("prime-rl").migration()


def run_node(i: int, state: str = "finished") -> dict[str, object]:
    return {
        "id": f"UnVuOj{i}",
        "name": f"r{i:03d}",
        "displayName": f"run {i}",
        "state": state,
        "createdAt": f"2026-11-{1 + i // 24:02d}T{i % 24:02d}:00:00Z",
        "heartbeatAt": f"2026-11-{1 + i // 24:02d}T{i % 24:02d}:30:00Z",
    }


def keys_of(i: int) -> list[str]:
    return ["off_policy/mean", "loss"] if i < 5 else ["staleness/rollout/mean", "loss"]


class FakeRuns:
    """A project of `count` runs (newest: the highest number) answering both queries."""

    def __init__(self, count: int, running: frozenset[int] = frozenset()) -> None:
        self.count = count
        self.running = running
        self.key_requests: list[list[str]] = []

    def __call__(self, request) -> tuple[int, dict[str, str], str]:
        body = json.loads(request.body)
        variables = body["variables"]
        if "WbmigrateRunKeys" in body["query"]:
            names = json.loads(variables["filters"])["name"]["$in"]
            self.key_requests.append(names)
            edges = [{"node": self.keys_node(int(n[1:]))} for n in names]
            runs = {"edges": edges, "pageInfo": {"endCursor": None, "hasNextPage": False}}
            return 200, {}, json.dumps({"data": {"project": {"runs": runs}}})
        start = int(variables["after"] or 0)
        numbers = list(range(self.count - 1, -1, -1))[start : start + variables["first"]]
        edges = [
            {"node": self.node(i), "cursor": str(start + n + 1)} for n, i in enumerate(numbers)
        ]
        more = start + len(numbers) < self.count
        info = {"endCursor": str(start + len(numbers)), "hasNextPage": more}
        project = {"runCount": self.count, "runs": {"edges": edges, "pageInfo": info}}
        return 200, {}, json.dumps({"data": {"project": project}})

    def node(self, i: int) -> dict[str, object]:
        return run_node(i, "running" if i in self.running else "finished")

    def keys_node(self, i: int) -> dict[str, object]:
        history = {
            "keys": {k: {"typeCounts": [{"type": "number", "count": 3}]} for k in keys_of(i)}
        }
        summary = dict.fromkeys(keys_of(i), 1.0) | {"_step": 3, "_runtime": 9, "_wandb": {}}
        return {"name": f"r{i:03d}", "historyKeys": history, "summaryMetrics": json.dumps(summary)}


@pytest.fixture
def client():
    return Client(BASE, "k" * 40, retries=0, backoff=0)


def census(client: Client, fake: FakeRuns, cap: int = 500, cache: Path | None = None):
    with responses.RequestsMock() as mocked:
        mocked.add_callback(responses.POST, f"{BASE}/graphql", callback=fake)
        runs, total = read_run_keys(client, "team", "async-rl", cap, cache)
    return history_of(runs, MIGRATION, total)


def test_the_newest_runs_up_to_the_cap_and_their_keys_in_batches(client):
    fake = FakeRuns(230)
    history = census(client, fake, cap=120)
    assert history.runs == 120
    assert history.total == 230
    assert history.partial
    # asked from threads as each page arrives: in any order
    assert sorted(len(names) for names in fake.key_requests) == [20, KEYS_BATCH, KEYS_BATCH]
    assert "_step" not in history.keys
    assert "staleness/rollout/mean" in history.keys
    assert history.first_new is not None
    assert history.first_new.id == "r110"  # the oldest run read: every one read logs new keys


def test_the_keys_of_a_page_of_runs_are_asked_for_before_the_next_page(client):
    class Pipelined(FakeRuns):
        """Answers the second page of runs only once some run's keys were asked for."""

        keys_asked = threading.Event()
        overlapped = False

        def __call__(self, request):
            body = json.loads(request.body)
            if "WbmigrateRunKeys" in body["query"]:
                self.keys_asked.set()
            elif body["variables"]["after"]:
                self.overlapped = self.overlapped or self.keys_asked.wait(timeout=5)
            return super().__call__(request)

    fake = Pipelined(230)
    history = census(client, fake, cap=230)
    assert fake.overlapped
    assert sorted(map(len, fake.key_requests)) == [
        30,
        KEYS_BATCH,
        KEYS_BATCH,
        KEYS_BATCH,
        KEYS_BATCH,
    ]
    assert history.runs == 230


def test_the_boundary_and_a_link_to_each_run(client):
    history = census(client, FakeRuns(12))
    assert history.last_old is not None
    assert history.first_new is not None
    assert (history.last_old.id, history.first_new.id) == ("r004", "r005")
    assert history.first_new.url == "https://wandb.ai/team/async-rl/runs/r005"
    assert history.first_new.name == "run 5"


def test_finished_runs_are_cached_and_running_ones_read_again(client, tmp_path):
    census(client, FakeRuns(12, running=frozenset({11})), cache=tmp_path)
    again = FakeRuns(12, running=frozenset({11}))
    history = census(client, again, cache=tmp_path)
    assert again.key_requests == [["r011"]]
    assert history.logged("off_policy/mean")
    assert history.logged("staleness/rollout/mean")
    cached = next(tmp_path.iterdir())
    assert oct(cached.stat().st_mode & 0o777) == "0o600"


def test_a_damaged_cache_is_a_cold_cache(client, tmp_path):
    census(client, FakeRuns(3), cache=tmp_path)
    cached = next(tmp_path.iterdir())
    cached.write_text('{"format": "wbmigrate-census-cache/1", "runs": {"r000": {"stamp": 1}}}')
    again = FakeRuns(3)
    census(client, again, cache=tmp_path)
    assert sorted(again.key_requests[0]) == ["r000", "r001", "r002"]
    cached.write_text("not json")
    assert census(client, FakeRuns(3), cache=tmp_path).runs == 3


def test_a_cache_behind_a_link_is_never_written_through(client, tmp_path):
    census(client, FakeRuns(2), cache=tmp_path)
    cached = next(tmp_path.iterdir())
    target = tmp_path / "elsewhere"
    target.write_text("mine")
    cached.unlink()
    cached.symlink_to(target)
    census(client, FakeRuns(2), cache=tmp_path)
    assert target.read_text() == "mine"


@pytest.mark.parametrize(
    ("history_keys", "summary", "expected"),
    [
        ({"keys": {"a": {}}}, '{"b": 1, "_runtime": 3}', {"a", "b"}),
        ('{"keys": {"a": {}}, "lastStep": 3}', {"b": 1}, {"a", "b"}),
        (None, None, set()),
        ("not json", "[1, 2]", set()),
        ({"keys": ["a"]}, '{"_wandb": {"runtime": 3}, "_step": 1}', set()),
    ],
)
def test_logged_keys_from_any_shape(history_keys, summary, expected):
    assert logged_keys(history_keys, summary) == expected


@pytest.mark.parametrize(
    ("base", "app"),
    [
        ("https://api.wandb.ai", "https://wandb.ai"),
        ("https://api.qa.wandb.ai", "https://qa.wandb.ai"),
        ("https://wandb.example.com", "https://wandb.example.com"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
    ],
)
def test_app_url(base, app):
    assert app_url(base) == app


def test_the_cache_folder_follows_xdg(tmp_path):
    assert cache_folder({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "wbmigrate" / "census"
    assert cache_folder({}) == Path.home() / ".cache" / "wbmigrate" / "census"
    assert os.sep in str(cache_folder(os.environ))


# --- what the cache trusts: a file of the user's own, in a folder only the user can open ---------


@pytest.fixture
def cached(client, tmp_path):
    """A cache folder as wbmigrate makes it, holding one project's cache file."""
    folder = tmp_path / "census"
    census(client, FakeRuns(3), cache=folder)
    return next(folder.iterdir())


def cold(client, folder: Path) -> bool:
    """Whether the next census reads every run's keys again (the cache was not used)."""
    again = FakeRuns(3)
    returns_soon(census, client, again, cache=folder)
    return sorted(n for names in again.key_requests for n in names) == ["r000", "r001", "r002"]


def ignored(capsys, path: Path, reason: str) -> bool:
    return capsys.readouterr().err == f"wbmigrate: {path}: census cache ignored: {reason}\n"


def test_the_cache_folder_is_made_0700(cached):
    assert stat.S_IMODE(cached.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600


def test_a_fifo_as_the_cache_is_ignored_never_waited_on(client, cached, capsys):
    cached.unlink()
    os.mkfifo(cached)
    assert cold(client, cached.parent)
    assert ignored(capsys, cached, "a FIFO is not a regular file")


def test_a_cache_linked_to_dev_zero_is_ignored_never_read(client, cached, capsys):
    cached.unlink()
    cached.symlink_to("/dev/zero")
    assert cold(client, cached.parent)
    assert ignored(capsys, cached, "a symbolic link; not followed")


def test_a_cache_over_the_bound_is_ignored(client, cached, capsys, monkeypatch):
    monkeypatch.setattr(census_module, "CACHE_LIMIT", 10)
    assert cold(client, cached.parent)
    assert ignored(
        capsys, cached, f"{cached.stat().st_size / 2**20:.1f} MB, over the 0 MB wbmigrate reads"
    )


def test_the_cache_bound_is_64_mb():
    assert census_module.CACHE_LIMIT == 64 * 1024 * 1024


def test_a_cache_in_a_folder_others_can_open_is_ignored_and_not_written(client, cached, capsys):
    cached.parent.chmod(0o777)
    before = cached.read_bytes()
    cached.write_text("{}")
    assert cold(client, cached.parent)
    assert ignored(capsys, cached, "its folder's mode is 0o777: others may open it")
    assert cached.read_text() == "{}"
    assert before != b"{}"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_cache_file_of_another_user_is_ignored(client, cached, capsys):
    os.chown(cached, 65534, -1)
    assert cold(client, cached.parent)
    assert ignored(capsys, cached, "owned by another user")


def test_another_projects_cache_renamed_is_ignored(client, tmp_path, capsys):
    folder = tmp_path / "census"
    with responses.RequestsMock() as mocked:
        mocked.add_callback(responses.POST, f"{BASE}/graphql", callback=FakeRuns(3))
        read_run_keys(client, "team", "other-project", 500, folder)
    (theirs,) = folder.iterdir()
    census(client, FakeRuns(3), cache=folder)
    (ours,) = set(folder.iterdir()) - {theirs}
    theirs.replace(ours)
    assert cold(client, folder)
    assert ignored(capsys, ours, "a cache of another project or host")


def test_a_damaged_cache_is_said_once(client, cached, capsys):
    for _ in range(2):
        cached.write_text("not json")
        assert cold(client, cached.parent)
    assert ignored(capsys, cached, "not a wbmigrate census cache")


def test_a_relative_xdg_cache_home_is_ignored(tmp_path):
    assert cache_folder({"XDG_CACHE_HOME": "relative/cache"}) == cache_folder({})
    assert cache_folder({"XDG_CACHE_HOME": "relative/cache", "HOME": "also-relative"}) is None


class WrongKeys(FakeRuns):
    """Its answer of the runs' keys holds edges that are no list."""

    def __call__(self, request) -> tuple[int, dict[str, str], str]:
        if "WbmigrateRunKeys" in json.loads(request.body)["query"]:
            return 200, {}, json.dumps({"data": {"project": {"runs": {"edges": 5}}}})
        return super().__call__(request)


def test_keys_answered_in_the_wrong_shape_are_one_line(client):
    """It was a TypeError: a traceback, where a census W&B cannot give is a warning."""
    with pytest.raises(ShapeError, match=r"project\.runs\.edges"):
        census(client, WrongKeys(3))
