"""Server processes that do not outlive the harness process that started them."""

from __future__ import annotations

import contextlib
import signal


def terminate_with_parent() -> None:
    """In the child before exec (``preexec_fn``): SIGTERM when the parent dies (Linux prctl PR_SET_PDEATHSIG).

    A test run killed by a CI timeout leaves no server behind. Linux ties this to the thread that
    started the child: start a server from the thread that outlives it.
    """
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def alive(pid: int) -> bool:
    """Whether a process of this pid exists (and may be signalled by us)."""
    import os

    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def stop_group(pid: int, grace: float) -> None:
    """SIGTERM to the process group ``pid`` leads (a detached supervisor and the servers it started, which shut down
    cleanly), SIGKILL once ``grace`` seconds have passed (the servers then get SIGTERM from their parent's death)."""
    import os
    import time

    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
