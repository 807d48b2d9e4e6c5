"""reader._behind: one consume() result of a reader that follows a writer (verification behind a copy)."""

from __future__ import annotations

from typing import Any, NoReturn

import pytest
from confluent_kafka import KafkaError

from kafka_migration.kafka.reader import _behind
from tests.unit.run.test_batch_compare import Msg


def _records(*offsets: int) -> list[Msg]:
    return [Msg(o, b"k", b"v", None, 0) for o in offsets]


def _eof(offset: int) -> Msg:
    return Msg(offset, None, None, None, 0, error=KafkaError(KafkaError._PARTITION_EOF))


def _fail(msg: Any, error: Any) -> NoReturn:
    raise RuntimeError(f"fail at {msg.offset()}")


def test_records_after_a_partition_end_event_are_kept_and_only_a_last_event_is_the_end() -> None:
    # The writer added records after the reader saw the end: they are new records, not beyond a range.
    messages = [*_records(0, 1), _eof(2), *_records(2, 3)]
    assert _behind(messages, _fail) == (messages[:2] + messages[3:], 4, False)
    messages = [*_records(4), _eof(5)]
    assert _behind(messages, _fail) == (messages[:1], 5, True)
    assert _behind([_eof(5)], _fail) == ([], None, True)
    batch, after, done = _behind(_records(5, 6), _fail)
    assert ([m.offset() for m in batch], after, done) == ([5, 6], 7, False)


def test_a_read_error_fails() -> None:
    with pytest.raises(RuntimeError, match="fail at 1"):
        _behind([*_records(0), Msg(1, None, None, None, 0, error=KafkaError(KafkaError.OFFSET_OUT_OF_RANGE))], _fail)
