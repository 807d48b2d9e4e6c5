"""Admin requests in bounded batches, a few in flight: how the planner asks about thousands of partitions.

A broker answers one connection's requests in turn, and librdkafka's ``request_timeout`` counts from the moment a
request is queued. One request for every partition of a large plan therefore fails as a whole under load (5,000
ListOffsets-by-time partitions: 15 s, then the invalid offset for every one), and many requests queued at once
time out behind each other. A batch small enough to be answered well inside the timeout, with a couple more sent
ahead so that the broker works while the client parses, keeps each request's cost bounded whatever the count.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

Item = TypeVar("Item")
Answer = TypeVar("Answer")


def chunks(items: Iterable[Item], size: int) -> list[list[Item]]:
    """``items`` in lists of at most ``size`` (at least one item each), in order."""
    if size < 1:
        raise ValueError(f"a batch holds at least one item, not {size}")
    whole = list(items)
    return [whole[i : i + size] for i in range(0, len(whole), size)]


def pipelined(
    queue: deque[Sequence[Item]],
    send: Callable[[Sequence[Item]], Answer],
    read: Callable[[Sequence[Item], Answer], None],
    in_flight: int,
) -> None:
    """Send the batches of ``queue`` with at most ``in_flight`` unanswered, reading each answer in the order sent.
    ``read`` may append batches to ``queue`` (the part of a batch to ask again); they are sent in turn."""
    if in_flight < 1:
        raise ValueError(f"at least one request in flight, not {in_flight}")
    sent: deque[tuple[Sequence[Item], Answer]] = deque()
    while queue or sent:
        while queue and len(sent) < in_flight:
            batch = queue.popleft()
            sent.append((batch, send(batch)))
        batch, answer = sent.popleft()
        read(batch, answer)
