"""Where to connect and with which key, found the way `wandb login` stores them, and the guard
that keeps the key on the host the user chose.

Host: `WANDB_BASE_URL`, then `./wandb/settings`, then `$WANDB_CONFIG_DIR/settings` (default
`~/.config/wandb/settings`), then wandb's own default. Key: `WANDB_API_KEY`, then the `.netrc`
entry (`$NETRC`, `~/.netrc`, `~/_netrc`) for the host with its port, as `wandb login` writes it;
for a Forge host the upstream host's entry too. The URL is parsed once, by urllib3 (the
library that connects), and a URL with a user name, password, query, fragment or backslash is
refused: what is checked is exactly what is connected to.
"""

from __future__ import annotations

import configparser
import ipaddress
import netrc
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

from wbmigrate.live import DEFAULT_BASE_URL
from wbmigrate.live.shapes import AuthError
from wbmigrate.live.transport import ApiError

# Forge names in front of W&B deployments: a key stored for either name serves both.
FORGE = {
    "api.forge.coreweave.com": "api.wandb.ai",
    "forge.coreweave.com": "api.wandb.ai",
    "qa.forge.coreweave.com": "api.qa.wandb.ai",
}


@dataclass(frozen=True)
class Host:
    """A W&B API host, as the client will connect to it, and where that choice came from."""

    scheme: str
    name: str  # the host name or address (an IPv6 address in brackets)
    port: int | None
    path: str  # a path prefix ("" for most hosts)
    source: str  # "WANDB_BASE_URL", "./wandb/settings", ..., "wandb's default host"

    @property
    def netloc(self) -> str:
        """host[:port], as `.netrc` names the machine."""
        return self.name if self.port is None else f"{self.name}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.netloc}{self.path}"


@dataclass(frozen=True)
class Credentials:
    host: Host
    api_key: str
    key_source: str  # "WANDB_API_KEY" or "~/.netrc (machine 127.0.0.1:8080)"


def parse_host(text: str, source: str) -> Host:
    """A base URL, parsed once by urllib3; refused (without repeating it) when it carries
    anything but a scheme, a host, a port and a path."""
    text = text.strip()
    if "\\" in text or any(ch.isspace() or ord(ch) < 32 for ch in text):
        raise ApiError(f"{source}: the W&B URL has a backslash or white space in it")
    try:
        url = parse_url(text)
    except LocationParseError:
        raise ApiError(f"{source}: the W&B URL cannot be parsed") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ApiError(f"{source}: the W&B URL must be http(s)://HOST[:PORT]")
    if url.auth is not None or url.query is not None or url.fragment is not None:
        raise ApiError(
            f"{source}: the W&B URL has a user name, password, query or fragment in it; "
            "give the bare host URL (the key comes from WANDB_API_KEY or `wandb login`)"
        )
    path = (url.path or "").rstrip("/")
    name = url.host.lower()
    if name == "forge.coreweave.com" and path == "/api/wandb":
        name, path = "api.forge.coreweave.com", ""  # as wandb normalises it
    return Host(url.scheme, name, url.port, path, source)


def find_host(env: Mapping[str, str], cwd: Path) -> Host:
    """The host `wandb login` chose: environment, then the settings files, then the default."""
    if env.get("WANDB_BASE_URL"):
        return parse_host(env["WANDB_BASE_URL"], "WANDB_BASE_URL")
    config_dir = env.get("WANDB_CONFIG_DIR") or str(_home(env) / ".config" / "wandb")
    for path, shown in (
        (cwd / "wandb" / "settings", "./wandb/settings"),
        (Path(config_dir) / "settings", f"{config_dir}/settings"),
    ):
        base_url = _setting(path, "base_url")
        if base_url:
            return parse_host(base_url, shown)
    return parse_host(DEFAULT_BASE_URL, "wandb's default host")


def find_key(host: Host, env: Mapping[str, str]) -> tuple[str, str]:
    """The API key for `host` and where it came from."""
    key = (env.get("WANDB_API_KEY") or "").strip()
    if key:
        return key, "WANDB_API_KEY"
    machines = [host.netloc] + ([FORGE[host.name]] if host.name in FORGE else [])
    for path in _netrc_paths(env):
        for machine in machines:
            password = _netrc_password(path, machine)
            if password:
                return password, f"{path} (machine {machine})"
    raise AuthError(
        f"no API key for {host.netloc}: set WANDB_API_KEY or run `wandb login --host {host.url}`"
    )


def credentials(env: Mapping[str, str], cwd: Path) -> Credentials:
    host = find_host(env, cwd)
    key, source = find_key(host, env)
    return Credentials(host, key, source)


def check_transport(host: Host, allow_http: bool) -> None:
    """Refuse to send the key in clear text anywhere but this machine."""
    if host.scheme == "http" and not (_loopback(host.name) or allow_http):
        raise ApiError(
            f"refusing to send the API key over plain http to {host.name}; "
            "use https, or pass --allow-http if you really mean it"
        )


def _setting(path: Path, key: str) -> str | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None
    return parser.get("default", key, fallback=None) or None


def _netrc_paths(env: Mapping[str, str]) -> list[Path]:
    if env.get("NETRC"):
        return [Path(env["NETRC"])]
    home = _home(env)
    return [home / ".netrc", home / "_netrc"]


def _netrc_password(path: Path, machine: str) -> str | None:
    try:
        entry = netrc.netrc(str(path)).authenticators(machine)
    except (OSError, netrc.NetrcParseError):
        return None
    return entry[2] if entry and entry[2] else None


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def _loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
