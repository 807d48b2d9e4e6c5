"""Lost acknowledgements, a fault of the loopback proxy (harness/servers/proxy.py): the broker writes, the client
never hears it.

The proxy forwards a Produce request to the broker, which appends its records and answers; in place of the answer
the client's connection is cut. To the client the write may or may not have happened, so it sends it again: a
producer without idempotence then appends the same records twice, an idempotent one (the broker recognises its
producer id and sequence numbers) does not. This is what a lost TCP path or a proxy restart does to a real client
at the wrong moment, made to happen every time.

The proxy reads the Kafka protocol's framing only: a request is ``int32 size, int16 api_key, int16 api_version,
int32 correlation_id, ...``, a response ``int32 size, int32 correlation_id, ...``; a Produce response is the one
whose correlation id a Produce request (api key 0) used on the same connection. So it works on PLAINTEXT
listeners (TLS would hide the framing; SASL tokens before authentication are framed the same way and never Produce).

Bounded: ``count`` answers lost at most, and none after ``lifetime`` seconds. Install with
``LoopbackProxy.set_fault(LostAcks(count))``; ``restore()`` removes it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

PRODUCE = 0  # the Kafka protocol's api key of Produce
_SIZE = 4  # a frame starts with its length, a big-endian int32


class _Frames:
    """Where each Kafka frame of a byte stream starts and its first ``header`` bytes, read chunk by chunk."""

    def __init__(self, header: int) -> None:
        self.header = header
        self._skip = 0  # bytes of the current frame's body still to pass over
        self._head = b""  # the current frame's size and header, as far as read

    def feed(self, data: bytes) -> Iterator[tuple[int, bytes]]:
        """(where the frame starts in ``data``, 0 when it started in an earlier chunk; its header) per frame whose
        header ``data`` completes."""
        pos, end = 0, len(data)
        start = 0
        while pos < end:
            if self._skip:
                step = min(self._skip, end - pos)
                self._skip -= step
                pos += step
                continue
            if not self._head:
                start = pos
            take = data[pos : pos + _SIZE + self.header - len(self._head)]
            self._head += take
            pos += len(take)
            if len(self._head) < _SIZE + self.header:
                return
            size = int.from_bytes(self._head[:_SIZE], "big", signed=True)
            header, self._head = self._head[_SIZE:], b""
            self._skip = max(0, size - self.header)
            yield start, header


@dataclass(eq=False)
class LostAcks:
    """Cut the connection in place of the next ``count`` Produce answers, for at most ``lifetime`` seconds."""

    count: int
    lifetime: float = 60.0
    lost: int = 0  # answers lost so far (a test checks the fault really happened)
    started: float = field(default_factory=time.monotonic)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.count < 0 or self.lifetime <= 0:
            raise ValueError("LostAcks needs count >= 0 and lifetime > 0")

    def take(self) -> bool:
        """True when this answer is to be lost (and counts it)."""
        with self._lock:
            if self.lost >= self.count or time.monotonic() - self.started > self.lifetime:
                return False
            self.lost += 1
            return True

    def watch(self) -> _ConnectionWatch:
        """The state of one connection accepted while the fault is set, read from its first byte."""
        return _ConnectionWatch(self)


class _ConnectionWatch:
    def __init__(self, fault: LostAcks) -> None:
        self.fault = fault
        self.requests = _Frames(header=8)  # api_key, api_version, correlation_id
        self.responses = _Frames(header=4)  # correlation_id
        self.produce_ids: set[int] = set()

    def to_upstream(self, data: bytes) -> int | None:
        for _, header in self.requests.feed(data):
            if int.from_bytes(header[:2], "big", signed=True) == PRODUCE:
                self.produce_ids.add(int.from_bytes(header[4:8], "big", signed=True))
        return None

    def to_client(self, data: bytes) -> int | None:
        """Where to cut the connection in ``data`` (the start of a Produce answer to lose), or None."""
        for start, header in self.responses.feed(data):
            correlation_id = int.from_bytes(header, "big", signed=True)
            if correlation_id in self.produce_ids:
                self.produce_ids.discard(correlation_id)
                if self.fault.take():
                    return start
        return None
