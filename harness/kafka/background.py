"""``make clusters`` / ``make clusters-stop``: a local source and target in the background, for the tutorial and
for trying the tool by hand. ``up`` runs ``python -m harness.kafka start`` detached, waits until it prints that
both clusters serve, writes their settings files, and prints what to pass to kafka-migrate; ``down`` stops it
(SIGTERM: the brokers shut down cleanly) and keeps nothing.

With ``which`` (``make clusters[-stop] WHICH=target``) they start or stop that cluster alone, on its data, through
the running supervisor (harness.kafka.supervisor, harness.kafka.control); the other keeps running. Without it,
``up`` also starts again whichever cluster of a running pair is down."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from harness.kafka import control
from harness.kafka.control import RUNNING
from harness.kafka.security import write_private
from harness.kafka.single import STATE, command, start_one, state_of, stop_one
from harness.servers.lifetime import stop_group

__all__ = ["STATE", "down", "up"]

READY_TIMEOUT = 180.0  # seconds; two brokers start in 10-30 s here
PASSWORDS = "scram-passwords.json"  # KIND=acl: the SCRAM passwords of the source's users, for --credentials


def _pid(directory: Path) -> int | None:
    try:
        pid = int((directory / "pid").read_text())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def up(directory: Path, kind: str, ports: str, which: str | None = None) -> int:
    """Start both clusters unless they run already (then start again whichever is down); print their addresses.
    Exit 0 once both serve. With ``which``: start that cluster of the running pair again, on its data."""
    pid = _pid(directory)
    if which is not None:
        return start_one(directory, pid, which)
    if pid is not None:
        down = [name for name in control.names(directory / "data") if state_of(directory, name) != RUNNING]
        failed = [name for name in down if start_one(directory, pid, name) != 0]
        if not failed:
            print(f"The clusters of {directory} {'run' if down else 'already run'}:")
            print((directory / "clusters.txt").read_text(), end="")
        return 3 if failed else 0
    busy = [p for p in ports.split(",") if _in_use(int(p))]
    if busy:
        print(f"error: port {', '.join(busy)} is in use; stop what listens there, or give other ports (PORTS=...)")
        return 2
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    log = (directory / "clusters.log").open("w")
    start = [sys.executable, "-m", "harness.kafka", "start", "--kind", kind, "--ports", ports]
    start += ["--dir", str(directory / "data"), "--again", command(directory, "up", "{name}")]
    process = subprocess.Popen(start, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    (directory / "pid").write_text(str(process.pid))
    lines = _wait_ready(directory / "clusters.log", process)
    if lines is None:
        print(f"error: the clusters did not start; their log is {directory / 'clusters.log'}")
        stop_group(process.pid, 60)
        return 3
    text = []
    for cluster in lines:
        name, settings = cluster["name"], json.loads(Path(cluster["settings"]).read_text())
        write_private(directory / f"{name}.json", json.dumps(settings, indent=2) + "\n")
        text.append(f"{name}: {settings['bootstrap.servers']}  (settings: {directory / f'{name}.json'})")
    (directory / "clusters.txt").write_text("\n".join(text) + "\n")
    seeded = _seed_access(directory, process) if kind == "acl" else ""
    if seeded is None:
        return 3
    print(f"{'An' if kind[0] in 'aeiou' else 'A'} {kind} source and target run in the background:")
    print("\n".join(text))
    if kind != "plaintext":
        print(f"Pass --source-config {directory / 'source.json'} --target-config {directory / 'target.json'}.")
    if seeded:
        print(seeded)
    print(f"Stop them with: {command(directory, 'down')} (one alone: {command(directory, 'down', 'target')})")
    return 0


def _seed_access(directory: Path, process: subprocess.Popen[bytes]) -> str | None:  # type: ignore[type-arg]
    """KIND=acl: the source's users, bindings and quotas (harness.data.access), their passwords in PASSWORDS; what
    to tell the user, or None (the clusters stopped) when the source would not take them."""
    from harness.data.access import seed_access

    passwords = directory / PASSWORDS
    try:
        seeded = seed_access(json.loads((directory / "source.json").read_text()), passwords)
    except Exception as failed:  # any failure leaves the pair unusable for the practice: say it, stop them
        print(f"error: the source did not take its users, bindings and quotas: {failed}")
        stop_group(process.pid, 60)
        return None
    return (
        f"The source holds {seeded.describe()} to move with kafka-migrate access sync; "
        f"the users' passwords: {passwords} (docs/access.md, Practise on two local clusters)."
    )


def _in_use(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _wait_ready(log: Path, process: subprocess.Popen[bytes]) -> list[dict] | None:  # type: ignore[type-arg]
    """The clusters' JSON lines once ``start`` printed them all, or None when it exited or took too long."""
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None:
        lines = log.read_text().splitlines()
        if any(line.startswith("logs and data in ") for line in lines):
            return [json.loads(line) for line in lines if line.startswith("{")]
        time.sleep(0.5)
    return None


def down(directory: Path, quiet: bool = False, which: str | None = None) -> int:
    """Stop the clusters (their brokers shut down cleanly) and remove their folder; with ``which``, only that one
    (its data kept, to start again)."""
    pid = _pid(directory)
    if which is not None:
        return stop_one(directory, pid, which)
    if pid is None:
        if not quiet:
            print(f"No clusters of {directory} run.")
        shutil.rmtree(directory, ignore_errors=True)
        return 0
    stop_group(pid, 60)
    shutil.rmtree(directory, ignore_errors=True)
    if not quiet:
        print("Stopped the source and target.")
    return 0
