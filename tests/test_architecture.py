"""The rules of ARCHITECTURE.md: layers import downward only, no cycles, the pure core imports
no I/O, nothing imports the CLI, `check` and the live side stay apart, `check` starts without
`requests`, and a module is short or says why."""

from __future__ import annotations

import ast
import io
import subprocess
import sys
import tokenize
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
    ["wbmigrate.plan", "wbmigrate.plan_json", "wbmigrate.verify"],
    ["wbmigrate.files", "wbmigrate.discover"],
    ["wbmigrate.live", "wbmigrate.check"],
    ["wbmigrate.report"],
    ["wbmigrate.cli", "wbmigrate.__main__"],
]
CORE = [
    "edit",
    "mapping",
    "engine",
    "kinds",
    "rewrite",
    "guard",
    "plan",
    "plan_json",
    "names",
    "json_values",
]
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


def _code_lines(path: Path) -> int:
    """Lines holding code, as the renovation counts them: no blank line, comment or docstring."""
    text = path.read_text()
    docstrings = {
        line
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and (doc := node.body[:1])
        and isinstance(doc[0], ast.Expr)
        and isinstance(doc[0].value, ast.Constant)
        and isinstance(doc[0].value.value, str)
        for line in range(doc[0].lineno, (doc[0].end_lineno or doc[0].lineno) + 1)
    }
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    return len(
        {
            line
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type not in skipped | {tokenize.ENDMARKER}
            for line in range(token.start[0], token.end[0] + 1)
            if line not in docstrings
        }
    )


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_module_is_short_or_says_why(name):
    """ARCHITECTURE.md's sizes, in lines holding code: a CLI module about 200 (it only parses,
    calls and prints), any other 300, unless its docstring says why it is longer."""
    path = MODULES[name]
    limit = 210 if name.startswith("wbmigrate.cli") else 300
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    assert _code_lines(path) <= limit or "over 300 lines" in doc.lower(), name
