"""Progress of a real `kafka-migrate run` where users see it: stderr in a pipe (cron, CI, nohup, 2>file)
and on a terminal (a pseudo-terminal), against real brokers and a real spark-submit.

Reports come every half second here ($KAFKA_MIGRATION_PROGRESS_SECONDS), so that a copy of a few
seconds reports while it runs; the default is every 5 s in a pipe, every second on a terminal.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.seed import create_topic, producer, send

pytestmark = [pytest.mark.integration, pytest.mark.spark]

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")
RECORDS = 200_000


def _seed(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic, 2)
    p = producer(bootstrap)
    for i in range(RECORDS):
        send(p, topic, i % 2, None, b"v" * 100)
        if i % 20_000 == 0:
            p.poll(0)
    p.flush(60)


def _command(clusters, topic: str, state_dir: Path) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        KAFKA_MIGRATE,
        "run",
        "--source",
        clusters.source,
        "--target",
        clusters.target,
        "--include",
        topic,
        "--rename",
        "progress.{topic}",
        "--state-dir",
        str(state_dir),
    ]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    env["KAFKA_MIGRATION_PROGRESS_SECONDS"] = "0.5"
    return env


def test_progress_in_a_pipe_is_plain_whole_lines_while_it_runs(clusters, unique: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    topic = f"piped{unique}"
    _seed(clusters.source, topic)
    process = subprocess.Popen(
        _command(clusters, topic, tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    arrived: list[tuple[float, str]] = []
    assert process.stderr is not None
    for line in process.stderr:  # read as it comes, as `2>file` or a CI log would
        arrived.append((time.monotonic(), line.rstrip("\n")))
    stdout = process.stdout.read() if process.stdout else ""
    assert process.wait(timeout=300) == 0, stdout + "\n".join(line for _, line in arrived)
    finished = time.monotonic()
    lines = [line for _, line in arrived]
    assert not any("\x1b" in line or "\r" in line or "━" in line for line in lines), lines  # no terminal codes
    assert any(line.startswith("Spark is starting (") for line in lines), lines  # while Spark starts, too
    assert any(re.fullmatch(r"Spark is up after [\d.]+ s\.", line) for line in lines), lines
    during = [
        (at, line)
        for at, line in arrived
        if re.fullmatch(
            r"(copy|verify): [\d,]+ of 200,000 records \(\d+%\), [\d,]+ records/s, \d of 1 topic done, "
            r"\d+:\d\d elapsed",
            line,
        )
    ]
    assert during, lines  # records, rate and topics, every few seconds, whole (no width to cut them to)
    counts = [int(line.split(":")[1].split(" of ")[0].replace(",", "")) for _, line in during]
    assert any(0 < n < RECORDS for n in counts), lines  # it moved during the copy, not only at the end
    assert all(at < finished for at, _ in during)
    done = [line for line in lines if ": done, " in line]
    assert [line.split(",")[0] for line in done] == ["copy: done", "verify: done"], lines
    assert all(re.fullmatch(r"\w+: done, 200,000 of 200,000 records, 1 of 1 topic, in \d+:\d\d", x) for x in done)
    assert lines[-1] == done[-1]
    assert "verified: every partition matches" in stdout


def _read_pty(fd: int, process: subprocess.Popen[bytes], timeout: float) -> list[tuple[float, bytes]]:
    chunks: list[tuple[float, bytes]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # the terminal closed: the process is gone
                break
            if not data:
                break
            chunks.append((time.monotonic(), data))
        elif process.poll() is not None:
            break
    return chunks


def test_progress_on_a_terminal_moves_during_the_copy(clusters, unique: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    topic = f"tty{unique}"
    _seed(clusters.source, topic)
    controller, terminal = pty.openpty()
    os.set_blocking(controller, False)
    env = {**_env(), "COLUMNS": "100", "LINES": "40", "TERM": "xterm"}
    process = subprocess.Popen(
        _command(clusters, topic, tmp_path), stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal, env=env
    )
    os.close(terminal)
    try:
        chunks = _read_pty(controller, process, timeout=300)
    finally:
        os.close(controller)
    assert process.wait(timeout=60) == 0, b"".join(c for _, c in chunks).decode(errors="replace")[-3000:]
    screen = b"".join(c for _, c in chunks).decode(errors="replace")
    assert "━" in screen and "starting" in screen  # bars, Spark's start-up among them
    shown = [int(n.replace(",", "")) for n in re.findall(r"([\d,]+)/200,000 records", screen)]
    assert any(0 < n < RECORDS for n in shown), screen[-3000:]  # the bar moved during the copy
    assert shown[-1] == RECORDS and "1/1 topic" in screen
    assert "verified: every partition matches" in screen


# log4j's pattern for Spark's own lines ("26/11/25 23:21:20 INFO SparkContext: Running Spark version 4.3.0")
SPARK_INFO = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d INFO [\w.$]+: ")


def test_verbose_output_leaves_sparks_info_out_unless_asked(clusters, unique: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`run -v` shows the driver's output; Spark's own INFO start-up only with KAFKA_MIGRATION_SPARK_LOG_LEVEL=INFO."""
    p = producer(clusters.source)
    for topic in (f"logq{unique}", f"logl{unique}"):
        create_topic(clusters.source, topic, 1)
        for i in range(5):
            send(p, topic, 0, f"k{i}".encode(), b"v")
    p.flush(10)

    def verbose(topic: str, level: str | None) -> list[str]:
        env = _env()
        if level:
            env["KAFKA_MIGRATION_SPARK_LOG_LEVEL"] = level
        command = [*_command(clusters, topic, tmp_path), "-v"]
        done = subprocess.run(command, check=False, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stderr.splitlines()

    quiet = verbose(f"logq{unique}", None)
    first = next(i for i, line in enumerate(quiet) if "INFO kafka_migration.spark" in line)  # the driver's first line
    assert [line for line in quiet[:first] if SPARK_INFO.match(line)] == []
    assert not any(SPARK_INFO.match(line) for line in quiet), [line for line in quiet if SPARK_INFO.match(line)]
    loud = verbose(f"logl{unique}", "INFO")
    first = next(i for i, line in enumerate(loud) if "INFO kafka_migration.spark" in line)
    assert any(SPARK_INFO.match(line) and "SparkContext: Running Spark version" in line for line in loud[:first])
