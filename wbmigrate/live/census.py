"""The key census of a live project: which keys its runs have logged, read-only and bounded.

Runs are listed newest first, light fields only, up to a cap (`--runs`); then the keys (history
and summary) of the runs not already cached are read in batches by name. A finished run's keys
never change, so they are cached per run in the user's cache folder, stamped with the run's
state and last heartbeat: the next plan reads only the runs that are new or still running.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from wbmigrate.engine.history import DEFAULT_RUNS, RunKeys, RunRef
from wbmigrate.errors import WbmigrateError
from wbmigrate.live.client import Client
from wbmigrate.live.queries import LIST_RUNS, RUN_KEYS
from wbmigrate.live.shapes import a_dict, a_list, listing_pages, project_of
from wbmigrate.safe_write import PRIVATE_MODE, kind, read_file, write_text

RUNS_PAGE = 100
KEYS_BATCH = 50  # runs whose keys one request reads: their key lists can be long
KEYS_AT_ONCE = 4  # such requests in flight (as many as the listings use)
CACHE_FORMAT = "wbmigrate-census-cache/2"  # /2: it names its host and project
CACHE_LIMIT = 64 * 1024 * 1024  # a cache bigger than that is not read, nor written
SYSTEM_KEYS = frozenset({"_step", "_runtime", "_timestamp", "_wandb"})
FINAL_STATES = frozenset({"finished", "crashed", "failed", "killed"})


@dataclass(frozen=True)
class Listed:
    """A run as the light listing gives it, and what makes its cached keys still good."""

    run: RunRef
    stamp: str | None  # None: still running, never cached


def read_run_keys(
    client: Client,
    entity: str,
    project: str,
    cap: int = DEFAULT_RUNS,
    cache_dir: Path | None = None,
) -> tuple[list[RunKeys], int | None]:
    """The keys each of the project's `cap` newest runs logged, and how many runs it has (None:
    W&B did not say): no mapping needed yet. The keys of each page of runs are asked for as
    soon as the page arrives, while the next is read: the plan waits for the census, and at
    100 ms that of the benchmark's 250 runs took 0.73-1.19 s so, 1.37-1.80 s with the keys
    asked for after the listing, a batch after another (a busy machine). The cache is written
    before this returns."""
    cache = _Cache(cache_dir, client.base_url, entity, project)
    keys: dict[str, frozenset[str]] = {}
    asked: list[Future[dict[str, frozenset[str]]]] = []
    with ThreadPoolExecutor(max_workers=KEYS_AT_ONCE) as pool:

        def arrived(page: list[Listed]) -> None:
            cached = {item.run.id: cache.get(item) for item in page}
            keys.update({name: found for name, found in cached.items() if found is not None})
            missing = [name for name, found in cached.items() if found is None]
            for start in range(0, len(missing), KEYS_BATCH):
                names = missing[start : start + KEYS_BATCH]
                asked.append(pool.submit(_run_keys, client, entity, project, names))

        total, listed = _list_runs(client, entity, project, cap, arrived)
        for batch in asked:
            keys.update(batch.result())
    cache.save(listed, keys)
    return [RunKeys(item.run, keys.get(item.run.id, frozenset())) for item in listed], total


def app_url(base_url: str) -> str:
    """The W&B app that goes with an API host: `https://api.wandb.ai` → `https://wandb.ai`; a
    dedicated or local server serves both on one host."""
    parts = urlsplit(base_url)
    host = parts.netloc
    if host.startswith("api.") and host.endswith("wandb.ai"):
        host = host[4:]
    return f"{parts.scheme}://{host}"


def project_url(base_url: str, entity: str, project: str) -> str:
    """A project's page in the app: the pages of its runs, reports and alerts are below it."""
    return f"{app_url(base_url)}/{quote(entity)}/{quote(project)}"


def runs_url(base_url: str, entity: str, project: str) -> str:
    """Where the app shows a project's runs: a run's page is this and its id, quoted."""
    return f"{project_url(base_url, entity, project)}/runs/"


def _list_runs(
    client: Client, entity: str, project: str, cap: int, arrived: Callable[[list[Listed]], None]
) -> tuple[int | None, list[Listed]]:
    """The `cap` newest runs, each page also given to `arrived` as it comes."""
    prefix = runs_url(client.base_url, entity, project)
    listed: list[Listed] = []
    total: list[int | None] = [None]

    def page(after: str | None) -> dict[str, Any]:
        variables = {"entity": entity, "project": project, "after": after}
        first = min(RUNS_PAGE, cap - len(listed))
        data = client.execute(LIST_RUNS, {**variables, "first": first})
        found = project_of(data, entity, project)
        count = found.get("runCount")
        total[0] = count if isinstance(count, int) and not isinstance(count, bool) else None
        return a_dict(found.get("runs"), "project.runs")

    for edges in listing_pages(page, f"runs of {entity}/{project}"):
        nodes = [edge.get("node") if isinstance(edge, dict) else None for edge in edges]
        found = [item for node in nodes if (item := _listed(node, prefix)) is not None]
        found = found[: cap - len(listed)]
        listed += found
        arrived(found)
        if len(listed) >= cap:
            break
    return total[0], listed


def _listed(node: Any, runs_url: str) -> Listed | None:
    """A run of the listing; one W&B gave without an id or creation time is left out."""
    if not isinstance(node, dict):
        return None
    run_id, created = node.get("name"), node.get("createdAt")
    if not isinstance(run_id, str) or not run_id or not isinstance(created, str):
        return None
    shown = node.get("displayName")
    name = shown if isinstance(shown, str) and shown else run_id
    run = RunRef(name, run_id, created, runs_url + quote(run_id, safe=""))
    state, heartbeat = node.get("state"), node.get("heartbeatAt")
    final = state in FINAL_STATES and isinstance(heartbeat, str)
    return Listed(run, f"{state} {heartbeat}" if final else None)


