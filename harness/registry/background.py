"""``make clusters REGISTRY=1`` / ``make clusters-stop``: a schema registry for each practice cluster, in the
background. ``up`` runs ``python -m harness.registry start`` detached with its folder in ``<dir>/registry``,
waits until it prints that both registries answer, and writes each one's settings (``<dir>/source-registry.json``,
``<dir>/target-registry.json``: ``{"url": ...}``) beside the clusters'; ``down`` stops it and removes what ``up``
wrote. Removing ``<dir>`` stops them too (``make clusters-stop`` removes ``.clusters``)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from harness.servers.lifetime import stop_group

READY_LINE = "logs in "  # what ``start`` prints once every registry answers
READY_TIMEOUT = 180.0  # seconds; two registries answer in 3-8 s here
NAMES = ("source", "target")


def _folder(directory: Path) -> Path:
    return directory / "registry"


def _pid(directory: Path) -> int | None:
    try:
        pid = int((_folder(directory) / "pid").read_text())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def settings_path(directory: Path, name: str) -> Path:
    return directory / f"{name}-registry.json"


def up(directory: Path, ports: str) -> int:
    """Start both registries unless they run already; print their URLs. Exit 0 once both answer."""
    folder = _folder(directory)
    if _pid(directory) is not None:
        print(f"The registries of {directory} already run:")
        print((folder / "registries.txt").read_text(), end="")
        return 0
    busy = [p for p in ports.split(",") if _in_use(int(p))]
    if busy:
        print(f"error: port {', '.join(busy)} is in use; stop what listens there, or give other ports")
        return 2
    _remove(directory)
    folder.mkdir(parents=True)
    log = (folder / "registries.log").open("w")
    command = [sys.executable, "-m", "harness.registry", "start", "--names", *NAMES, "--ports", ports]
    process = subprocess.Popen(
        [*command, "--dir", str(folder / "data")], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    (folder / "pid").write_text(str(process.pid))
    lines = _wait_ready(folder / "registries.log", process)
    if lines is None:
        print(f"error: the registries did not start; their log is {folder / 'registries.log'}")
        stop_group(process.pid, 30)
        return 3
    text = []
    for line in lines:
        name = line.pop("name")
        settings_path(directory, name).write_text(json.dumps(line, indent=2) + "\n")
        text.append(f"{name} registry: {line['url']}  (settings: {settings_path(directory, name)})")
    (folder / "registries.txt").write_text("\n".join(text) + "\n")
    print("A source and a target schema registry (Apicurio Registry, Confluent-compatible API) run in the background:")
    print("\n".join(text))
    print("Stop them with: make clusters-stop")
    return 0


def down(directory: Path) -> int:
    """Stop the registries and remove what ``up`` wrote; silent when none run."""
    pid = _pid(directory)
    if pid is not None:
        stop_group(pid, 30)
        print("Stopped the schema registries.")
    _remove(directory)
    return 0


def _remove(directory: Path) -> None:
    shutil.rmtree(_folder(directory), ignore_errors=True)
    for name in NAMES:
        settings_path(directory, name).unlink(missing_ok=True)


def _in_use(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _wait_ready(log: Path, process: subprocess.Popen[bytes]) -> list[dict[str, str]] | None:
    """The registries' JSON lines once ``start`` printed them all, or None when it exited or took too long."""
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None:
        lines = log.read_text().splitlines()
        if any(line.startswith(READY_LINE) for line in lines):
            return [json.loads(line) for line in lines if line.startswith("{")]
        time.sleep(0.3)
    return None
