"""Attacks on the API key: it never appears in output or in any file written, and never goes
to a host other than the one the user chose."""

from __future__ import annotations

import base64
import json
import urllib.parse
from pathlib import Path

import pytest
from helpers import TARGET

from testserver import Fault
from wbmigrate.redact import PIECES_UP_TO, REDACTED, forget, redact, register


def leaks(key: str, *texts: str, folder: Path | None = None) -> list[str]:
    """Where the key (as is, or in its Basic-auth form) shows up."""
    forms = [key, base64.b64encode(f"api:{key}".encode()).decode()]
    found = [text[:80] for text in texts for form in forms if form in text]
    for path in folder.rglob("*") if folder else ():
        if path.is_file():
            data = path.read_bytes()
            found += [str(path) for form in forms if form.encode() in data]
    return found


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(Fault(echo_key=True), id="graphql-error-message"),
        pytest.param(Fault(echo_key=True, status=400), id="400-body"),
        pytest.param(Fault(echo_key=True, status=422), id="422-body"),
        pytest.param(Fault(echo_key=True, status=500), id="500-reason-phrase"),
    ],
)
def test_server_text_that_repeats_the_key_is_redacted(run, live, tmp_path, fault):
    live.faults.append(fault)
    result = run("plan", TARGET, "--retries", "0", "--runs", "0")  # the listing answers
    assert result.exit_code != 0
    assert REDACTED in result.stderr or "Error:" in result.stderr
    assert leaks(live.api_key, result.stdout, result.stderr, folder=tmp_path) == []


def test_a_census_answer_that_repeats_the_key_is_redacted(run, live, tmp_path):
    """A GraphQL error from the runs listing costs the census, not the plan: the warning that
    says so quotes the server's text, redacted."""
    live.faults.append(Fault(echo_key=True, operation="WbmigrateRuns"))
    result = run("plan", TARGET, "--retries", "0")
    assert result.exit_code == 0
    assert "could not be read" in result.stderr
    assert REDACTED in result.stderr
    assert leaks(live.api_key, result.stdout, result.stderr, folder=tmp_path) == []


def test_a_key_echoed_during_apply_reaches_neither_output_nor_backups(run, live, tmp_path):
    live.faults.append(Fault(echo_key=True, operation="WbmigrateUpsertView", sticky=True))
    result = run("apply", TARGET, "--yes", "--backup-dir", "backups", "--retries", "0")
    assert result.exit_code == 1  # the views failed, one by one; automations went through
    assert leaks(live.api_key, result.stdout, result.stderr, folder=tmp_path) == []


@pytest.mark.parametrize(
    "base_url",
    [
        pytest.param("http://192.0.2.2:18091\\@{host}", id="backslash-trick"),
        pytest.param("http://api:{key}@{host}", id="key-in-userinfo"),
        pytest.param("http://{host}/?key={key}", id="key-in-query"),
    ],
)
def test_a_url_that_could_send_the_key_elsewhere_is_refused(run, live, monkeypatch, base_url):
    host = live.url.removeprefix("http://")
    monkeypatch.setenv("WANDB_BASE_URL", base_url.format(host=host, key=live.api_key))
    before = len(live.requests)
    result = run("plan", TARGET)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: WANDB_BASE_URL: the W&B URL")
    assert len(live.requests) == before  # nothing sent anywhere
    assert leaks(live.api_key, result.stdout, result.stderr) == []
    assert "192.0.2.2" not in result.stderr


def test_the_status_line_names_the_host_the_key_goes_to(run, live):
    result = run("plan", TARGET)
    assert result.stderr.startswith(f"Reading {TARGET} from {live.url} ...")


def test_plan_files_and_manifests_never_hold_the_key(run, live, tmp_path):
    spec_holding_the_key = f"pasted by mistake: {live.api_key}"
    report = live.state.find("Token masking")
    live.state.edit_view(report, lambda s: s.replace("Token masking", spec_holding_the_key, 1))
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    assert run("apply", TARGET, "--plan", "plan.json", "--yes", "--backup-dir", "b").exit_code == 0
    assert run("export", TARGET, "exported").exit_code in (0, 1)
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["base_url"] == live.url
    assert leaks(live.api_key, folder=tmp_path) == []


def test_the_redactor_takes_every_form_of_the_key():
    key = "s" * 40
    register(key)
    try:
        basic = base64.b64encode(f"api:{key}".encode()).decode()
        text = f"Authorization: Basic {basic}; key={key}"
        assert redact(text) == f"Authorization: Basic {REDACTED}; key={REDACTED}"
    finally:
        forget()


def test_a_refused_key_names_the_host_and_where_the_key_came_from(run, live, monkeypatch):
    wrong = "w" * 40
    monkeypatch.setenv("WANDB_API_KEY", wrong)
    result = run("plan", TARGET)
    assert result.exit_code == 2
    (line,) = [ln for ln in result.stderr.splitlines() if ln.startswith("Error:")]
    assert "refused the API key for 127.0.0.1 (HTTP 401)" in line
    assert "the key came from WANDB_API_KEY" in line
    assert f"wandb login --relogin --host {live.url}" in line
    assert wrong not in result.stderr


