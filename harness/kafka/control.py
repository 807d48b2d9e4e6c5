"""How ``up``/``down --which NAME`` talk to the supervisor of ``make clusters`` (``python -m harness.kafka start``).

Files in the supervisor's ``--dir``, one pair per cluster:

- ``NAME.request``: ``{"action": "stop" | "start", "id": ...}``, written by the asking side, which then sends the
  supervisor SIGUSR1; the supervisor takes (removes) it and acts on it.
- ``NAME.state``: what the cluster is now (``running``, ``stopped`` on request, ``exited`` on its own, ``failed``
  to start again), since when, the broker's exit code, and the id of the last request it answered: the asking
  side waits, bounded, until that id is its own.

Each file is written whole to a temporary name and renamed, so a reader never sees half of one.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from harness.servers.lifetime import alive

ACTIONS = ("stop", "start")
RUNNING, STOPPED, EXITED, FAILED = "running", "stopped", "exited", "failed"


@dataclass(frozen=True)
class Request:
    name: str
    action: str
    id: str

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"a request to {self.action!r} {self.name}: the actions are {', '.join(ACTIONS)}")


@dataclass(frozen=True)
class ClusterState:
    name: str
    state: str
    bootstrap: str
    at: str  # local time, ISO 8601
    code: int | None = None  # the broker's exit code once it ended (negative: the signal that ended it)
    request: str | None = None  # the id of the request this state answers
    message: str = ""


def now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def _write(path: Path, data: dict[str, object]) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(data) + "\n")
    partial.replace(path)


def ask(directory: Path, name: str, action: str) -> Request:
    """Leave a request for the supervisor (the caller then rings it: SIGUSR1)."""
    request = Request(name, action, uuid.uuid4().hex)
    _write(directory / f"{name}.request", {"action": action, "id": request.id})
    return request


def take_requests(directory: Path, names: list[str]) -> list[Request]:
    """The requests waiting for the clusters ``names``, removed as they are taken (an unreadable one is dropped)."""
    taken = []
    for name in names:
        path = directory / f"{name}.request"
        try:
            data = json.loads(path.read_text())
            path.unlink()
            taken.append(Request(name, data["action"], data["id"]))
        except FileNotFoundError:
            continue
        except (ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)
    return taken


def write_state(directory: Path, state: ClusterState) -> None:
    _write(directory / f"{state.name}.state", asdict(state))


def read_state(directory: Path, name: str) -> ClusterState | None:
    try:
        return ClusterState(**json.loads((directory / f"{name}.state").read_text()))
    except (FileNotFoundError, ValueError, TypeError):
        return None


def still_running(others: list[str]) -> str:
    """'source keeps running', 'a and b keep running' or 'no other cluster runs': what goes on after one ended."""
    if not others:
        return "no other cluster runs"
    return f"{' and '.join(others)} {'keeps' if len(others) == 1 else 'keep'} running"


def names(directory: Path) -> list[str]:
    """The clusters the supervisor of ``directory`` answers for (it writes their states once they serve)."""
    return sorted(path.name.removesuffix(".state") for path in directory.glob("*.state"))


class NoAnswer(RuntimeError):
    """The supervisor ended, or did not answer a request in time."""


def request(directory: Path, pid: int, name: str, action: str, timeout: float) -> ClusterState:
    """Ask the supervisor ``pid`` (whose --dir is ``directory``) to stop or start ``name``; its answer, once given."""
    asked = ask(directory, name, action)
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = read_state(directory, name)
        if state is not None and state.request == asked.id:
            return state
        if not alive(pid):
            raise NoAnswer(f"the clusters' supervisor (pid {pid}) ended before it answered")
        time.sleep(0.2)
    raise NoAnswer(f"the clusters' supervisor (pid {pid}) did not {action} {name} within {timeout:.0f} s")
