"""The repository's W&B-compatible test server (`testserver`) in a process of its own,
holding generated views, automations and runs, with latency added to every request; and its
log of requests, to count what each side asked for."""

from __future__ import annotations

import base64
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parent.parent  # where `python -m testserver` finds it
ENTITY, PROJECT = "team", "async-rl"
FIRST_VIEW = 101  # the server numbers views from here, in the order of the state file
WRITE = re.compile(r"upsert|update", re.IGNORECASE)  # mutations' operation names


@dataclass(frozen=True)
class Requests:
    """What one side asked the server for."""

    reads: int
    writes: int

    @property
    def total(self) -> int:
        return self.reads + self.writes


@dataclass(frozen=True)
class Server:
    url: str
    api_key: str

    @property
    def env(self) -> dict[str, str]:
        return {"WANDB_BASE_URL": self.url, "WANDB_API_KEY": self.api_key}

    def operations(self) -> list[str]:
        """The operation of every request answered so far, in order."""
        time.sleep(0.05)  # the server logs a request just after answering it
        answer = requests.get(f"{self.url}/_stats", timeout=30).json()
        return [timing[0] for timing in answer["timings"]]

    def since(self, before: int) -> Requests:
        """The reads and writes answered after the first `before` requests."""
        operations = self.operations()[before:]
        writes = sum(1 for operation in operations if WRITE.search(operation))
        return Requests(len(operations) - writes, writes)

    def report_url(self, index: int) -> str:
        """The app URL of the index-th view of the state file, as users copy it."""
        view_id = base64.b64encode(f"View:{FIRST_VIEW + index}".encode()).decode()
        return f"{self.url}/{ENTITY}/{PROJECT}/reports/Report-{index}--{view_id.rstrip('=')}"


@contextmanager
def running(state: Path, latency: float) -> Iterator[Server]:
    process = subprocess.Popen(
        [sys.executable, "-m", "testserver", str(state), str(latency)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url, api_key = process.stdout.readline().split()
        yield Server(url, api_key)
    finally:
        process.terminate()
        process.wait(timeout=30)
