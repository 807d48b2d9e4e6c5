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
