"""``make clusters`` / ``make clusters-stop`` with WHICH: one practice cluster stopped, started again or killed while
the other keeps running, and the log saying why it is down (harness.kafka.background, single, supervisor, control).

A pair of its own, started the way make starts it (``python -m harness.kafka up``, the supervisor left in the
background) but in a temporary folder on free ports: never make's ``.clusters`` or 19092/29092.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from harness.data.app import produce
from harness.data.read import read_partition
from harness.kafka import background
from harness.servers.ports import free_port
from tests.unit.compose_file import REPO


def _harness(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "harness.kafka", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    print(done.stdout, done.stderr)
    return done


def _topics(bootstrap: str) -> set[str]:
    """Metadata from the cluster: it answers."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 5000})
    return set(admin.list_topics(timeout=10).topics)


def _listens(bootstrap: str) -> bool:
    host, port = bootstrap.split(":")
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) == 0


def _jvms(directory: Path) -> dict[str, int]:
    """The broker JVMs started from ``directory``: cluster name -> pid (their command line names server.properties)."""
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            words = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        for word in words:
            if word.startswith(str(directory)) and word.endswith("/server.properties"):
                found[Path(word).parent.name] = int(proc.name)
    return found


def _log_line(log: Path, pattern: str, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        found = re.search(pattern, log.read_text(), flags=re.M)
        if found:
            return found.group(0)
        assert time.monotonic() < deadline, f"no line like {pattern!r} in {log}:\n{log.read_text()}"
        time.sleep(0.2)


@pytest.fixture
def practice(tmp_path: Path, kafka_jars: Path) -> Iterator[Path]:
    """A practice pair in the background, as ``make clusters`` starts it; stopped whatever the test does."""
    directory = tmp_path / "clusters"
    try:
        started = _harness("up", "--dir", str(directory), "--ports", f"{free_port()},{free_port()}")
        assert started.returncode == 0, started.stdout + started.stderr
        yield directory
    finally:
        _harness("down", "--dir", str(directory))
    assert not directory.exists()
    assert _jvms(directory) == {}, "down left a broker running"


@pytest.mark.integration
def test_the_target_stops_starts_again_and_dies_alone(practice: Path, unique: str) -> None:
    source, target = (
        json.loads((practice / f"{n}.json").read_text())["bootstrap.servers"] for n in ("source", "target")
    )
    log = practice / "clusters.log"
    again = f"python -m harness.kafka up --which target --dir {practice}"
    topic = f"practice{unique}"
    admin = AdminClient({"bootstrap.servers": target})  # held until the answer is in
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=20)
    produce(target, topic, 25)

    refused = _harness("down", "--which", "tagret", "--dir", str(practice))
    assert (refused.returncode, refused.stdout) == (
        2,
        f"error: the clusters of {practice} are source and target; there is none named 'tagret'\n",
    )

    # A clean stop of the target alone: the source answers, the log says why the target is down.
    stopped = _harness("down", "--which", "target", "--dir", str(practice))
    assert stopped.returncode == 0
    assert stopped.stdout.startswith("Stopped target (a clean shutdown, exit code 143); source keeps running."), stopped
    assert not _listens(target)
    _topics(source)  # the source answers metadata (this raises otherwise)
    _log_line(
        log,
        rf"^\S+ target \({target}\) stopped on request: a clean shutdown, exit code 143 \(SIGTERM\); "
        rf"source keeps running; start it again with: {re.escape(again)}$",
    )
    assert set(_jvms(practice / "data")) == {"source"}

    # Started again on its data: its topic and records are kept.
    started = _harness("up", "--which", "target", "--dir", str(practice))
    assert started.returncode == 0
    assert f"target runs again: {target}" in started.stdout
    assert topic in _topics(target)
    assert [r["value"] for r in read_partition(target, topic, 0)] == [
        f"record {i} of the tutorial".encode() for i in range(25)
    ]

    # Killed (SIGKILL): the log names it, its exit code and the way back; the source keeps running.
    os.kill(_jvms(practice / "data")["target"], signal.SIGKILL)
    line = _log_line(log, rf"^\S+ target \({target}\) exited with code -9 \(SIGKILL\), not on request; .*$")
    assert f"source keeps running; start it again with: {again}. Its broker's log: " in line
    _topics(source)  # the source answers metadata (this raises otherwise)
    assert json.loads((practice / "data" / "target.state").read_text())["state"] == "exited"
    told = _harness("down", "--which", "target", "--dir", str(practice))
    assert told.returncode == 0 and told.stdout.startswith("target does not run (exited at "), told.stdout

    # A plain 'up' on the running pair starts again whichever is down, and returns once it serves.
    restarted = _harness("up", "--dir", str(practice))
    assert restarted.returncode == 0 and f"target runs again: {target}" in restarted.stdout
    assert topic in _topics(target)


def test_which_without_a_running_pair_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for act in (lambda: background.down(tmp_path, which="target"), lambda: background.up(tmp_path, "", "", "target")):
        assert act() == 2
        assert capsys.readouterr().out == (
            f"error: no clusters of {tmp_path} run: start both with python -m harness.kafka up --dir {tmp_path} first\n"
        )
    assert background.command(background.STATE, "down", "target") == "make clusters-stop WHICH=target"


@pytest.mark.parametrize(
    ("target", "which", "command"),
    [
        ("clusters-stop", "target", "-m harness.kafka down --which target"),
        ("clusters-stop", "", "-m harness.kafka down"),
        ("clusters", "source", "-m harness.kafka up --kind plaintext --ports 19092,29092 --which source"),
    ],
)
def test_make_passes_which_on(target: str, which: str, command: str) -> None:
    # make -n prints the recipes without running them (the clusters' prerequisites too, when out of date).
    printed = subprocess.run(
        ["make", "-n", "--no-print-directory", target, *([f"WHICH={which}"] if which else [])],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert printed.stdout.splitlines()[-1].endswith(command)