def _run_keys(
    client: Client, entity: str, project: str, names: list[str]
) -> dict[str, frozenset[str]]:
    filters = json.dumps({"name": {"$in": names}})
    variables = {"entity": entity, "project": project, "filters": filters, "first": len(names)}
    data = client.execute(RUN_KEYS, variables)
    runs = a_dict(a_dict(data.get("project"), "project").get("runs"), "project.runs")
    found = {}
    for edge in a_list(runs.get("edges") or [], "project.runs.edges"):
        node = edge.get("node") if isinstance(edge, dict) else None
        if isinstance(node, dict) and isinstance(node.get("name"), str):
            found[node["name"]] = logged_keys(node.get("historyKeys"), node.get("summaryMetrics"))
    return found


def logged_keys(history_keys: Any, summary: Any) -> frozenset[str]:
    """The keys a run logged: its history keys and its summary's, without W&B's own (`_step`,
    `_runtime`, ...). Either may come as JSON text or as an object; a shape W&B never gives
    counts as no keys."""
    history = _json_object(history_keys).get("keys")
    found = set(history) if isinstance(history, dict) else set()
    found |= set(_json_object(summary))
    return frozenset(k for k in found if k not in SYSTEM_KEYS and not k.startswith("_wandb"))


def _json_object(value: Any) -> dict[str, Any]:
    """An object, or JSON text of one (as W&B gives keys, or a cache file); else empty."""
    if isinstance(value, (str, bytes)):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return {}
    return value if isinstance(value, dict) else {}


class _Cache:
    """Finished runs' keys, one file per project in the user's cache folder. Trusted only as
    what wbmigrate wrote for this host and project: a regular file of the user's own, at most
    CACHE_LIMIT bytes, in a folder of the user's own of mode 0700 (made so by wbmigrate). A
    file missing is a cold cache; one that fails any of that is ignored, said in one line, and
    never an error."""

    def __init__(self, folder: Path | None, base_url: str, entity: str, project: str) -> None:
        self.of = [base_url, entity, project]
        name = hashlib.sha256("\n".join(self.of).encode()).hexdigest()[:24] + ".json"
        self.path = folder / name if folder is not None else None
        runs = self._read().get("runs")
        self.runs: dict[str, Any] = runs if isinstance(runs, dict) else {}

    def _read(self) -> dict[str, Any]:
        if self.path is None:
            return {}
        document: dict[str, Any] = {}
        try:
            refused = _refusal(self.path.parent)
            if refused is None:
                data, status = read_file(self.path, CACHE_LIMIT, follow=False)
                document = _json_object(data)
                refused = "owned by another user" if status.st_uid != os.getuid() else None
        except FileNotFoundError:
            return {}
        except OSError as exc:
            refused = str(exc.strerror or exc)
        if refused is None and document.get("format") != CACHE_FORMAT:
            refused = "not a wbmigrate census cache"
        elif refused is None and document.get("of") != self.of:
            refused = "a cache of another project or host"
        if refused is not None:
            _say_once(f"wbmigrate: {self.path}: census cache ignored: {refused}\n")
            return {}
        return document

    def get(self, item: Listed) -> frozenset[str] | None:
        entry = self.runs.get(item.run.id)
        if item.stamp is None or not isinstance(entry, dict) or entry.get("stamp") != item.stamp:
            return None
        keys = entry.get("keys")
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            return None
        return frozenset(keys)

    def save(self, listed: list[Listed], keys: dict[str, frozenset[str]]) -> None:
        """Keep the finished runs just read (only those: the file stays as small as the cap
        keeps the census); a cache that cannot be written, or would not be read, is skipped:
        it only saves time."""
        if self.path is None:
            return
        self.runs = {
            item.run.id: {"stamp": item.stamp, "keys": sorted(keys[item.run.id])}
            for item in listed
            if item.stamp is not None and item.run.id in keys
        }
        document = {"format": CACHE_FORMAT, "of": self.of, "runs": self.runs}
        text = json.dumps(document, separators=(",", ":")) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if _refusal(self.path.parent) is None and len(text) <= CACHE_LIMIT:
                write_text(self.path, text, PRIVATE_MODE, sync=False)  # only a cache
        except (OSError, WbmigrateError):
            pass


def _refusal(folder: Path) -> str | None:
    """Why a cache folder is not trusted: only a folder of the user's own that no one else
    may open (wbmigrate makes it 0700) is. (OSError: there is none.)"""
    status = folder.lstat()
    if not stat.S_ISDIR(status.st_mode):
        return f"{kind(status.st_mode)}, not a folder, holds it"
    if status.st_uid != os.getuid():
        return "its folder is owned by another user"
    mode = stat.S_IMODE(status.st_mode)
    return f"its folder's mode is {oct(mode)}: others may open it" if mode & 0o077 else None


_SAID: set[str] = set()


def _say_once(line: str) -> None:
    """A line on stderr, said once per run however many censuses meet the same file."""
    if line not in _SAID:
        _SAID.add(line)
        sys.stderr.write(line)


def cache_folder(environ: dict[str, str] | os._Environ[str]) -> Path | None:
    """`$XDG_CACHE_HOME/wbmigrate/census`, else `~/.cache/wbmigrate/census`; as the XDG spec
    says, a relative `XDG_CACHE_HOME` is ignored (it would write under the current folder),
    and without an absolute home there is no cache."""
    home = environ.get("HOME") or str(Path.home())
    for base in (environ.get("XDG_CACHE_HOME"), os.path.join(home, ".cache")):
        if base and os.path.isabs(base):
            return Path(base) / "wbmigrate" / "census"
    return None
