"""The wheel users install carries the bundled mappings and works from any folder."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest
from helpers import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--wheel-dir",
            str(out),
            str(REPO),
        ],
        check=True,
        capture_output=True,
    )
    (path,) = out.glob("wbmigrate-*.whl")
    return path


def test_wheel_contains_every_mapping(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for mapping in (REPO / "mappings").glob("*.yaml"):
        assert f"wbmigrate/data/mappings/{mapping.name}" in names


def test_installed_wheel_lists_mappings_from_another_folder(wheel, tmp_path):
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    code = "import wbmigrate.cli as c, sys; print(c.__file__, file=sys.stderr); c.main()"
    result = subprocess.run(
        [sys.executable, "-c", code, "mappings", "list"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.stderr.startswith(str(site))  # the wheel's copy ran, not the source tree
    assert (result.returncode, result.stdout) == (0, "prime-rl\n")
