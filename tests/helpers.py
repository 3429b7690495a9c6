"""What the tests share: paths, text spans, and the live test server's state."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from wbmigrate import find_mapping
from wbmigrate.live.transport import Clock
from wbmigrate.rewrite import rewrite_text

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"

MIGRATION = find_mapping("prime-rl").migration()
TARGET = "team/async-rl"
T = TypeVar("T")


def sdk_environment(home: Path, url: str) -> dict[str, str]:
    """What W&B's SDK needs to talk to the test server at `url` from a home of its own, with
    nothing of the user's (no error reporting, no output, config and run files under `home`)."""
    return {
        "WANDB_ERROR_REPORTING": "false",
        "WANDB_SILENT": "true",
        "HOME": str(home),
        "WANDB_DIR": str(home),
        "WANDB_CONFIG_DIR": str(home / "config"),
        "WANDB_BASE_URL": url,
    }


def expected_spec(server, view_id):
    """What the engine makes of a view's spec as the server holds it now."""
    view = server.state.views[view_id]
    kind = "workspace" if view["type"] == "project-view" else "report"
    return rewrite_text(view["spec"], MIGRATION, kind=kind, name=view["displayName"])[1]


def snapshot(server):
    return (
        {i: v["spec"] for i, v in server.state.views.items()},
        {i: json.dumps(t, sort_keys=True) for i, t in server.state.triggers.items()},
    )


def writes(server):
    return [r for r in server.requests if "mutation" in r.body]


def affected_paths(edits):
    """Where each edit may change text: the value for a Set, else its container; outermost only."""
    from wbmigrate.edit.edits import Set

    paths = sorted({e.path if isinstance(e, Set) else e.path[:-1] for e in edits}, key=len)
    return [p for i, p in enumerate(paths) if not any(p[: len(q)] == q for q in paths[:i])]


def outside(text, paths):
    """`text` without the spans of the values at `paths`."""
    spans = sorted(_span(text, path) for path in paths)
    out, pos = [], 0
    for start, end in spans:
        out.append(text[pos:start])
        pos = end
    return "".join(out) + text[pos:]


def _span(text, path):
    from wbmigrate.edit.json import _members, _value_end

    start = len(text) - len(text.lstrip())
    for part in path:
        (member,) = [m for m in _members(text, start) if m.key == part]
        start = member.value_start
    return start, _value_end(text, start)


# --- an organisation: three projects, runs on both sides of the boundary --------------------

# runs log every old key that lives on under a new name (the gone dispatcher gauges they never did).
OLD_KEYS = sorted(n for n in MIGRATION.old_names if (f := MIGRATION.fate(n)) and f.new)
assert not {MIGRATION.fate(n).new for n in OLD_KEYS} & MIGRATION.old_names  # a new build's keys
NEW_KEYS = sorted({f.new for n in OLD_KEYS if (f := MIGRATION.fate(n)) and f.new})
UNLOGGED = "staleness/token/masked"  # no run of the upgraded project logs it


def organisation():
    """`team/async-rl` (the demo project; its runs: old keys, a gap that logs neither, one
    that logs both, a late run of an old build, then new keys without `staleness/token/masked`),
    `team/qwen3-8b` (one report; only old-key runs: not upgraded) and `team/locked` (403)."""
    from testserver import WandbState

    demo = WandbState()
    demo.load_demo(FIXTURES / "demo-project")
    new = [k for k in NEW_KEYS if k != UNLOGGED]
    for name, day, keys in [
        ("grpo-old-1", "2026-10-20", OLD_KEYS),
        ("grpo-old-2", "2026-10-27", OLD_KEYS),
        ("eval-only", "2026-10-29", ["eval/reward"]),
        ("grpo-upgrade", "2026-11-02", OLD_KEYS + new),
        ("grpo-old-build", "2026-11-04", OLD_KEYS),
        ("grpo-new-1", "2026-11-06", new),
        ("grpo-new-2", "2026-11-09", new),
    ]:
        demo.add_run(name, f"{day}T08:00:00Z", ["loss", *keys])
    qwen = WandbState("team", "qwen3-8b", first_id=1001)
    report = (FIXTURES / "demo-project/reports/async-health.json").read_text()
    qwen.add_view(json.dumps(json.loads(report), separators=(",", ":")), "runs", "Qwen health")
    for name, day in [("qwen-1", "2026-11-01"), ("qwen-2", "2026-11-08")]:
        qwen.add_run(name, f"{day}T08:00:00Z", ["loss", *OLD_KEYS])
    locked = WandbState("team", "locked", first_id=2001, forbidden=True)
    return [demo, qwen, locked]


