"""What the harness's one-time fetches share (the Kafka jars, the schema registry): one fetch at a time per folder,
and their progress lines on stderr."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def folder_lock(directory: Path) -> Iterator[None]:
    """One fetch at a time per folder (parallel test sessions of one work tree)."""
    import fcntl

    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def say(message: str, quiet: bool) -> None:
    if not quiet:
        print(message, file=sys.stderr, flush=True)
