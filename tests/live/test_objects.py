"""Live objects: listings read ahead in threads, errors and early stops handed on."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from wbmigrate.live.objects import _read_ahead


def test_reading_ahead_hands_on_items_and_errors_in_order():
    stop = threading.Event()

    def items():
        yield from range(5)
        raise ValueError("page 2 failed")

    stream = _read_ahead(items(), 2, stop)
    assert [next(stream) for _ in range(5)] == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="page 2 failed"):
        next(stream)


def test_a_reader_ahead_ends_when_the_consumer_stops():
    stop = threading.Event()
    produced = []

    def items():
        for n in itertools.count():
            produced.append(n)
            yield n

    stream = _read_ahead(items(), 3, stop)
    assert next(stream) == 0
    stop.set()
    time.sleep(0.3)
    settled = len(produced)
    time.sleep(0.3)
    assert len(produced) == settled <= 5  # bounded by the queue, then stopped
