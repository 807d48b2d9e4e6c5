"""kafka_migration.kafka.batches: bounded batches, a few requests in flight, answers read in the order sent."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import pytest

from kafka_migration.kafka.batches import chunks, pipelined


def test_chunks_keep_order_and_bound_each_batch() -> None:
    assert chunks(range(7), 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert chunks([], 3) == []
    with pytest.raises(ValueError, match="at least one item"):
        chunks([1], 0)


def test_no_more_than_in_flight_requests_are_unanswered_and_answers_are_read_in_order() -> None:
    unanswered: list[int] = []
    most = 0
    read_order: list[int] = []

    def send(batch: Sequence[int]) -> int:
        nonlocal most
        unanswered.append(batch[0])
        most = max(most, len(unanswered))
        return batch[0]

    def read(batch: Sequence[int], answer: int) -> None:
        assert answer == batch[0]
        unanswered.remove(answer)
        read_order.append(answer)

    pipelined(deque(chunks(range(10), 1)), send, read, in_flight=3)
    assert most == 3 and read_order == list(range(10)) and not unanswered


def test_a_batch_read_may_ask_again_and_is_sent_after_the_others() -> None:
    sent: list[tuple[int, ...]] = []
    queue: deque[Sequence[int]] = deque([[1, 2], [3]])

    def read(batch: Sequence[int], _answer: None) -> None:
        if batch == [1, 2]:
            queue.append([2])  # 2 was not answered: asked again on its own

    pipelined(queue, lambda batch: sent.append(tuple(batch)), read, in_flight=2)
    assert sent == [(1, 2), (3,), (2,)]


def test_in_flight_must_allow_one_request() -> None:
    with pytest.raises(ValueError, match="at least one request"):
        pipelined(deque([[1]]), lambda b: None, lambda b, a: None, in_flight=0)


def test_one_request_in_flight_is_answered_before_the_next_is_sent() -> None:
    events: list[str] = []
    pipelined(
        deque(chunks(range(3), 1)),
        lambda batch: events.append(f"send {batch[0]}"),
        lambda batch, _answer: events.append(f"read {batch[0]}"),
        in_flight=1,
    )
    assert events == ["send 0", "read 0", "send 1", "read 1", "send 2", "read 2"]