def running(pid: int) -> bool:
    """Whether `pid` still runs (a zombie waiting to be reaped has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class FastClock(Clock):
    """The system's clock, except that every wait for a retry passes at once (or, with `real`,
    that fraction of it is waited) and moves the clock on by its whole length: a 5 s
    Retry-After costs no time. `waits` lists each wait asked for; `advance` lets time pass.
    A watchdog's timer (a try's budget) runs `timers` times as long on the wall clock and, when
    it fires, moves the clock on by the rest of its length: a test of a cut try sets `timers` below
    1 (every try of the test gets that share of its budget, so it stays well above a loopback
    request's time)."""

    def __init__(self, real: float = 0.0) -> None:
        self.real = real
        self.timers = 1.0
        self.waits: list[float] = []
        self._skipped = 0.0
        self._lock = threading.Lock()

    def monotonic(self) -> float:
        return time.monotonic() + self._skipped

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._skipped += seconds

    def wait(self, event: threading.Event, seconds: float) -> bool:
        with self._lock:
            self.waits.append(seconds)
        self.advance(seconds)
        return event.wait(seconds * self.real) if self.real else event.is_set()

    def timer(self, seconds: float, function: Callable[[], None]) -> threading.Timer:
        def fire() -> None:
            self.advance(seconds * (1 - self.timers))
            function()

        return threading.Timer(seconds * self.timers, fire)


def until(condition: Callable[[], T], what: str, timeout: float = 60) -> T:
    """`condition()`, once it holds, asked every 10 ms: for what only another process or the
    server's threads can tell, with no event to wait on. `timeout` bounds a failing test; it is
    never what a test measures."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, what
        time.sleep(0.01)
    return value


def wait_for_writes(server, count: int, timeout: float = 60) -> None:
    """Until `server` has seen `count` writes."""
    until(lambda: len(server.mutations()) >= count, "no write seen", timeout)


def hold_writes(server) -> threading.Event:
    """From now on every write `server` receives waits, before it is answered, until the event
    is set (after a minute, by the first write still waiting): writes stay in flight for as long
    as a test needs them to."""
    gate = threading.Event()

    def hold(_variables: dict[str, object]) -> None:
        if not gate.wait(60):
            gate.set()

    for operation in ("WbmigrateUpsertView", "WbmigrateUpdateTrigger"):
        server.hooks[operation] = hold
    return gate


def interrupt(process: subprocess.Popen[str]) -> str:
    """Ctrl-C to a running `wbmigrate apply` or `rollback`, and its stderr until it says it
    starts no new object (or ends): from then on, letting the writes in flight land starts no
    other, however loaded the machine."""
    assert process.stderr is not None
    process.send_signal(signal.SIGINT)
    lines = []
    for line in process.stderr:
        lines.append(line)
        if line.startswith("Interrupted: no new object is started"):
            return "".join(lines)
    raise AssertionError(f"ended without saying it stops: {''.join(lines)}")


def rendered_markdown(markdown: str) -> tuple[list[str], int, list[int]]:
    """What a GitHub-like renderer makes of `markdown`: the targets of its links, how many
    images it shows, and how many cells each table row has."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    inline = [t for block in tokens for t in block.children or ()]
    links = [str(t.attrs["href"]) for t in inline if t.type == "link_open"]
    images = sum(t.type == "image" for t in inline)
    cells, row = [], 0
    for t in tokens:
        row = 0 if t.type == "tr_open" else row + (t.type in ("td_open", "th_open"))
        if t.type == "tr_close":
            cells.append(row)
    return links, images, cells


def returns_soon(function, *args, **kwargs):
    """`function(*args, **kwargs)`, in a thread: a call that would block forever (a FIFO opened
    by mistake) fails the test instead of hanging it. The bound is a safety net, never what a
    test asserts."""
    outcome: list = []

    def call() -> None:
        try:
            outcome.append((True, function(*args, **kwargs)))
        except BaseException as exc:
            outcome.append((False, exc))

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert outcome, f"{getattr(function, '__name__', function)} blocked"
    returned, value = outcome[0]
    if not returned:
        raise value
    return value
