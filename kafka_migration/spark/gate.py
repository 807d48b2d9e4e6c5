"""The launcher's word to a driver started ahead of its plan, on a FIFO the launcher holds open.

One line per word. ``go``: the plan is written and every target topic is ready, run it all. ``plan``: the plan
is written and the target topics are still being created; then ``ready N`` each time the first N topics of the
plan's run order (``MigrationPlan.run_order``) are served and checked, and ``go`` once they all are. Anything
else, or end of file (the launcher is gone), before ``go`` means stop. Before its first of these, the launcher
may say ``census``, as often as it needs: the driver takes the census of the schema ids in the source ranges of
the plan the launcher wrote for it (run/census.py), writes it back, says so on its output, and waits for the next
word; nothing is written to the target before the sync has read it. So a run of many new topics copies its
first topics while the broker still creates the others (a broker brings up a thousand new topics in seconds).
"""

from __future__ import annotations

import logging
import os
import select
import threading
from collections.abc import Callable
from enum import Enum
from pathlib import Path

log = logging.getLogger("kafka_migration.spark")

GO = "go"
PLAN = "plan"
READY = "ready"
ABORT = "abort"
CENSUS = "census"


def ready_line(count: int) -> str:
    """The word that releases the first ``count`` topics of the run order."""
    return f"{READY} {count}"


class _State(Enum):
    LISTENING = "listening"  # released: the first ``ready`` topics
    EVERYTHING = "everything"  # go: every topic
    STOPPED = "stopped"  # nothing more starts


class Gate:
    """The driver's side of the FIFO: ``first()`` blocks for the first word, ``wait_for(n)`` for the first n topics.

    Opened without blocking, so a launcher that is already gone (no writer left) reads as end of file: a dead
    launcher never leaves a driver waiting, nor copying topics it never released.
    """

    def __init__(self, path: Path) -> None:
        self._fd: int | None = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self._buffer = b""
        self._ready = 0
        self._state = _State.LISTENING
        self._changed = threading.Condition()

    def first(self, on_census: Callable[[], None] | None = None) -> bool:
        """Block until the launcher's first word: True to run (the plan is written), False to stop. ``on_census``
        answers each ``census`` said before it (without one, ``census`` is a word this driver does not know: stop)."""
        word = self._word()
        while word == CENSUS and on_census is not None:
            on_census()
            word = self._word()
        if word == PLAN:
            threading.Thread(target=self._follow, daemon=True).start()
            return True
        self._state = _State.EVERYTHING if word == GO else _State.STOPPED
        self._close()
        return self._state is _State.EVERYTHING

    def wait_for(self, count: int) -> bool:
        """Block until the first ``count`` topics of the run order are released (True) or the launcher says stop
        (False: start nothing more; the launcher stops this application)."""
        with self._changed:
            self._changed.wait_for(lambda: self._state is not _State.LISTENING or self._ready >= count)
            return self._state is not _State.STOPPED

    def _follow(self) -> None:
        """Read ``ready N`` lines until ``go`` (everything released) or anything else (stop), in a thread of its
        own."""
        while (count := _count(word := self._word())) is not None:
            with self._changed:
                self._ready = max(self._ready, count)
                self._changed.notify_all()
        with self._changed:
            self._state = _State.EVERYTHING if word == GO else _State.STOPPED
            self._changed.notify_all()
        self._close()

    def _word(self) -> str | None:
        """The next line, stripped; None at end of file, or when the FIFO cannot be read (which stops the run
        rather than leave the driver waiting)."""
        try:
            return self._line()
        except (OSError, UnicodeDecodeError) as exc:
            log.warning("could not read the launcher's word (%s): starting nothing more", exc)
            return None

    def _line(self) -> str | None:
        assert self._fd is not None
        while b"\n" not in self._buffer:
            select.select([self._fd], [], [], 1.0)
            try:
                chunk = os.read(self._fd, 4096)
            except BlockingIOError:
                continue  # the launcher is there and has not said more yet
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode().strip()

    def _close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def _count(word: str | None) -> int | None:
    """N of a ``ready N`` word; None for any other word, or end of file."""
    if word is None:
        return None
    parts = word.split()
    if len(parts) == 2 and parts[0] == READY and parts[1].isdigit():
        return int(parts[1])
    return None
