"""Checking with worker processes (`wbmigrate.parallel`): the same reports, in the same order,
as checking here alone; the same output and the same files written by `check --fix`; and a
small tree is checked here alone."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sys

import pytest
from helpers import FIXTURES, until

from wbmigrate import find_mapping, parallel
from wbmigrate.check import run as run_module
from wbmigrate.check.config import CheckConfig
from wbmigrate.check.model import Rule
from wbmigrate.check.run import KINDS, check_paths, checker
from wbmigrate.check.targets import targets_for
from wbmigrate.engine.model import Mode, Options

MIGRATION = find_mapping("prime-rl").migration()
TREES = [FIXTURES / "demo-repo", FIXTURES / "check-cases", FIXTURES / "operator-repo"]
forks = pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """Every file kind `check` reads, with and without old names, as the current folder."""
    for source in TREES:
        shutil.copytree(source, tmp_path / source.name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def forking(monkeypatch):
    """Workers even when an earlier test left a thread behind (an idle server's: a worker
    needs no lock it could hold); the pids of the processes that checked. While workers are on,
    this process checks nothing until one of them has checked a file: on a loaded machine it
    could otherwise take every chunk before a worker has started."""
    monkeypatch.setattr(parallel.threading, "active_count", lambda: 1)
    here = os.getpid()
    checked = multiprocessing.get_context("fork").Array("i", 2)  # [here, in a worker]
    real = run_module.check_file

    def noting(path, **kwargs):
        checked[os.getpid() != here] = 1
        if os.getpid() == here and parallel._job is not None:
            until(lambda: checked[1], "no worker checked a file")
        return real(path, **kwargs)

    monkeypatch.setattr(run_module, "check_file", noting)
    return checked


@pytest.mark.slow
@forks
@pytest.mark.parametrize("mode", list(Mode))
def test_workers_report_what_one_process_reports(tree, mode, monkeypatch, forking):
    monkeypatch.setattr(parallel, "CHUNK", 4)  # many chunks, some for each process
    targets = targets_for(MIGRATION, Options(mode=mode))
    args = ([tree], targets, CheckConfig())
    serial = check_paths(*args, fixes=True, processes=1)
    assert len(serial) > 100
    assert sum(r.fixed is not None for r in serial) > 10
    forking[:] = [0, 0]
    assert check_paths(*args, fixes=True, processes=2) == serial
    assert list(forking) == [1, 1]  # checked here and in a worker


def test_every_checker_can_be_loaded_before_workers_are_forked():
    for entry in {e for entries in KINDS.values() for e in entries}:
        assert callable(checker(entry))


KIND = """
from wbmigrate.check.model import Checked, Lines, Rule


def check_ini(label, text, targets):
    at = text.index("off_policy/mean")
    return Checked([Lines(text).finding(label, at, at + 15, Rule.NEEDS_REVIEW, "in an INI file")])
"""


@forks
def test_a_kind_registered_as_the_docs_say_is_checked_by_workers(tmp_path, monkeypatch, forking):
    """A new file kind: a checker `(label, text, targets) -> Checked` in a module, and its
    "module:function" entry in `check.run.KINDS` under its "*.suffix" (or file name)."""
    (tmp_path / "ini_kind.py").write_text(KIND)
    monkeypatch.syspath_prepend(tmp_path)
    monkeypatch.setitem(KINDS, "*.ini", ("ini_kind:check_ini",))
    monkeypatch.setattr(run_module, "cores", lambda: 2)  # the pool, whatever this machine has
    monkeypatch.setattr(parallel, "CHUNK", 4)  # many chunks, some for each process
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(run_module.PARALLEL_FILES + 20):
        (tree / f"run{i}.ini").write_text("[panel]\nmetric = off_policy/mean\n")
    forking[:] = [0, 0]
    reports = check_paths([tree], targets_for(MIGRATION, Options()), CheckConfig())
    assert list(forking) == [1, 1]  # checked here and in a worker
    assert len(reports) == run_module.PARALLEL_FILES + 20
    for report in reports:
        assert [(f.rule, f.line, f.message) for f in report.findings] == [
            (Rule.NEEDS_REVIEW, 2, "in an INI file")
        ]


def test_a_small_tree_is_checked_here():
    assert run_module._processes(run_module.PARALLEL_FILES - 1) == 1


@pytest.mark.slow
@forks
@pytest.mark.parametrize("args", [["--format", "json"], ["--format", "text"], ["--fix"]])
def test_check_prints_and_writes_the_same_with_workers(
    run, tree, tmp_path, monkeypatch, args, forking
):
    monkeypatch.setattr(run_module, "_processes", lambda files: 1)
    monkeypatch.setattr(parallel, "CHUNK", 4)
    copy = tmp_path.parent / f"{tmp_path.name}-copy"
    shutil.copytree(tree, copy)
    serial = run("check", ".", *args)
    monkeypatch.setattr(run_module, "_processes", lambda files: 2)
    monkeypatch.chdir(copy)
    forking[:] = [0, 0]
    forked = run("check", ".", *args)
    assert list(forking) == [1, 1]  # checked here and in a worker
    assert (forked.exit_code, forked.stdout, forked.stderr) == (
        serial.exit_code,
        serial.stdout,
        serial.stderr,
    )
    assert _contents(copy) == _contents(tree)


def _contents(root):
    return {
        path.relative_to(root): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }
