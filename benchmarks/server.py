"""The repository's W&B-compatible test server (tests/wandb_server.py) in a process of its own,
holding generated views and automations, with latency added to every request."""

from __future__ import annotations

import base64
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests

SERVER = Path(__file__).resolve().parent.parent / "tests" / "wandb_server.py"
ENTITY, PROJECT = "team", "async-rl"
FIRST_VIEW = 101  # the server numbers views from here, in the order of the state file


@dataclass(frozen=True)
class Server:
    url: str
    api_key: str

    @property
    def env(self) -> dict[str, str]:
        return {"WANDB_BASE_URL": self.url, "WANDB_API_KEY": self.api_key}

    def timings(self) -> list[tuple[str, str | None, float]]:
        """Every request so far: its operation, its viewType, and its time in the server
        beyond the added latency, in the order they were answered."""
        answer = requests.get(f"{self.url}/_stats", timeout=30).json()
        return [(t[0], t[1], t[2]) for t in answer["timings"]]

    def report_url(self, index: int) -> str:
        """The app URL of the index-th view of the state file, as users copy it."""
        view_id = base64.b64encode(f"View:{FIRST_VIEW + index}".encode()).decode()
        return f"{self.url}/{ENTITY}/{PROJECT}/reports/Report-{index}--{view_id.rstrip('=')}"


@contextmanager
def running(state: Path, latency: float) -> Iterator[Server]:
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(state), str(latency)],
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
