"""The import rules of ARCHITECTURE.md: layers import downward only, no cycles, the pure core
imports no I/O, nothing imports the CLI, `check` and the live side stay apart, and `check` starts
without `requests`."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

PACKAGE = REPO / "wbmigrate"
# Bottom to top; a module may import its own layer and the layers below it.
LAYERS = [
    [
        "wbmigrate.errors",
        "wbmigrate.exit_codes",
        "wbmigrate.json_values",
        "wbmigrate.names",
        "wbmigrate.redact",
    ],
    ["wbmigrate.parallel"],  # imports nothing of wbmigrate
    ["wbmigrate.safe_write"],
    ["wbmigrate.edit"],
    ["wbmigrate.mapping", "wbmigrate"],
    ["wbmigrate.engine"],
    ["wbmigrate.kinds"],
    ["wbmigrate.rewrite", "wbmigrate.guard"],
    ["wbmigrate.plan", "wbmigrate.verify"],
    ["wbmigrate.files", "wbmigrate.discover"],
    ["wbmigrate.live", "wbmigrate.check"],
    ["wbmigrate.report"],
    ["wbmigrate.cli", "wbmigrate.__main__"],
]
CORE = ["edit", "mapping", "engine", "kinds", "rewrite", "guard", "plan", "names", "json_values"]
NETWORK = {"requests", "urllib3", "http", "socket", "ssl"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str) -> set[str]:
    """Every module `name` imports, at any depth of its code (lazy imports count too)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            for alias in node.names:  # `from wbmigrate import names` imports a module
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return found


GRAPH = {name: {m for m in _imports(name) if m in MODULES} for name in MODULES}


def _layer(name: str) -> int:
    """The layer of a module: that of the longest layer entry it falls under."""
    best, layer = -1, -1
    for i, entries in enumerate(LAYERS):
        for entry in entries:
            if (name == entry or name.startswith(entry + ".")) and len(entry) > best:
                best, layer = len(entry), i
    assert layer >= 0, f"{name} is in no layer of ARCHITECTURE.md"
    return layer


def _top_package(name: str) -> str:
    return ".".join(name.split(".")[:2])


def test_every_module_is_in_a_layer():
    for name in MODULES:
        _layer(name)


def test_no_upward_import():
    upward = [
        f"{name} -> {imported}"
        for name, imports in GRAPH.items()
        for imported in imports
        if _layer(imported) > _layer(name)
    ]
    assert upward == []


def test_no_import_cycle():
    seen: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        seen[name] = 1
        for imported in sorted(GRAPH[name]):
            if _is_parent_package(imported, name):
                continue  # a module's own package __init__ is no cycle of code
            assert seen.get(imported) != 1, " -> ".join([*path, name, imported])
            if imported not in seen:
                visit(imported, [*path, name])
        seen[name] = 2

    for name in sorted(GRAPH):
        if name not in seen:
            visit(name, [])


def _is_parent_package(imported: str, name: str) -> bool:
    return name.startswith(imported + ".")


@pytest.mark.parametrize("part", CORE)
def test_the_core_does_no_io(part):
    for name in GRAPH:
        if name == f"wbmigrate.{part}" or name.startswith(f"wbmigrate.{part}."):
            bad = {
                m
                for m in _imports(name)
                if m.split(".")[0] in NETWORK
                or _top_package(m) in {"wbmigrate.live", "wbmigrate.files", "wbmigrate.safe_write"}
            }
            assert not bad, f"{name} imports {sorted(bad)}"


def test_nothing_imports_the_cli():
    for name, imports in GRAPH.items():
        if _top_package(name) != "wbmigrate.cli" and name != "wbmigrate.__main__":
            assert not {m for m in imports if _top_package(m) == "wbmigrate.cli"}, name


@pytest.mark.parametrize(("side", "other"), [("check", "live"), ("live", "check")])
def test_check_and_live_stay_apart(side, other):
    for name, imports in GRAPH.items():
        if _top_package(name) == f"wbmigrate.{side}":
            assert not {m for m in imports if _top_package(m) == f"wbmigrate.{other}"}, name


@pytest.mark.parametrize(
    "code",
    [
        "import wbmigrate.check.run",
        "from click.testing import CliRunner; from wbmigrate.cli import cli; "
        "CliRunner().invoke(cli, ['check', 'README.md'])",
        "from click.testing import CliRunner; from wbmigrate.cli import cli; "
        "CliRunner().invoke(cli, ['plan', 'fixtures/demo-project'])",
    ],
    ids=["library", "command", "plan of files"],
)
def test_check_does_not_import_requests(code):
    """Nor does a plan of files: the live side loads only for a live target."""
    probe = f"import sys; {code}; assert 'requests' not in sys.modules, 'requests imported'"
    subprocess.run([sys.executable, "-c", probe], check=True, cwd=REPO)


# Loaded only once a live plan's first requests are out: the mapping, the engine, the writers.
LATER = ["yaml", "regex", "wbmigrate.mapping", "wbmigrate.engine.walk", "wbmigrate.kinds"]
LATER += ["wbmigrate.rewrite", "wbmigrate.files", "wbmigrate.guard", "wbmigrate.report.plan"]
LATER += ["wbmigrate.live.prepare", "wbmigrate.live.apply", "wbmigrate.live.planfile"]  # apply's
LATER += ["wbmigrate.live.outcomes", "wbmigrate.live.backup", "wbmigrate.report.live"]  # apply's
LATER += ["wbmigrate.plan", "wbmigrate.engine.model", "wbmigrate.edit", "wbmigrate.live.org"]
FIRST_CONNECT = """
import json, os, socket, sys, time
def connect(self, address):
    print(json.dumps(sorted(sys.modules)), flush=True)
    os._exit(0)
class Later:  # the imports that are to wait hold back until the first connect (10 s at most)
    def find_spec(self, name, path=None, target=None):
        if any(name == p or name.startswith(p + ".") for p in %r):
            time.sleep(10)  # (a first connect ends the process meanwhile)
socket.socket.connect = connect
sys.meta_path.insert(0, Later())
sys.argv = ["wbmigrate", "plan", "team/async-rl"]
from wbmigrate.cli import main
main()
"""


def test_a_live_plan_sends_its_first_request_before_reading_the_mapping(tmp_path):
    """The mapping is read, and the engine loaded, while the first pages are on their way."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "WANDB_BASE_URL": "http://127.0.0.1:9",  # never reached: the first connect ends it
        "WANDB_API_KEY": "k" * 40,
    }
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CONNECT % LATER],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    loaded = json.loads(done.stdout.splitlines()[0])
    assert "requests" in loaded
    assert not [m for m in loaded if any(m == p or m.startswith(f"{p}.") for p in LATER)]
