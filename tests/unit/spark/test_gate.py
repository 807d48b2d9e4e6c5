"""kafka_migration.spark.gate: the launcher's words on the FIFO, as a driver reads them (no Spark).

The launcher holds the FIFO open read-write (spark/submit.py); these tests do the same with ``os.open``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from kafka_migration.spark.gate import Gate, ready_line


def _fifo(tmp_path: Path) -> tuple[Path, int]:
    path = tmp_path / "go"
    os.mkfifo(path, 0o600)
    return path, os.open(path, os.O_RDWR)


def _say(fd: int, *words: str) -> None:
    os.write(fd, "".join(f"{w}\n" for w in words).encode())


def _in_thread(call: object) -> tuple[threading.Thread, list[object]]:
    answer: list[object] = []
    thread = threading.Thread(target=lambda: answer.append(call()))  # type: ignore[operator]
    thread.start()
    return thread, answer


class TestFirstWord:
    def test_go_written_before_the_driver_looks_releases_everything(self, tmp_path: Path) -> None:
        path, fd = _fifo(tmp_path)
        _say(fd, "go")  # the driver was slower than the plan: the line waits in the FIFO
        gate = Gate(path)
        assert gate.first() is True
        assert gate.wait_for(10**9) is True
        os.close(fd)

    def test_abort_a_vanished_launcher_and_an_unknown_word_all_mean_stop(self, tmp_path: Path) -> None:
        path, fd = _fifo(tmp_path)
        thread, answer = _in_thread(lambda: Gate(path).first())
        _say(fd, "abort")
        thread.join(10)
        assert answer == [False]
        _say(fd, "ready 3")  # not a first word
        assert Gate(path).first() is False
        thread, answer = _in_thread(lambda: Gate(path).first())
        os.close(fd)  # the launcher is gone (or closed without a word): end of file
        thread.join(10)
        assert answer == [False]
        assert Gate(path).first() is False  # no launcher at all: nothing to wait for


class TestRelease:
    """After ``plan``, topics are released a prefix of the run order at a time."""

    def test_each_wait_returns_once_its_topics_are_released_and_not_before(self, tmp_path: Path) -> None:
        path, fd = _fifo(tmp_path)
        _say(fd, "plan")
        gate = Gate(path)
        assert gate.first() is True
        thread, answer = _in_thread(lambda: gate.wait_for(5))
        _say(fd, ready_line(4))
        thread.join(0.5)
        assert thread.is_alive() and answer == []  # 4 of the 5 it needs
        _say(fd, ready_line(5))
        thread.join(10)
        assert answer == [True]
        assert gate.wait_for(3) is True  # released before: at once
        thread, answer = _in_thread(lambda: gate.wait_for(50))
        _say(fd, "go")  # every topic
        thread.join(10)
        assert answer == [True]
        _say(fd, "abort")  # after go the driver no longer listens: nothing is taken back
        assert gate.wait_for(10**6) is True
        os.close(fd)

    @pytest.mark.parametrize("last", ["abort", None, "ready x"], ids=["abort", "end-of-file", "unknown-word"])
    def test_a_launcher_that_stops_or_vanishes_before_go_stops_the_waits(
        self, tmp_path: Path, last: str | None
    ) -> None:
        path, fd = _fifo(tmp_path)
        _say(fd, "plan", ready_line(2))
        gate = Gate(path)
        assert gate.first() is True
        assert gate.wait_for(2) is True
        thread, answer = _in_thread(lambda: gate.wait_for(3))
        if last is None:
            os.close(fd)
        else:
            _say(fd, last)
        thread.join(10)
        assert answer == [False]
        assert gate.wait_for(1) is False  # stopped: nothing more starts, released or not
        if last is not None:
            os.close(fd)
