"""The launcher's words to a driver started before its plan (``SparkApplication(wait=True)``), on a FIFO that
only the launcher holds open, one line each:

* ``go``: the plan is written and the target topics exist: run.
* ``start``: the plan is written and the target topics are being created: run each topic once it is ready,
  as the lines ``created N`` (the first N topics to create, in ``MigrationPlan.run_order``) and
  ``created all`` say. The copy of the first topics runs while the broker creates the others.
* ``abort``, or end of file (the launcher is gone): stop without writing anything.
"""

from __future__ import annotations

import os
import select
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from kafka_migration.model.plan import MigrationPlan, TopicPlan

GO = "go"
START = "start"
CREATED = "created"
ALL = "all"


class LauncherChannel:
    """Reads the launcher's lines; opened without blocking, so a launcher already gone reads as end of file."""

    def __init__(self, path: Path) -> None:
        self._fd: int | None = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self._data = b""

    def next_line(self) -> str | None:
        """The next line (blocks until it is complete); None at end of file."""
        while b"\n" not in self._data:
            if self._fd is None:
                return None
            select.select([self._fd], [], [], 1.0)
            try:
                chunk = os.read(self._fd, 256)
            except BlockingIOError:
                continue  # the launcher is there and has not written yet
            if not chunk:
                self.close()
                return None
            self._data += chunk
        line, self._data = self._data.split(b"\n", 1)
        return line.decode(errors="replace").strip()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def wait_for_go(path: Path) -> bool:
    """Block until the launcher's first line; True only for ``go``."""
    channel = LauncherChannel(path)
    try:
        return channel.next_line() == GO
    finally:
        channel.close()


class CreationGate:
    """After ``start``: which target topics the launcher has created, from its ``created`` lines (read in a
    thread of their own); ``wait(topics)`` blocks until those of ``topics`` that the plan creates are ready.

    A launcher that stops (``abort``, end of file) before ``created all`` ends the wait with ``on_stop``,
    which does not return (the driver leaves without writing anything, as when told not to run at all).
    """

    def __init__(self, channel: LauncherChannel, plan: MigrationPlan, on_stop: Callable[[], None]) -> None:
        order = [t.target_topic for t in plan.run_order() if t.create]
        self._rank = {name: i for i, name in enumerate(order)}
        self._total = len(order)
        self._ready = 0
        self._stopped = False
        self._changed = threading.Condition()
        self._channel = channel
        self._on_stop = on_stop
        self._thread = threading.Thread(target=self._follow, name="creation-gate", daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        while self._ready < self._total:
            line = self._channel.next_line()
            words = (line or "").split()
            with self._changed:
                if len(words) == 2 and words[0] == CREATED:
                    self._ready = self._total if words[1] == ALL else max(self._ready, int(words[1]))
                else:  # abort, end of file, or a word this driver does not know: stop
                    self._stopped = True
                self._changed.notify_all()
            if self._stopped:
                self._on_stop()
                return
        self._channel.close()

    def wait(self, topics: Sequence[TopicPlan]) -> None:
        """Until every topic of ``topics`` that the plan creates exists on the target."""
        needed = max((self._rank.get(t.target_topic, -1) for t in topics if t.create), default=-1) + 1
        with self._changed:
            self._changed.wait_for(lambda: self._ready >= needed or self._stopped)
            if self._stopped and self._ready < needed:
                raise RuntimeError("the launcher stopped the run before these topics were created")
