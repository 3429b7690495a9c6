"""Secrets never leave the process in text: once the API key is known, every line wbmigrate
prints and every file it writes passes through `redact`, which removes the key in every form a
message could carry it (as is, in its HTTP Basic-auth encoding, URL-encoded).

Registered once per run, before anything is sent; a process-wide set, because a secret must be
removed wherever a message comes from (a server's error text, an exception, a spec).
"""

from __future__ import annotations

import base64
import urllib.parse
from typing import TextIO

REDACTED = "[redacted]"
# No lock: set.update and set.clear are each atomic under the GIL, and `redact` copies the
# set (sorted) before it reads it.
_secrets: set[str] = set()


def register(secret: str) -> None:
    """Remove `secret` from everything printed or written from now on."""
    if len(secret) < 8:  # too short to be a key; removing it would garble text
        return
    forms = {
        secret,
        urllib.parse.quote(secret, safe=""),
        base64.b64encode(f"api:{secret}".encode()).decode(),
        base64.b64encode(secret.encode()).decode(),
    }
    _secrets.update(form for form in forms if len(form) >= 8)


def redact(text: str) -> str:
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def forget() -> None:
    """Clear the registry (tests run many commands in one process)."""
    _secrets.clear()


class RedactingStream:
    """A text stream that redacts what is written to it (stdout and stderr of a command)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text) if isinstance(text, str) else text)
        return len(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)
