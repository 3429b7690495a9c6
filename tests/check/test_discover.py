"""Which files are read, by `check` and `plan DIR` alike (`wbmigrate.discover`): special files
never opened, symlinks never followed out of the tree, `.gitignore` and excludes obeyed, and
`plan DIR` reading exactly the spec files `check` reads."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES, REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wbmigrate.discover import find_files
from wbmigrate.files import read_sources, spec_paths

SPEC = FIXTURES / "cases/report/line-metrics/before.json"
OLD = 'KEY = "off_policy/mean"\n'
CONFIG = "[orchestrator]\nmax_off_policy_steps = 8\n"  # fixable


def wbmigrate(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The real command in its own process, with a time limit: a FIFO opened by mistake would
    block forever, and the limit turns that into a failure."""
    return subprocess.run(
        [sys.executable, "-m", "wbmigrate", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )


def names(paths) -> list[str]:
    return [Path(p).as_posix() for p in paths]


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- special files ---------------------------------------------------------------------------


def test_a_fifo_in_a_tree_is_skipped_never_opened(here):
    (here / "a.py").write_text(OLD)
    os.mkfifo(here / "pipe.json")
    os.mkfifo(here / "pipe.py")
    assert names(find_files([Path(".")])) == ["a.py"]
    result = wbmigrate("check", ".", "--format", "json", cwd=here, timeout=30)
    assert result.returncode == 1, result.stderr
    assert {f["path"] for f in json.loads(result.stdout)["findings"]} == {"a.py"}
    assert "pipe" not in result.stderr  # found by walking: skipped without a word


def test_a_socket_in_a_tree_is_skipped(here):
    (here / "a.py").write_text(OLD)
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind("sock.json")
        assert names(find_files([Path(".")])) == ["a.py"]
    finally:
        server.close()


def test_a_fifo_named_on_the_command_line_is_skipped_with_one_line(here):
    os.mkfifo(here / "pipe.json")
    (here / "a.py").write_text(OLD)
    result = wbmigrate("check", "pipe.json", "a.py", cwd=here, timeout=30)
    assert result.returncode == 1  # a.py's finding; the FIFO is said to be skipped
    assert (
        result.stderr == "wbmigrate: pipe.json: skipped: a FIFO is not a regular file; not read\n"
    )
    assert "a.py" in result.stdout


def test_a_device_named_on_the_command_line_is_refused(capsys):
    assert list(find_files([Path("/dev/null")])) == []
    assert capsys.readouterr().err == (
        "wbmigrate: /dev/null: skipped: a character device is not a regular file; not read\n"
    )


def test_plan_refuses_a_fifo_in_one_line(here):
    os.mkfifo(here / "pipe.json")
    result = wbmigrate("plan", "pipe.json", cwd=here, timeout=30)
    assert result.returncode == 2
    assert result.stderr == "Error: pipe.json: a FIFO is not a regular file\n"


def test_plan_skips_a_fifo_in_a_folder(here):
    shutil.copy(SPEC, here / "spec.json")
    os.mkfifo(here / "pipe.json")
    result = wbmigrate("plan", ".", cwd=here, timeout=30)
    assert result.returncode == 0, result.stderr
    assert "1 object:" in result.stdout


# --- symlinks ------------------------------------------------------------------------------


@pytest.fixture
def linked(tmp_path, monkeypatch):
    """A project with a config inside it, one outside it, and a link to each."""
    project = tmp_path / "project"
    (project / "configs").mkdir(parents=True)
    outside = tmp_path / "elsewhere.toml"
    outside.write_text(CONFIG)
    (project / "configs" / "real.toml").write_text(CONFIG)
    (project / "configs" / "out.toml").symlink_to(outside)
    (project / "configs" / "in.toml").symlink_to(project / "configs" / "real.toml")
    monkeypatch.chdir(project)
    return project


def test_walked_symlinks_are_skipped(linked):
    assert names(find_files([Path(".")])) == ["configs/real.toml"]


def test_a_named_symlink_out_of_the_tree_is_refused_and_never_fixed(linked, capsys):
    assert list(find_files([Path("configs/out.toml")])) == []
    refused = capsys.readouterr().err
    assert refused.startswith("wbmigrate: configs/out.toml: skipped: ")
    assert "outside" in refused
    result = wbmigrate("check", "configs/out.toml", "--fix", cwd=linked)
    assert result.stderr.startswith("wbmigrate: configs/out.toml: skipped: a symlink to ")
    assert (linked.parent / "elsewhere.toml").read_text() == CONFIG
    assert (linked / "configs" / "out.toml").is_symlink()


def test_a_named_symlink_inside_the_tree_is_read_and_fixed_at_its_target(linked):
    assert names(find_files([Path("configs/in.toml")])) == ["configs/real.toml"]
    assert names(find_files([Path("configs/in.toml"), Path("configs/real.toml")])) == [
        "configs/real.toml"
    ]  # once
    result = wbmigrate("check", "configs/in.toml", "--fix", cwd=linked)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (linked / "configs" / "in.toml").is_symlink()  # still a link
    assert "max_staleness" in (linked / "configs" / "real.toml").read_text()


def test_the_tree_is_that_of_every_path_given(linked):
    """Named with a folder above the target, the link leads inside the tree."""
    outside = linked.parent / "elsewhere.toml"
    found = list(find_files([Path("configs/out.toml"), outside]))
    assert found == [outside]  # once, at its real place


# --- ignores and excludes ------------------------------------------------------------------


@pytest.fixture
def tree(here):
    (here / ".git").mkdir()
    (here / ".gitignore").write_text("outputs/\n*.log\n")
    for path in [
        "a.py",
        "b/c.py",
        "b/d/e.py",
        "outputs/x.py",
        "run.log",
        "vendor/v.py",
        ".github/workflows/ci.yml",
        "z.py",
    ]:
        (here / path).parent.mkdir(parents=True, exist_ok=True)
        (here / path).write_text(OLD)
    (here / ".git" / "config.py").write_text(OLD)
    return here


def test_walk_order_and_what_is_skipped(tree):
    assert names(find_files([Path(".")], ["vendor/"])) == [
        ".gitignore",
        "a.py",
        "z.py",
        ".github/workflows/ci.yml",
        "b/c.py",
        "b/d/e.py",
    ]


def test_a_named_file_is_read_even_if_excluded_unless_force_exclude(tree):
    named = [Path("vendor/v.py"), Path("outputs/x.py"), Path(".git/config.py"), Path("a.py")]
    assert names(find_files(named, ["vendor/"])) == names(named)
    assert names(find_files(named, ["vendor/"], force_exclude=True)) == ["outputs/x.py", "a.py"]
    assert names(find_files([Path("vendor")], ["vendor/"], force_exclude=True)) == []
    assert names(find_files([Path("b/c.py")], ["b"], force_exclude=True)) == []


# --- plan DIR reads what check reads -------------------------------------------------------------


@pytest.fixture
def dashboards(here):
    """A dashboards repository with specs, JSON that is no spec, ignored and excluded files."""
    (here / ".git").mkdir()
    (here / ".gitignore").write_text("outputs/\n")
    (here / "pyproject.toml").write_text('[tool.wbmigrate]\nexclude = ["archive/"]\n')
    for path in ["reports/a.json", "outputs/b.json", "archive/c.json", ".hidden/d.json"]:
        (here / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SPEC, here / path)
    (here / "package.json").write_text('{"name": "x", "version": "1.0.0"}\n')
    (here / "tsconfig.json").write_text('{\n  // comments: not JSON\n  "compilerOptions": {}\n}\n')
    (here / "configs").mkdir()
    (here / "configs" / "resolved.json").write_text(
        '{"orchestrator": {"max_off_policy_steps": 8, "event": "x"}}\n'
    )
    (here / "broken.json").write_text('{"blocks": [')
    return here


def test_plan_folder_honours_gitignore_and_exclude_and_skips_what_is_no_spec(run, dashboards):
    result = run("plan", ".", "--format", "json")
    planned = {o["origin"]: o for o in json.loads(result.stdout)["objects"]}
    assert set(planned) == {"broken.json", ".hidden/d.json", "reports/a.json"}
    assert planned["broken.json"]["status"] == "error"
    assert result.exit_code == 1  # the broken spec, and nothing else, is unreadable


def test_plan_and_check_read_the_same_json_files(run, dashboards):
    checked = [p for p in find_files([Path(".")], ["archive/"]) if p.suffix == ".json"]
    assert spec_paths(Path("."), ["archive/"]) == checked
    read = [s.origin for s in read_sources(Path("."), ["archive/"])]
    assert read == [str(p) for p in checked if p.name not in NO_SPEC]


NO_SPEC = {"package.json", "tsconfig.json", "resolved.json"}


def test_plan_of_one_file_that_is_no_spec_says_so(run, dashboards):
    result = run("plan", "package.json")
    assert result.exit_code == 1
    assert "not a W&B report, workspace or automation spec" in result.stdout


# --- .gitignore, as git reads it --------------------------------------------------------------

# (the ignore files, by folder; the files of the tree) for idioms git users write
IDIOMS = {
    "only-yaml": (
        {"": "*\n!*/\n!*.yaml\n"},
        ["top.yaml", "top.py", "sub/x.yaml", "sub/z.py", "sub/deeper/y.yaml"],
    ),
    "re-include-under-an-ignored-folder": (
        {"": "/build/\n!/build/keep/\n"},
        ["build/a.yaml", "build/keep/b.yaml", "src/build/c.yaml", "a.yaml"],
    ),
    "nested-gitignores": (
        {"": "*.log\nsecret/\n", "sub": "!important.log\n", "sub/deep": "*.log\n!*.yaml\n"},
        [
            "important.log",
            "a.log",
            "sub/important.log",
            "sub/x.log",
            "sub/deep/important.log",
            "secret/a.yaml",
            "sub/secret/b.yaml",
            "sub/deep/c.yaml",
        ],
    ),
    "double-stars": (
        {"": "logs/**\n**/tmp\na/**/b.yaml\n**/cache/*.json\n"},
        [
            "logs/x.yaml",
            "logs/d/y.yaml",
            "logs.yaml",
            "q/tmp",
            "q/tmp2",
            "r/tmp/z.yaml",
            "a/b.yaml",
            "a/x/y/b.yaml",
            "c/a/b.yaml",
            "cache/p.json",
            "u/v/cache/p.json",
            "u/cache/deeper/p.json",
        ],
    ),
    "trailing-spaces-and-escapes": (
        {"": "foo.yaml   \nbar\\ \n\\#notes.yaml\n#x.yaml\n\\!bang.yaml\nCRLF.yaml\r\n"},
        ["foo.yaml", "bar ", "bar", "#notes.yaml", "#x.yaml", "x.yaml", "!bang.yaml", "CRLF.yaml"],
    ),
    "folders-only-and-slashes": (
        {"": "out/\ndoc/*.txt\n/root.yaml\n"},
        [
            "out",
            "sub/out/a.yaml",
            "doc/a.txt",
            "doc/sub/b.txt",
            "sub/doc/c.txt",
            "root.yaml",
            "sub/root.yaml",
        ],
    ),
    "brackets-and-question-marks": (
        {"": "*.py[co]\n[!a]*.yaml\n[[:digit:]]*.json\n?.md\n[]x].toml\n[z-a].sh\n"},
        [
            "a.pyc",
            "a.pyo",
            "a.py",
            "abc.yaml",
            "bcd.yaml",
            "1.json",
            "x1.json",
            "a.md",
            "ab.md",
            "].toml",
            "x.toml",
            "y.toml",
            "z.sh",
            "a.sh",
        ],
    ),
    "negation-order": (
        {"": "*.yaml\n!keep*.yaml\nkeep-not.yaml\n", "sub": "keep.yaml\n"},
        ["a.yaml", "keep.yaml", "keep-not.yaml", "sub/keep.yaml", "sub/keep2.yaml"],
    ),
}


def git_sees(root: Path, files: list[str]) -> list[str]:
    """The files of a tree git does not ignore, by the real `git check-ignore` (only the tree's
    .gitignore files count: no user or system configuration)."""
    home = root.parent / "git-home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=root, env=env, check=True)
    ignored = subprocess.run(
        ["git", "check-ignore", "--stdin", "-z"],
        cwd=root,
        env=env,
        input="\0".join(files) + "\0",
        capture_output=True,
        text=True,
        check=False,
    )
    assert ignored.returncode in (0, 1), ignored.stderr
    return sorted(set(files) - set(ignored.stdout.split("\0")))


@pytest.mark.parametrize("idiom", IDIOMS)
def test_check_reads_the_files_git_does_not_ignore(here, idiom):
    ignore_files, files = IDIOMS[idiom]
    for folder, text in ignore_files.items():
        (here / folder).mkdir(parents=True, exist_ok=True)
        (here / folder / ".gitignore").write_bytes(text.encode())
    for name in files:
        (here / name).parent.mkdir(parents=True, exist_ok=True)
        (here / name).write_text(OLD)
    every = [*files, *(f"{folder}/.gitignore".lstrip("/") for folder in ignore_files)]
    expected = git_sees(here, every)
    assert sorted(names(find_files([Path(".")]))) == expected
    for folder in {name.split("/")[0] for name in files if "/" in name}:  # a folder named
        inside = sorted(names(find_files([Path(folder)])))
        assert inside == [name for name in expected if name.startswith(f"{folder}/")]


SEGMENTS = ["a", "b", "ab", "x.yaml", "y.py", "d e", "#c", "[a]"]
PIECES = ["a", "b", "*", "?", "*.yaml", "[ab]", "[!a]", "**", "a*", "x.yaml", "a**", "**b"]
PIECES += ["[a-b]*", "[[:alpha:]]", "[]a]", "d\\ e", "\\#c", "\\[a]", "[a"]
PATTERNS = st.builds(
    lambda negated, lead, parts, trail: negated + lead + "/".join(parts) + trail,
    st.sampled_from(["", "!"]),
    st.sampled_from(["", "/", "**/"]),
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=3),
    st.sampled_from(["", "/", "/**"]),
)
TREES = st.lists(
    st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4).map("/".join),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    top=st.lists(PATTERNS, max_size=5),
    inner=st.lists(PATTERNS, max_size=3),
    paths=TREES,
)
def test_check_agrees_with_git_on_generated_trees(tmp_path_factory, top, inner, paths):
    root = tmp_path_factory.mktemp("tree")
    files = [p for p in sorted(set(paths)) if not any(q.startswith(p + "/") for q in paths)]
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(OLD)
    (root / ".gitignore").write_text("\n".join(top) + "\n")
    ignore_files = [".gitignore"]
    if (root / "a").is_dir():
        (root / "a" / ".gitignore").write_text("\n".join(inner) + "\n")
        ignore_files.append("a/.gitignore")
    expected = git_sees(root, [*files, *ignore_files])
    found = [Path(p).relative_to(root).as_posix() for p in find_files([root])]
    assert sorted(found) == expected