# --- round three: the key across a cut, URL-encoded, at any base64 alignment ------------------
HEX_KEY = "3f9a0c7e51b2d84a6e0f9c3b7d2a5e8f1c4b0a9d"  # 40 hex digits, as W&B's keys are


def basic(key: str) -> str:
    return base64.b64encode(f"api:{key}".encode()).decode()


def pieces(key: str, text: str) -> list[str]:
    """Every run of 8 characters of the key, of its Basic form, or of either URL-encoded,
    that `text` holds."""
    forms = {key, basic(key), urllib.parse.quote(basic(key), safe="")}
    return sorted({f[i : i + 8] for f in forms for i in range(len(f) - 7) if f[i : i + 8] in text})


@pytest.fixture
def hex_keyed(live, monkeypatch):
    """The live server, with a key shaped like W&B's."""
    live.api_key = HEX_KEY
    monkeypatch.setenv("WANDB_API_KEY", HEX_KEY)
    return live


def error_answer(message: str, status: int = 400) -> Fault:
    return Fault(status=status, body=json.dumps({"errors": [{"message": message}]}).encode())


@pytest.mark.parametrize("form", [HEX_KEY, basic(HEX_KEY)], ids=["key", "basic"])
def test_a_key_across_the_cut_of_a_server_error_is_never_printed(run, hex_keyed, form):
    """The server's text is cut at 300 characters; 30 characters of the key fell before the
    cut and were printed (the text was cut, then redacted)."""
    hex_keyed.faults.append(error_answer("x" * 270 + form + " and more"))
    result = run("plan", TARGET, "--retries", "0", "--runs", "0")
    assert result.exit_code != 0
    assert pieces(HEX_KEY, result.output) == []
    assert "x" * 200 in result.stderr  # the message is shown, the key is not


def test_an_authorization_header_echoed_url_encoded_is_redacted(run, hex_keyed):
    echoed = "Basic%20" + urllib.parse.quote(basic(HEX_KEY), safe="")
    hex_keyed.faults.append(error_answer(f"bad header {echoed}"))
    result = run("plan", TARGET, "--retries", "0", "--runs", "0")
    assert result.exit_code != 0
    assert "bad header Basic%20" in result.stderr
    assert pieces(HEX_KEY, result.output) == []


@pytest.mark.parametrize("before", ["", "x", "xy"], ids=["aligned", "shifted-1", "shifted-2"])
def test_the_key_inside_a_longer_base64_text_is_redacted_at_every_alignment(before):
    """A proxy that base64-encodes a longer text holding the key (its header, a log line)."""
    register(HEX_KEY)
    try:
        for text in (f"{before}{HEX_KEY} and after", f"{before}api:{HEX_KEY}"):
            encoded = base64.b64encode(text.encode()).decode()
            for shown in (encoded, urllib.parse.quote(encoded, safe="")):
                redacted = redact(f"echo: {shown}")
                assert REDACTED in redacted
                inner = base64.b64encode(HEX_KEY.encode()).decode()[8:48]
                assert not any(inner[i : i + 8] in redacted for i in range(len(inner) - 7))
    finally:
        forget()


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(f"cut: {HEX_KEY[:8]}", id="the-first-8-at-the-end"),
        pytest.param(f"{HEX_KEY[-12:]} was the rest", id="the-last-12-at-the-start"),
        pytest.param(f"middle {HEX_KEY[10:30]} middle", id="20-in-the-middle"),
        pytest.param(f"Basic {basic(HEX_KEY)[:30]}…", id="basic-cut"),
        pytest.param(f"Basic%20{urllib.parse.quote(basic(HEX_KEY))[:40]}", id="quoted-cut"),
    ],
)
def test_a_piece_of_8_or_more_characters_of_the_key_is_redacted(text):
    register(HEX_KEY)
    try:
        redacted = redact(text)
        assert REDACTED in redacted
        assert pieces(HEX_KEY, redacted) == []
    finally:
        forget()


def test_fewer_than_8_characters_of_the_key_and_other_text_stay():
    register(HEX_KEY)
    try:
        text = f"id {HEX_KEY[:7]}, colour #{HEX_KEY[7:13]}, {HEX_KEY[20:27]}"
        assert redact(text) == text
    finally:
        forget()


def test_a_document_of_any_size_loses_every_whole_form_of_the_key():
    """Pieces are looked for in texts up to PIECES_UP_TO characters (lines, messages); a longer
    text is a document written whole, from which every whole form is still removed."""
    register(HEX_KEY)
    try:
        quoted = urllib.parse.quote(basic(HEX_KEY), safe="")
        document = "x" * PIECES_UP_TO + f" {HEX_KEY} {basic(HEX_KEY)} {quoted}"
        assert redact(document).endswith(f" {REDACTED} {REDACTED} {REDACTED}")
    finally:
        forget()
