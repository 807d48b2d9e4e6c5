"""harness/servers/lost_acks.py, the proxy's lost-acknowledgement fault, on hand-made Kafka frames (no broker, no
socket): which answers it loses, where it cuts, and that it stops after its count and its lifetime. In front of a
real broker: tests/faults/test_lost_acks.py."""

from __future__ import annotations

import struct

import pytest

from harness.servers.lost_acks import PRODUCE, LostAcks

METADATA, FETCH = 3, 1


def request(api_key: int, correlation_id: int, body: bytes = b"x" * 10) -> bytes:
    header = struct.pack(">hhi", api_key, 9, correlation_id) + b"\x00\x04test"  # client id
    return struct.pack(">i", len(header) + len(body)) + header + body


def response(correlation_id: int, body: bytes = b"y" * 20) -> bytes:
    return struct.pack(">ii", len(body) + 4, correlation_id) + body


def chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def test_the_answer_to_a_produce_request_is_cut_where_it_starts() -> None:
    watch = LostAcks(count=1).watch()
    assert watch.to_upstream(request(METADATA, 1) + request(PRODUCE, 2)) is None
    answers = response(1) + response(2)
    assert watch.to_client(answers) == len(response(1))  # the metadata answer goes through, then the cut


@pytest.mark.parametrize("size", [1, 3, 7, 64])
def test_frames_split_anywhere_across_chunks_are_read(size: int) -> None:
    fault = LostAcks(count=5)
    watch = fault.watch()
    sent = request(FETCH, 7, b"f" * 100) + request(PRODUCE, 8, b"p" * 300) + request(PRODUCE, 9)
    assert all(watch.to_upstream(chunk) is None for chunk in chunks(sent, size))
    cuts = [watch.to_client(chunk) for chunk in chunks(response(7, b"r" * 50) + response(8), size)]
    first = next(i for i, cut in enumerate(cuts) if cut is not None)
    forwarded = first * size + (cuts[first] or 0)
    before = len(response(7, b"r" * 50))
    # The fetch answer whole, of the produce answer at most the bytes before its correlation id was read.
    assert before <= forwarded < before + 8
    assert fault.lost == 1


def test_only_count_answers_are_lost() -> None:
    fault = LostAcks(count=2)
    for correlation_id in range(4):
        watch = fault.watch()  # a new connection after each cut, as a client reconnects
        watch.to_upstream(request(PRODUCE, correlation_id))
        lost = watch.to_client(response(correlation_id)) is not None
        assert lost == (correlation_id < 2)
    assert fault.lost == 2


def test_answers_to_other_requests_and_other_connections_are_forwarded() -> None:
    fault = LostAcks(count=10)
    watch, other = fault.watch(), fault.watch()
    watch.to_upstream(request(METADATA, 5))
    other.to_upstream(request(PRODUCE, 6))
    assert watch.to_client(response(5) + response(6)) is None  # id 6 was a produce of the other connection
    assert fault.lost == 0


def test_nothing_is_lost_after_the_lifetime() -> None:
    fault = LostAcks(count=10, lifetime=1.0)
    fault.started -= 2.0
    watch = fault.watch()
    watch.to_upstream(request(PRODUCE, 1))
    assert watch.to_client(response(1)) is None
    with pytest.raises(ValueError, match="count >= 0"):
        LostAcks(count=-1)
