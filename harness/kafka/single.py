"""``make clusters WHICH=NAME`` / ``make clusters-stop WHICH=NAME``: one cluster of a running practice pair, started
again on its data or stopped cleanly, while the other keeps running. The supervisor that ``make clusters`` left in
the background does it (harness.kafka.supervisor); these functions ask it (harness.kafka.control) and say, in one
line, what came of it, or why it cannot be done."""

from __future__ import annotations

from pathlib import Path

from harness.kafka import control
from harness.kafka.control import RUNNING, NoAnswer

STATE = Path(".clusters")  # make clusters' folder
START_WAIT = 180.0  # seconds; a broker starts again in 5-20 s here (longer after a kill: it recovers its logs)
STOP_WAIT = 90.0  # the supervisor waits a minute for a clean shutdown before it kills the broker


def command(directory: Path, verb: str, which: str | None = None) -> str:
    """What a user types to run ``up`` / ``down`` on ``directory`` again: make's target for make's folder."""
    if directory.resolve() == STATE.resolve():
        return f"make {'clusters' if verb == 'up' else 'clusters-stop'}" + (f" WHICH={which}" if which else "")
    return f"python -m harness.kafka {verb}" + (f" --which {which}" if which else "") + f" --dir {directory}"


def start_one(directory: Path, pid: int | None, name: str) -> int:
    """Ask the running supervisor to start ``name`` again on its data; print where it serves."""
    problem = _not_started(directory, pid, name)
    if problem is not None or pid is None:
        print(problem)
        return 2
    settings = directory / f"{name}.json"
    before = control.read_state(directory / "data", name)
    if before is not None and before.state == RUNNING:
        print(f"{name} already runs: {before.bootstrap}  (settings: {settings})")
        return 0
    print(f"Starting {name} again on its data ...", flush=True)
    try:
        state = control.request(directory / "data", pid, name, "start", START_WAIT)
    except NoAnswer as no_answer:
        print(f"error: {no_answer}; see {directory / 'clusters.log'}")
        return 3
    if state.state != RUNNING:
        print(f"error: {name} did not start again ({state.message}); see {directory / 'clusters.log'}")
        return 3
    print(f"{name} runs again: {state.bootstrap}  (settings: {settings})")
    return 0


def stop_one(directory: Path, pid: int | None, name: str) -> int:
    """Ask the running supervisor to stop ``name`` cleanly; the other cluster keeps running."""
    problem = _not_started(directory, pid, name)
    if problem is not None or pid is None:
        print(problem)
        return 2
    again = command(directory, "up", name)
    before = control.read_state(directory / "data", name)
    if before is not None and before.state != RUNNING:
        print(f"{name} does not run ({before.state} at {before.at}, exit code {before.code}). Start it with: {again}")
        return 0
    try:
        state = control.request(directory / "data", pid, name, "stop", STOP_WAIT)
    except NoAnswer as no_answer:
        print(f"error: {no_answer}; see {directory / 'clusters.log'}")
        return 3
    others = [n for n in control.names(directory / "data") if n != name and state_of(directory, n) == RUNNING]
    still = control.still_running(others)
    print(f"Stopped {name} (a clean shutdown, exit code {state.code}); {still}. Start it again with: {again}")
    return 0


def _not_started(directory: Path, pid: int | None, name: str) -> str | None:
    """Why ``name`` cannot be started or stopped alone, in one line; None when it can."""
    if pid is None:
        return f"error: no clusters of {directory} run: start both with {command(directory, 'up')} first"
    names = control.names(directory / "data")
    if not names:
        return (
            f"error: the clusters of {directory} are still starting, or were started before one could be stopped "
            f"alone: {command(directory, 'down')}, then {command(directory, 'up')}"
        )
    if name not in names:
        return f"error: the clusters of {directory} are {' and '.join(names)}; there is none named {name!r}"
    return None


def state_of(directory: Path, name: str) -> str | None:
    """The state of ``name`` as its supervisor last recorded it (harness.kafka.control), None before it did."""
    state = control.read_state(directory / "data", name)
    return None if state is None else state.state
