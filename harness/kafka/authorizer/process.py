"""One JVM running Kafka's StandardAuthorizer for a whole run: started once, then fed case after case.

The JVM reads a case line on stdin and answers one line on stdout (protocol.py); its own output (logging) goes to
a log file, whose end is quoted when the JVM stops or stops answering.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import IO

from harness.kafka import jars
from harness.kafka.authorizer.build import MAIN_CLASS
from harness.kafka.authorizer.protocol import AuthorizerError, Case, Result, read_answer

READY_SECONDS = 60.0  # a JVM start on a loaded 2-core machine
ANSWER_SECONDS = 60.0  # a case of many thousand requests
HEAP_MB = 256


class KafkaAuthorizer:
    """Kafka's StandardAuthorizer in a JVM of its own: ``decide(case)`` answers with Kafka's decisions.

    A context manager; ``close()`` ends the JVM (it stops when its stdin closes). ``cases`` and ``requests``
    count what it decided."""

    def __init__(self, classes: Path, log: Path, *, heap_mb: int = HEAP_MB) -> None:
        self.classes = classes
        self.log = log
        self.heap_mb = heap_mb
        self.kafka_version = ""
        self.cases = 0
        self.requests = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None
        self._pending = b""

    def start(self) -> KafkaAuthorizer:
        command = jars.java_command(MAIN_CLASS, heap_mb=self.heap_mb, classpath_extra=[self.classes])
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self._log_file = self.log.open("ab")
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log_file)
        ready = json.loads(self._answer_line(READY_SECONDS))
        self.kafka_version = str(ready.get("ready", ""))
        return self

    def decide(self, case: Case) -> tuple[Result, ...]:
        """Kafka's decision on each request of the case, in order."""
        process = self._running()
        assert process.stdin is not None
        try:
            process.stdin.write(case.line().encode() + b"\n")
            process.stdin.flush()
        except BrokenPipeError:
            raise AuthorizerError(self._stopped()) from None
        results = read_answer(self._answer_line(ANSWER_SECONDS), case)
        self.cases += 1
        self.requests += len(results)
        return results

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            if process.stdin is not None:
                with contextlib.suppress(BrokenPipeError):
                    process.stdin.close()  # the JVM's end of input: it exits
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def __enter__(self) -> KafkaAuthorizer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _running(self) -> subprocess.Popen[bytes]:
        if self._process is None:
            raise AuthorizerError("the authorizer JVM is not started (use it as a context manager, or start())")
        if self._process.poll() is not None:
            raise AuthorizerError(self._stopped())
        return self._process

    def _answer_line(self, seconds: float) -> str:
        """The JVM's next line on stdout, waiting at most ``seconds``."""
        process = self._running()
        assert process.stdout is not None
        descriptor = process.stdout.fileno()  # read raw: the pipe's Python buffer is never used
        deadline = time.monotonic() + seconds
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AuthorizerError(f"the authorizer JVM did not answer within {seconds:.0f} s; {self._log_tail()}")
            readable, _, _ = select.select([descriptor], [], [], left)
            if not readable:
                continue
            chunk = os.read(descriptor, 1 << 16)
            if not chunk:
                process.wait(timeout=10)
                raise AuthorizerError(self._stopped())
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode()

    def _stopped(self) -> str:
        code = self._process.poll() if self._process is not None else None
        return f"the authorizer JVM stopped (exit {code}); {self._log_tail()}"

    def _log_tail(self) -> str:
        if self._log_file is not None:
            self._log_file.flush()
        try:
            lines = self.log.read_text(errors="replace").splitlines()[-15:]
        except OSError:
            lines = []
        return f"the end of its log {self.log}:\n" + "\n".join(lines) if lines else f"its log {self.log} is empty"
