"""kafka_migration.spark.gate: the launcher's words on the FIFO, as a driver reads them (no Spark).

The launcher holds the FIFO open read-write (spark/submit.py); these tests do the same with ``os.open``.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from kafka_migration.spark import gate as gate_module
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


class TestCensus:
    """Before its first word the launcher may ask for censuses of the source records (run/census.py)."""

    def test_each_census_word_is_answered_then_the_first_word_decides(self, tmp_path: Path) -> None:
        path, fd = _fifo(tmp_path)
        answered: list[int] = []
        _say(fd, "census", "census", "plan", ready_line(1))
        gate = Gate(path)
        assert gate.first(lambda: answered.append(len(answered))) is True
        assert answered == [0, 1] and gate.wait_for(1) is True
        _say(fd, "go")
        os.close(fd)
        (tmp_path / "again").mkdir()
        path, fd = _fifo(tmp_path / "again")
        _say(fd, "census", "abort")
        assert Gate(path).first(lambda: answered.append(2)) is False and answered == [0, 1, 2]
        os.close(fd)

    def test_a_driver_that_cannot_take_a_census_stops(self, tmp_path: Path) -> None:
        path, fd = _fifo(tmp_path)
        _say(fd, "census", "go")
        assert Gate(path).first() is False  # a word it does not know: stop, writing nothing
        os.close(fd)


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

    @pytest.mark.parametrize(
        "last", ["abort", None, "ready x", "launch 3"], ids=["abort", "end-of-file", "no-count", "unknown-word"]
    )
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


class TestReading:
    def test_nothing_is_released_before_the_first_ready_word(self, tmp_path: Path) -> None:
        path, fd = _fifo(tmp_path)
        _say(fd, "plan")
        gate = Gate(path)
        assert gate.first() is True
        thread, answer = _in_thread(lambda: gate.wait_for(1))
        thread.join(0.3)
        assert thread.is_alive() and answer == []
        _say(fd, ready_line(1))
        thread.join(10)
        assert answer == [True]
        _say(fd, "go")
        os.close(fd)

    def test_a_word_written_in_pieces_a_while_apart_is_read_whole(self, tmp_path: Path) -> None:
        path, fd = _fifo(tmp_path)
        _say(fd, "plan")
        gate = Gate(path)
        assert gate.first() is True
        thread, answer = _in_thread(lambda: gate.wait_for(12))
        os.write(fd, b"rea")
        time.sleep(1.3)  # longer than the reader's poll: it finds nothing new in between
        os.write(fd, b"dy 12\n")
        thread.join(10)
        assert answer == [True]
        _say(fd, "go")
        os.close(fd)

    def test_unreadable_bytes_mean_stop(self, tmp_path: Path) -> None:
        path, fd = _fifo(tmp_path)
        os.write(fd, b"\xff\xfego\n")
        assert Gate(path).first() is False
        os.close(fd)

    @pytest.mark.parametrize("words", [["go"], ["abort"], ["plan", "go"], ["plan", "ready 1", "abort"]])
    def test_the_driver_leaves_no_descriptor_of_the_fifo_open(self, tmp_path: Path, words: list[str]) -> None:
        path, fd = _fifo(tmp_path)
        before = _fifo_descriptors(path)
        _say(fd, *words)
        gate = Gate(path)
        gate.first()
        gate.wait_for(10**6)  # returns once the launcher's last word is read
        deadline = time.monotonic() + 5
        while _fifo_descriptors(path) - before and time.monotonic() < deadline:
            time.sleep(0.05)  # the reading thread closes it right after the word
        assert _fifo_descriptors(path) - before == set()
        os.close(fd)

    def test_a_reading_error_stops_the_waits_and_is_logged(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
    ) -> None:
        path, fd = _fifo(tmp_path)
        _say(fd, "plan")
        gate = Gate(path)
        assert gate.first() is True

        def broken(*_: object) -> bytes:
            raise OSError(5, "Input/output error")

        monkeypatch.setattr(gate_module.os, "read", broken)
        _say(fd, ready_line(1))
        assert gate.wait_for(1) is False
        os.close(fd)
        assert caplog.messages == [
            "could not read the launcher's word ([Errno 5] Input/output error): starting nothing more"
        ]


def test_a_driver_that_ends_while_topics_are_still_coming_is_not_held_by_the_reader(tmp_path: Path) -> None:
    """A driver that fails (or is done) before the launcher's go exits at once: the reading thread does not keep
    its interpreter alive until the launcher's next word."""
    import subprocess
    import sys

    path, fd = _fifo(tmp_path)
    _say(fd, "plan")
    code = f"from kafka_migration.spark.gate import Gate; assert Gate({str(path)!r}).first(); raise SystemExit(7)"
    driver = subprocess.Popen([sys.executable, "-c", code])
    try:
        assert driver.wait(timeout=30) == 7
    finally:
        driver.kill()
        os.close(fd)  # the launcher holds the FIFO open, without a word, all along


def _fifo_descriptors(path: Path) -> set[str]:
    """This process's open descriptors of ``path`` only: other threads of the test process (a client library's
    reconnecting sockets, left by an earlier test) open and close descriptors of their own meanwhile."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path.resolve()):
                found.add(fd)
        except OSError:  # closed meanwhile
            continue
    return found
