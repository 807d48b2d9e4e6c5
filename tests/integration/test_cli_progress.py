"""Progress of a real `kafka-migrate run` where users see it: stderr in a pipe (cron, CI, nohup, 2>file)
and on a terminal (a pseudo-terminal), against real brokers and a real spark-submit.

Reports come every half second here ($KAFKA_MIGRATION_PROGRESS_SECONDS), so that a copy of a few
seconds reports while it runs; the default is every 5 s in a pipe, every second on a terminal.

That the progress moves while the copy runs holds only if the copy lasts a while, on any machine: the two
progress tests copy from the session's proxied source (tests/conftest.py), slowed on purpose.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.data.seed import create_topic, producer, send
from tests.conftest import LATENCY, SLOW_READS, SMALL_BATCHES, Clusters, ProxiedPair

pytestmark = [pytest.mark.integration, pytest.mark.spark]

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")
# 3,000 records of 2 partitions from the slowed source: about 30 records a fetch (4 KB), a round trip of
# 2 x 50 ms a fetch, so 1,500 / 30 = 50 fetches a partition: the copy takes 5 s at least (and so does the
# verification, which reads the source again), ten progress reports or so, however fast the machine.
RECORDS = 3_000
SHOWN = f"{RECORDS:,}"


def _seed(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic, 2)
    p = producer(bootstrap, **SMALL_BATCHES)  # small batches: the source's 4 KB fetches hold one each
    for i in range(RECORDS):
        send(p, topic, i % 2, f"key-{i}".encode(), b"v" * 100, headers=[("i", str(i).encode())])
    p.flush(60)


def _command(clusters, topic: str, state_dir: Path, *options: str) -> list[str]:  # type: ignore[no-untyped-def]
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
        *options,
    ]


def _slowed(pair: ProxiedPair, topic: str, state_dir: Path) -> list[str]:
    """Seed ``topic`` on the proxied source, slow the source down, and return the command that copies it from
    there with SLOW_READS (tests/conftest.py: the ``proxied`` fixture takes the latency off again)."""
    source, target = pair
    _seed(source.bootstrap, topic)
    source.proxy.set_latency(LATENCY)
    state_dir.mkdir(parents=True, exist_ok=True)
    config = state_dir / "source.json"
    config.write_text(json.dumps(SLOW_READS))
    addresses = Clusters(source.bootstrap, target.bootstrap)
    return _command(addresses, topic, state_dir, "--source-config", str(config))


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    env["KAFKA_MIGRATION_PROGRESS_SECONDS"] = "0.5"
    return env


def test_progress_in_a_pipe_is_plain_whole_lines_while_it_runs(
    proxied: ProxiedPair, unique: str, tmp_path: Path
) -> None:
    command = _slowed(proxied, f"piped{unique}", tmp_path)
    process = subprocess.Popen(
        command,
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
            rf"(copy|verify): [\d,]+ of {SHOWN} records \(\d+%\), [\d,]+ records/s, \d of 1 topic done, "
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
    assert all(re.fullmatch(rf"\w+: done, {SHOWN} of {SHOWN} records, 1 of 1 topic, in \d+:\d\d", x) for x in done)
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


def test_progress_on_a_terminal_moves_during_the_copy(proxied: ProxiedPair, unique: str, tmp_path: Path) -> None:
    command = _slowed(proxied, f"tty{unique}", tmp_path)
    controller, terminal = pty.openpty()
    os.set_blocking(controller, False)
    env = {**_env(), "COLUMNS": "100", "LINES": "40", "TERM": "xterm"}
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal, env=env)
    os.close(terminal)
    try:
        chunks = _read_pty(controller, process, timeout=300)
    finally:
        os.close(controller)
    assert process.wait(timeout=60) == 0, b"".join(c for _, c in chunks).decode(errors="replace")[-3000:]
    screen = b"".join(c for _, c in chunks).decode(errors="replace")
    assert "━" in screen and "starting" in screen  # bars, Spark's start-up among them
    shown = [int(n.replace(",", "")) for n in re.findall(rf"([\d,]+)/{SHOWN} records", screen)]
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
