"""What ``python -m harness.kafka start`` does while its clusters run: watch them, and stop or start one on request.

A broker that ends (killed, crashed, out of memory) ends alone: the supervisor logs one line naming the cluster,
its exit code and the time, the clusters that keep running, the command that starts it again and the broker's
own log, and goes on. ``up --which`` / ``down --which`` (``make clusters WHICH=...``) ask it, through the files
of harness.kafka.control and SIGUSR1, to start a cluster again on its data or to stop one cleanly. Everything
happens on the main thread, the one that launched the brokers: a broker gets SIGTERM when the thread that
launched it ends (harness.kafka.node), so a broker started again from another thread would not outlive it.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
from collections.abc import Sequence
from pathlib import Path

from harness.kafka import control
from harness.kafka.control import EXITED, FAILED, RUNNING, STOPPED, ClusterState
from harness.kafka.node import ClusterFailed, KafkaCluster

STOP_TIMEOUT = 60.0  # seconds of controlled shutdown before the broker is killed
START_TIMEOUT = 120.0
LOOK_EVERY = 0.5  # seconds between looks at the brokers when no request rings


class Doorbell:
    """SIGUSR1 wakes the supervisor at once (a request waits). Install it before the clusters serve: until then,
    SIGUSR1 would end the process."""

    def __init__(self) -> None:
        self._read, write = os.pipe()
        for fd in (self._read, write):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(write, warn_on_full_buffer=False)  # any signal writes a byte: select wakes
        signal.signal(signal.SIGUSR1, lambda *_: None)

    def wait(self, timeout: float) -> None:
        select.select([self._read], [], [], timeout)
        with contextlib.suppress(BlockingIOError):
            os.read(self._read, 4096)


class Supervisor:
    """The clusters of one ``start``, their states in ``directory`` (harness.kafka.control)."""

    def __init__(self, clusters: Sequence[KafkaCluster], directory: Path, again: str | None) -> None:
        self.clusters = {cluster.name: cluster for cluster in clusters}
        self.directory = directory
        self.again = again  # the command that starts a cluster again, "{name}" standing for it
        self.states = dict.fromkeys(self.clusters, RUNNING)

    def begin(self) -> None:
        """Record every cluster as running (before ``start`` says they serve: the asking side reads these)."""
        for name in self.clusters:
            self._record(name, RUNNING)

    def run(self, doorbell: Doorbell) -> None:
        """Until SIGTERM or Ctrl-C (which end the process; the caller stops the brokers)."""
        while True:
            doorbell.wait(LOOK_EVERY)
            self.watch()
            for request in control.take_requests(self.directory, list(self.clusters)):
                self.watch()  # an exit before the request is named as one
                if request.action == "stop":
                    self.stop(request.name, request.id)
                else:
                    self.start(request.name, request.id)

    def watch(self) -> None:
        """Name every broker that ended without being asked to."""
        for name, cluster in self.clusters.items():
            code = _exit_code(cluster)
            if self.states[name] == RUNNING and code is not None:
                self.states[name] = EXITED
                self._record(name, EXITED, code=code)
                self._log(
                    f"{name} ({cluster.bootstrap}) exited with code {_code(code)}, not on request; "
                    f"{self._others(name)}; {self._again(name)}. Its broker's log: {cluster.log_path}"
                )

    def stop(self, name: str, request: str) -> None:
        cluster = self.clusters[name]
        if self.states[name] == RUNNING:
            cluster.stop(timeout=STOP_TIMEOUT)
            self.states[name] = STOPPED
            code = _exit_code(cluster)
            self._log(
                f"{name} ({cluster.bootstrap}) stopped on request: a clean shutdown, exit code {_code(code)}; "
                f"{self._others(name)}; {self._again(name)}"
            )
        self._record(name, self.states[name], code=_exit_code(cluster), request=request)

    def start(self, name: str, request: str) -> None:
        cluster = self.clusters[name]
        message = ""
        if self.states[name] != RUNNING:
            self._log(f"starting {name} again on its data, port {cluster.port}")
            try:
                cluster.start(timeout=START_TIMEOUT)
            except ClusterFailed as failed:
                self.states[name] = FAILED
                message = str(failed).splitlines()[0]
                self._log(f"{name} did not start again: {message}; its broker's log: {cluster.log_path}")
            else:
                self.states[name] = RUNNING
                self._log(f"{name} runs again on {cluster.bootstrap} (started in {cluster.started_seconds:.1f} s)")
        self._record(name, self.states[name], code=_exit_code(cluster), request=request, message=message)

    def _others(self, name: str) -> str:
        return control.still_running(
            [other for other, state in self.states.items() if other != name and state == RUNNING]
        )

    def _again(self, name: str) -> str:
        if self.again is None:
            return "nothing starts it again until this supervisor does (Ctrl-C, then start)"
        return f"start it again with: {self.again.replace('{name}', name)}"

    def _record(
        self, name: str, state: str, code: int | None = None, request: str | None = None, message: str = ""
    ) -> None:
        bootstrap = self.clusters[name].bootstrap
        control.write_state(self.directory, ClusterState(name, state, bootstrap, control.now(), code, request, message))

    @staticmethod
    def _log(line: str) -> None:
        print(f"{control.now()} {line}", flush=True)


def _exit_code(cluster: KafkaCluster) -> int | None:
    return None if cluster.process is None else cluster.process.poll()


def _code(code: int | None) -> str:
    """A negative code is the signal that ended the process; 143 is the JVM's exit after SIGTERM's shutdown."""
    if code == 143:
        return "143 (SIGTERM)"
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"{code} ({signal.Signals(-code).name})"
    return str(code)


def supervise(clusters: Sequence[KafkaCluster], directory: Path, again: str | None, doorbell: Doorbell) -> None:
    """Record the clusters as running, say they serve (``start``'s last ready line), then watch them."""
    supervisor = Supervisor(clusters, directory, again)
    supervisor.begin()
    print(f"logs and data in {directory}; Ctrl-C stops them", flush=True)
    try:
        supervisor.run(doorbell)
    except KeyboardInterrupt:
        print(f"{control.now()} Ctrl-C: stopping every cluster", flush=True)
        raise
    except SystemExit:
        print(f"{control.now()} SIGTERM: stopping every cluster", flush=True)
        raise
