"""Text from elsewhere made safe to show: `printable` escapes what could forge a line, and
secrets never leave the process in text: once the API key is known, every line wbmigrate
prints and every file it writes passes through `redact`, which removes the key in every form a
message could carry it: as is, in its HTTP Basic-auth encoding, base64-encoded inside a longer
text (at each of base64's three alignments), URL-encoded, and any piece of those of `SHORTEST`
characters or more (what is left when a text is cut).

Registered once per run, before anything is sent; a process-wide table, because a secret must be
removed wherever a message comes from (a server's error text, an exception, a spec).
"""

from __future__ import annotations

import base64
import re
import urllib.parse

REDACTED = "[redacted]"
SHORTEST = 8  # the fewest characters of a secret that are never shown
# Every run of SHORTEST characters of a form holds the ANCHOR characters that start at the
# first multiple of STRIDE in it: only those are searched for, then grown while they match.
ANCHOR = 5
STRIDE = SHORTEST - ANCHOR + 1
# Pieces are looked for in texts up to this long (a line, a message, a report's object): a
# longer text is a document (a spec, a backup), written whole, so a key in it is whole, and
# searching it for every anchor would cost ~75 ms a megabyte. Whole forms go everywhere.
PIECES_UP_TO = 1 << 16
# No lock: dict and set updates are each atomic under the GIL, and `redact` copies the
# tables before it reads them.
_forms: set[str] = set()
_anchors: dict[str, list[tuple[str, int]]] = {}  # anchor -> (form, where in it)


def register(secret: str) -> None:
    """Remove `secret` from everything printed or written from now on."""
    if len(secret) < SHORTEST:  # too short to be a key; removing it would garble text
        return
    for form in _forms_of(secret) - _forms:
        _forms.add(form)
        for at in range(0, len(form) - ANCHOR + 1, STRIDE):
            _anchors.setdefault(form[at : at + ANCHOR], []).append((form, at))


def _forms_of(secret: str) -> set[str]:
    basic = base64.b64encode(f"api:{secret}".encode()).decode()
    encoded = [secret, basic, *(_base64_inside(secret, shift) for shift in range(3))]
    quoted = [urllib.parse.quote(form, safe="") for form in encoded]
    lower = [re.sub("%[0-9A-F]{2}", lambda m: m[0].lower(), form) for form in quoted]
    return {form for form in (*encoded, *quoted, *lower) if len(form) >= SHORTEST}


def _base64_inside(secret: str, shift: int) -> str:
    """The base64 characters that encode `secret` alone when `shift` bytes (modulo 3) come
    before it in a longer text: that text's encoding holds them whatever surrounds the secret."""
    data = secret.encode()
    text = base64.b64encode(bytes(shift) + data).decode()
    return text[-(-8 * shift // 6) : 8 * (shift + len(data)) // 6]


def redact(text: str) -> str:
    forms = sorted(_forms, key=len, reverse=True)
    for form in forms:
        if form in text:
            text = text.replace(form, REDACTED)
    if len(text) > PIECES_UP_TO or not forms:
        return text
    return _without_pieces(text, list(_anchors.items()))


def _without_pieces(text: str, anchors: list[tuple[str, list[tuple[str, int]]]]) -> str:
    """`text` with every run of SHORTEST or more characters of a form replaced."""
    spans = sorted(
        span
        for anchor, places in anchors
        if anchor in text
        for found in re.finditer(f"(?={re.escape(anchor)})", text)  # overlapping ones too
        for span in (_grown(text, found.start(), form, at) for form, at in places)
        if span[1] - span[0] >= SHORTEST
    )
    out, end = [], 0
    for start, stop in spans:  # overlapping pieces become one
        if start > end:
            out += [text[end:start], REDACTED]
        elif not out:
            out.append(REDACTED)
        end = max(end, stop)
    return "".join(out) + text[end:] if spans else text


def _grown(text: str, start: int, form: str, at: int) -> tuple[int, int]:
    """The run of `text` that agrees with `form` around `text[start:]` == `form[at:]`."""
    begin, first = start, at
    while begin and first and text[begin - 1] == form[first - 1]:
        begin, first = begin - 1, first - 1
    end, last = start + ANCHOR, at + ANCHOR
    while end < len(text) and last < len(form) and text[end] == form[last]:
        end, last = end + 1, last + 1
    return begin, end


def forget() -> None:
    """Clear the registry (tests run many commands in one process)."""
    _forms.clear()
    _anchors.clear()


def printable(text: str) -> str:
    """`text` with control characters escaped, so a name or a server's message cannot forge
    lines of a report or of an error."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
