"""Where to connect and with which key: the W&B host, the API key, and the transport guard that
keeps the key off plain http to another machine."""

from __future__ import annotations

import ipaddress
import netrc
import os
from collections.abc import Mapping
from urllib.parse import urlparse

from wbmigrate.live.client import ApiError, AuthError

DEFAULT_BASE_URL = "https://api.wandb.ai"


def base_url_from(env: Mapping[str, str]) -> str:
    return (env.get("WANDB_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def api_key_from(base_url: str, env: Mapping[str, str]) -> str:
    """WANDB_API_KEY, else the ~/.netrc entry for the API host (what `wandb login` writes)."""
    key = (env.get("WANDB_API_KEY") or "").strip()
    if key:
        return key
    host = urlparse(base_url).hostname or ""
    path = env.get("NETRC") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".netrc")
    try:
        entry = netrc.netrc(path).authenticators(host)
    except (OSError, netrc.NetrcParseError):
        entry = None
    if entry and entry[2]:
        return entry[2]
    raise AuthError(f"no API key for {host}: set WANDB_API_KEY or run `wandb login`")


def check_transport(base_url: str, allow_http: bool) -> None:
    """Refuse to send the key in clear text anywhere but this machine."""
    parsed = urlparse(base_url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ApiError(f"WANDB_BASE_URL {base_url!r} is not an http(s) URL")
    if parsed.scheme == "http" and not (_loopback(parsed.hostname) or allow_http):
        raise ApiError(
            f"refusing to send the API key over plain http to {parsed.hostname}; "
            "use https, or pass --allow-http if you really mean it"
        )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
