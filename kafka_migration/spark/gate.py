"""The launcher's word to a driver started ahead of its plan, on a FIFO the launcher holds open.

One line per word. ``go``: the plan is written and every target topic is ready, run it all. ``plan``: the plan
is written and the target topics are still being created; then ``ready N`` each time the first N topics of the
plan's run order (``MigrationPlan.run_order``) are served and checked, and ``go`` once they all are. Anything
else, or end of file (the launcher is gone), before ``go`` means stop. So a run of many new topics copies its
first topics while the broker still creates the others (a broker brings up a thousand new topics in seconds).
"""

from __future__ import annotations

import os
import select
import threading
from pathlib import Path

GO = "go"
PLAN = "plan"
READY = "ready"
ABORT = "abort"


def ready_line(count: int) -> str:
    """The word that releases the first ``count`` topics of the run order."""
    return f"{READY} {count}"


class Gate:
    """The driver's side of the FIFO: ``first()`` blocks for the first word, ``wait_for(n)`` for the first n topics.

    Opened without blocking, so a launcher that is already gone (no writer left) reads as end of file: a dead
    launcher never leaves a driver waiting, nor copying topics it never released.
    """

    def __init__(self, path: Path) -> None:
        self._fd: int | None = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self._buffer = b""
        self._ready = 0
        self._everything = False
        self._stopped = False
        self._changed = threading.Condition()

    def first(self) -> bool:
        """Block until the launcher's first word: True to run (the plan is written), False to stop."""
        word = self._line()
        if word == PLAN:
            threading.Thread(target=self._follow, name="launcher-words", daemon=True).start()
            return True
        with self._changed:
            self._everything = word == GO
            self._stopped = not self._everything
        self._close()
        return self._everything

    def wait_for(self, count: int) -> bool:
        """Block until the first ``count`` topics of the run order are released (True) or the launcher says stop
        (False: start nothing more; the launcher stops this application)."""
        with self._changed:
            self._changed.wait_for(lambda: self._stopped or self._everything or self._ready >= count)
            return not self._stopped

    def _follow(self) -> None:
        """Read ``ready N`` lines until ``go`` (everything released) or anything else (stop)."""
        try:
            while True:
                word = self._line()
                count = _count(word)
                with self._changed:
                    if count is not None:
                        self._ready = max(self._ready, count)
                    else:
                        self._everything = word == GO
                        self._stopped = not self._everything
                    self._changed.notify_all()
                if count is None:
                    return
        except OSError:
            with self._changed:
                self._stopped = True
                self._changed.notify_all()
        finally:
            self._close()

    def _line(self) -> str | None:
        """The next line, stripped; None at end of file."""
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
        return line.decode("utf-8", "replace").strip()

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _count(word: str | None) -> int | None:
    """N of a ``ready N`` word; None for any other word."""
    parts = (word or "").split()
    if len(parts) == 2 and parts[0] == READY and parts[1].isdigit():
        return int(parts[1])
    return None
