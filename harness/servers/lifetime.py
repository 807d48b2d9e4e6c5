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
