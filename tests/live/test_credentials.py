"""Where to connect and with which key: found as the real `wandb login` stores them, the URL
parsed once, and the key kept on the host the user chose."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wbmigrate.live.credentials import (
    DEFAULT_BASE_URL,
    check_transport,
    credentials,
    find_host,
    find_key,
    parse_host,
)
from wbmigrate.live.shapes import AuthError
from wbmigrate.live.transport import ApiError

KEY = "k" * 40


def wandb_login(home: Path, *args: str) -> None:
    """Run the real `wandb login` with a home folder of its own (offline: --no-verify, or a
    --host that is the local test server)."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("WANDB_")},
        "HOME": str(home),
        "WANDB_ERROR_REPORTING": "false",
    }
    wandb = Path(sys.executable).parent / "wandb"
    subprocess.run(
        [str(wandb), "login", *args],
        env=env,
        cwd=home,
        check=True,
        timeout=120,
        capture_output=True,
    )


def test_wandb_login_with_a_host_and_a_port(wandb_server, tmp_path):
    wandb_login(tmp_path, "--host", wandb_server.url, wandb_server.api_key)
    found = credentials({"HOME": str(tmp_path)}, tmp_path)
    assert found.host.url == wandb_server.url
    assert found.host.source.endswith(".config/wandb/settings")
    assert found.api_key == wandb_server.api_key
    port = wandb_server.url.rpartition(":")[2]
    assert found.key_source.endswith(f".netrc (machine 127.0.0.1:{port})")


def test_wandb_login_to_the_default_host(tmp_path):
    wandb_login(tmp_path, "--no-verify", KEY)
    found = credentials({"HOME": str(tmp_path)}, tmp_path)
    assert (found.host.url, found.host.source) == (DEFAULT_BASE_URL, "wandb's default host")
    assert found.api_key == KEY


def test_a_self_hosted_users_key_never_goes_to_the_public_cloud(wandb_server, tmp_path):
    wandb_login(tmp_path, "--host", wandb_server.url, wandb_server.api_key)
    found = credentials({"HOME": str(tmp_path), "WANDB_API_KEY": "x" * 40}, tmp_path)
    assert found.host.url == wandb_server.url  # the key from the environment goes there too


@pytest.mark.parametrize(
    ("files", "env", "expected", "source"),
    [
        pytest.param(
            {},
            {"WANDB_BASE_URL": "http://127.0.0.1:8080/"},
            "http://127.0.0.1:8080",
            "WANDB_BASE_URL",
            id="environment-first",
        ),
        pytest.param(
            {"cwd/wandb/settings": "[default]\nbase_url = https://w.example.com\n"},
            {},
            "https://w.example.com",
            "./wandb/settings",
            id="workspace-settings",
        ),
        pytest.param(
            {"cfg/settings": "[default]\nbase_url = https://c.example.com:8443\n"},
            {"WANDB_CONFIG_DIR": "cfg"},
            "https://c.example.com:8443",
            "cfg/settings",
            id="config-dir",
        ),
        pytest.param({}, {}, DEFAULT_BASE_URL, "wandb's default host", id="default"),
        pytest.param(
            {},
            {"WANDB_BASE_URL": "https://forge.coreweave.com/api/wandb"},
            "https://api.forge.coreweave.com",
            "WANDB_BASE_URL",
            id="forge-path",
        ),
    ],
)
def test_host_lookup_order(tmp_path, files, env, expected, source):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "cwd").mkdir(exist_ok=True)
    env = {"HOME": str(tmp_path), **env}
    if "WANDB_CONFIG_DIR" in env:
        env["WANDB_CONFIG_DIR"] = str(tmp_path / env["WANDB_CONFIG_DIR"])
    host = find_host(env, tmp_path / "cwd")
    assert host.url == expected
    assert host.source.endswith(source)


def test_key_from_environment_wins(tmp_path):
    host = parse_host("https://api.example.test", "test")
    assert find_key(host, {"WANDB_API_KEY": " abc \n", "HOME": str(tmp_path)})[0] == "abc"


def test_key_from_netrc_by_host_and_port_and_forge_upstream(tmp_path):
    netrc = tmp_path / ".netrc"
    netrc.write_text(
        "machine api.example.test:8443\n  login user\n  password k8443\n"
        "machine api.wandb.ai\n  login user\n  password kcloud\n"
    )
    netrc.chmod(0o600)
    env = {"HOME": str(tmp_path)}
    assert find_key(parse_host("https://api.example.test:8443", "t"), env)[0] == "k8443"
    assert find_key(parse_host("https://api.forge.coreweave.com", "t"), env)[0] == "kcloud"
    with pytest.raises(AuthError, match=r"no API key for api\.example\.test:9"):
        find_key(parse_host("https://api.example.test:9", "t"), env)
    other = tmp_path / "other-netrc"
    other.write_text("machine api.example.test:8443\n  login u\n  password fromNETRC\n")
    other.chmod(0o600)
    host = parse_host("https://api.example.test:8443", "t")
    assert find_key(host, {**env, "NETRC": str(other)})[0] == "fromNETRC"


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("http://192.0.2.2:18091\\@127.0.0.1", id="backslash"),
        pytest.param(f"https://api:{KEY}@wandb.example.com", id="userinfo"),
        pytest.param(f"https://wandb.example.com/?key={KEY}", id="query"),
        pytest.param("https://wandb.example.com/#frag", id="fragment"),
        pytest.param("ftp://wandb.example.com", id="scheme"),
        pytest.param("https:///nohost", id="no-host"),
    ],
)
def test_urls_that_could_hide_another_host_are_refused_without_repeating_them(url):
    with pytest.raises(ApiError) as refused:
        parse_host(url, "WANDB_BASE_URL")
    message = str(refused.value)
    assert message.startswith("WANDB_BASE_URL: ")
    assert KEY not in message
    assert "192.0.2.2" not in message


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9", "http://localhost:9", "http://[::1]:9", "https://api.wandb.ai"]
)
def test_transport_allowed(url):
    check_transport(parse_host(url, "t"), allow_http=False)


def test_plain_http_to_another_host_is_refused():
    host = parse_host("http://wandb.example.com", "t")
    with pytest.raises(ApiError, match="refusing to send the API key over plain http"):
        check_transport(host, allow_http=False)
    check_transport(host, allow_http=True)
