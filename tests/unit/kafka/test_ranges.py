"""kafka/ranges.py without a broker: one consume() result sorted by range. Its usual result (runs of one partition,
no errors) is taken run by run at C speed; every result is sorted as the record-by-record definition sorts it. The
reads themselves are in tests/integration/test_windows.py."""

from __future__ import annotations

import copy
from typing import Any

from confluent_kafka import KafkaError
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_migration.kafka import ranges
from kafka_migration.kafka.ranges import OffsetRange, _by_range, _each, _Progress, _Reading


class EndOfPartition:
    def code(self) -> int:
        return KafkaError._PARTITION_EOF


class Message:
    def __init__(self, topic: str, partition: int, offset: int, error: Any = None) -> None:
        self._where, self._offset, self._error = (topic, partition), offset, error

    def topic(self) -> str:
        return self._where[0]

    def partition(self) -> int:
        return self._where[1]

    def offset(self) -> int:
        return self._offset

    def error(self) -> Any:
        return self._error

    def __repr__(self) -> str:
        return f"{self._where}@{self._offset}{'!' if self._error else ''}"


PARTITIONS = [("a", 0), ("a", 1), ("b", 0), ("c", 0)]  # ("c", 0) has no range: prefetched, or no range's


@st.composite
def results(draw: st.DrawFn) -> tuple[list[_Progress], dict[tuple[str, int], int], list[Message]]:
    """Ranges of three partitions (some ended, some open-ended, some done already) and one consume() result: runs
    of one partition with increasing offsets, maybe past a range's end, maybe a partition-end event."""
    states = []
    for topic, partition in PARTITIONS[:3]:
        start = draw(st.integers(0, 5))
        end = draw(st.one_of(st.none(), st.integers(start, start + 8)))
        state = _Progress(OffsetRange(topic, partition, start, end), start)
        state.done = draw(st.booleans()) and draw(st.booleans())
        states.append(state)
    open_ranges = {PARTITIONS[i]: i for i in range(3)}
    next_offset = {p: s.wanted.start for p, s in zip(PARTITIONS, states, strict=False)} | {PARTITIONS[3]: 0}
    messages = []
    for _ in range(draw(st.integers(1, 6))):
        where = draw(st.sampled_from(PARTITIONS))
        for _ in range(draw(st.integers(1, 5))):
            offset = next_offset[where]
            next_offset[where] += draw(st.sampled_from([1, 1, 1, 2]))  # a gap: a compacted or transactional log
            messages.append(Message(*where, offset))
        if draw(st.integers(0, 5)) == 0:
            messages.append(Message(*where, next_offset[where], EndOfPartition()))
    return states, open_ranges, messages


def sorted_state(states: list[_Progress]) -> list[tuple[int, bool, bool]]:
    return [(s.next_offset, s.received, s.done) for s in states]


@settings(max_examples=800, deadline=None)
@given(results())
def test_a_result_is_sorted_by_range_as_record_by_record(
    result: tuple[list[_Progress], dict[tuple[str, int], int], list[Message]],
) -> None:
    states, open_ranges, messages = result
    mine = copy.deepcopy(states)
    found = _by_range(_Reading(None, open_ranges, mine, "source", "source cluster"), messages)
    expected = _each(_Reading(None, open_ranges, states, "source", "source cluster"), messages, {})
    assert found == expected
    assert sorted_state(mine) == sorted_state(states)


def test_the_usual_result_is_taken_run_by_run_not_record_by_record(monkeypatch: Any) -> None:
    calls: list[int] = []
    monkeypatch.setattr(ranges, "_each", lambda reading, messages, batches: calls.append(len(messages)) or batches)
    states = [_Progress(OffsetRange(*p, 0, 10), 0) for p in PARTITIONS[:2]]
    messages = [Message("a", 0, o) for o in range(4)] + [Message("a", 1, o) for o in range(3)]
    messages += [Message("a", 0, o) for o in range(4, 10)]
    found = _by_range(
        _Reading(None, {PARTITIONS[0]: 0, PARTITIONS[1]: 1}, states, "source", "source cluster"), messages
    )
    assert calls == [] and [m.offset() for m in found[0]] == list(range(10)) and len(found[1]) == 3
    assert sorted_state(states) == [(10, True, True), (3, True, False)]
    past = [Message("a", 1, o) for o in range(3, 12)]  # crosses its range's end: that run alone, record by record
    _by_range(_Reading(None, {PARTITIONS[1]: 1}, states, "source", "source cluster"), past)
    assert calls == [9]
