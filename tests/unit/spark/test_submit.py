"""The output of spark-submit is read to its end, whatever happens to the caller's own output."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from kafka_migration.spark.submit import drain


def test_output_is_drained_to_its_end_after_the_callers_printing_fails(caplog: pytest.LogCaptureFixture) -> None:
    # Far more than a pipe holds (64 KiB): a reader that stopped would leave the child blocked on a write.
    child = subprocess.Popen(
        [sys.executable, "-c", "for i in range(100_000): print(f'line {i:06d} of Spark output')"],
        stdout=subprocess.PIPE,
        text=True,
    )
    kept: list[str] = []
    printed: list[str] = []

    def on_line(line: str) -> None:
        printed.append(line)
        raise ValueError("I/O operation on closed file.")  # what print() says once the terminal is gone

    assert child.stdout is not None
    reader = threading.Thread(target=drain, args=(child.stdout, kept.append, on_line), daemon=True)
    reader.start()
    assert child.wait(timeout=60) == 0
    reader.join(timeout=60)
    assert not reader.is_alive()
    assert printed == ["line 000000 of Spark output"]  # given up on after its first failure
    assert len(kept) == 100_000 and kept[-1] == "line 099999 of Spark output"
    assert "No longer passing Spark's output on (I/O operation on closed file.)" in caplog.text


def test_a_stopped_application_leaves_no_process_even_one_that_ignores_the_request_to_stop() -> None:
    """abort's clean-up: the processes under spark-submit (its Python driver, their workers) end with it; one
    that ignores SIGTERM, as a driver stuck on its dead JVM's socket would never read its FIFO, is killed."""
    import psutil

    from kafka_migration.spark.processes import descendants as _descendants
    from kafka_migration.spark.processes import end_all as _end

    stubborn = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
        "time.sleep(300)"
    )
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {stubborn!r}]); time.sleep(300)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None and parent.stdout.readline().strip() == "ready"  # the child ignores SIGTERM now
    children = _descendants(parent.pid)
    assert len(children) == 1
    parent.terminate()
    parent.wait(10)
    assert children[0].is_running()  # orphaned, as a driver whose JVM was killed
    _end(children, grace=0.5)
    assert not children[0].is_running() or children[0].status() == psutil.STATUS_ZOMBIE
    assert _descendants(parent.pid) == []  # a process that has gone has none
