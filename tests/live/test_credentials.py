"""Where to connect and with which key: the host, the API key, the transport guard."""

from __future__ import annotations

import pytest

from wbmigrate.live.client import ApiError, AuthError
from wbmigrate.live.credentials import api_key_from, base_url_from, check_transport

BASE = "https://api.example.test"


def test_key_from_environment_wins():
    assert api_key_from(BASE, {"WANDB_API_KEY": " abc \n"}) == "abc"


def test_key_from_netrc_for_the_api_host(tmp_path):
    (tmp_path / ".netrc").write_text("machine api.example.test\n  login user\n  password k123\n")
    (tmp_path / ".netrc").chmod(0o600)
    assert api_key_from(BASE, {"HOME": str(tmp_path)}) == "k123"
    with pytest.raises(AuthError, match=r"no API key for other\.test"):
        api_key_from("https://other.test", {"HOME": str(tmp_path)})


def test_base_url_default_and_override():
    assert base_url_from({}) == "https://api.wandb.ai"
    assert base_url_from({"WANDB_BASE_URL": "http://127.0.0.1:8080/"}) == "http://127.0.0.1:8080"


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9", "http://localhost:9", "http://[::1]:9", "https://api.wandb.ai"]
)
def test_transport_allowed(url):
    check_transport(url, allow_http=False)


def test_plain_http_to_another_host_is_refused():
    with pytest.raises(ApiError, match="refusing to send the API key over plain http"):
        check_transport("http://wandb.example.com", allow_http=False)
    check_transport("http://wandb.example.com", allow_http=True)
