"""The processes a spark-submit leaves under it (its Python driver and workers), ended so none outlives the run."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import psutil


def descendants(pid: int) -> list[psutil.Process]:
    """The processes under ``pid`` now (none once it has gone)."""
    try:
        return list(psutil.Process(pid).children(recursive=True))
    except psutil.Error:
        return []


def end_all(processes: Sequence[psutil.Process], grace: float) -> None:
    """Let ``processes`` end by themselves within ``grace`` seconds (a driver that sees the FIFO close leaves at
    once), then terminate them, then kill what is left after as long again: a driver killed with its JVM while
    it started Spark could otherwise wait forever on the JVM's socket, outliving the run."""
    _, alive = psutil.wait_procs(processes, timeout=grace)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    _, alive = psutil.wait_procs(alive, timeout=grace)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(alive, timeout=5)
