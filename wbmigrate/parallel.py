"""Planning spec files on every core: each file is read, parsed and planned in a worker
process, and the plans come back in the files' order, without the specs (a report needs only
the changes and notes).

Planning is pure CPU, so threads would not help. Workers are forked, inheriting the mapping
instead of being sent it; where `fork` is not the safe default (macOS, Windows), or for a few
files, the files are planned in this process, as they were before.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from wbmigrate.engine.model import Options
from wbmigrate.files import read_source
from wbmigrate.mapping import Migration
from wbmigrate.plan import Planned, plan_one
from wbmigrate.rewrite import UNPARSED

MIN_BYTES = 4 * 1024 * 1024  # below this, starting the workers costs more than they save
CHUNK = 4  # files sent to a worker at a time

_job: tuple[Migration, Options, bool] | None = None  # what forked workers plan with


def plan_paths(
    paths: Sequence[Path], named: bool, migration: Migration, options: Options
) -> Iterator[Planned]:
    """The plan of each spec file among `paths`, in order (files that are no spec skipped)."""
    done = 0
    workers = _workers(paths)
    if workers > 1:
        global _job
        _job = (migration, options, named)
        try:
            with multiprocessing.get_context("fork").Pool(workers, _quiet) as pool:
                for planned in pool.imap(_in_worker, paths, chunksize=CHUNK):
                    done += 1
                    if planned is not None:
                        yield planned
        except Exception:  # a worker's answer that could not be sent back (nested too deeply
            pass  # to pickle): that file and the rest are planned here, below
        finally:
            _job = None
    for path in paths[done:]:
        planned = _plan_path(path, named, migration, options)
        if planned is not None:
            yield planned


def _workers(paths: Sequence[Path]) -> int:
    # Forking while another thread runs (a test's server) could copy a lock it holds.
    if sys.platform != "linux" or len(paths) < 2 * CHUNK or threading.active_count() > 1:
        return 1
    try:
        size = sum(path.stat().st_size for path in paths)
    except OSError:
        return 1  # said per file, by the serial path
    return min(len(os.sched_getaffinity(0)), len(paths) // CHUNK) if size >= MIN_BYTES else 1


def _quiet() -> None:
    """Ctrl-C is this process's to handle: it stops the workers, which say nothing."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _in_worker(path: Path) -> Planned | None:
    assert _job is not None
    migration, options, named = _job
    planned = _plan_path(path, named, migration, options)
    return None if planned is None else _slim(planned)


def _plan_path(path: Path, named: bool, migration: Migration, options: Options) -> Planned | None:
    source = read_source(path, named)
    return None if source is None else plan_one(source, migration, options)


def _slim(planned: Planned) -> Planned:
    """What a report needs of a plan, to send back: not the spec or its text."""
    source = dataclasses.replace(planned.source, text="", document=UNPARSED)
    result = planned.result and dataclasses.replace(planned.result, original=None)
    return dataclasses.replace(planned, source=source, result=result)
