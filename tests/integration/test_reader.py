"""reader.py on Apache Kafka: where an open-ended read ends, and the end-offset consumer."""

from __future__ import annotations

from typing import Any

import confluent_kafka
import pytest

from harness.data.seed import create_topic, producer, send
from kafka_migration.exceptions import CopyError
from kafka_migration.kafka import reader
from kafka_migration.kafka.reader import end_offset, read_range
from kafka_migration.model.config import Endpoint

pytestmark = pytest.mark.integration

RECORDS = 2_500  # more than reader.BATCH: the read takes several consume() calls


def _seed(bootstrap: str, topic: str, records: int = RECORDS) -> None:
    create_topic(bootstrap, topic, 1)
    p = producer(bootstrap)
    for i in range(records):
        send(p, topic, 0, f"k{i}".encode(), f"v{i}".encode())
    p.flush(30)


def test_open_ended_read_ends_at_the_fetched_high_watermark(clusters, unique, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With no partition-EOF event at all, the read still ends, with every record: at the high watermark
    its fetches reported (waiting for the EOF event cost an extra empty fetch per read)."""
    topic = f"reader.open.{unique}"
    _seed(clusters.source, topic)
    without_eof = reader.consumer_settings

    def no_eof(settings: Any) -> dict[str, Any]:
        return {**without_eof(settings), "enable.partition.eof": False}

    monkeypatch.setattr(reader, "consumer_settings", no_eof)
    source = Endpoint("source", {"bootstrap.servers": clusters.source})
    # Without the high-watermark end this read would wait out idle_timeout and fail.
    offsets = [m.offset() for batch in read_range(source, topic, 0, 0, None, idle_timeout=20) for m in batch]
    assert offsets == list(range(RECORDS))
    offsets = [m.offset() for batch in read_range(source, topic, 0, 1_234, None, idle_timeout=20) for m in batch]
    assert offsets == list(range(1_234, RECORDS))


def test_open_ended_read_of_an_empty_rest_ends_on_eof(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    topic = f"reader.empty.{unique}"
    _seed(clusters.source, topic, records=5)
    source = Endpoint("source", {"bootstrap.servers": clusters.source})
    assert [m.offset() for batch in read_range(source, topic, 0, 5, None) for m in batch] == []
    create_topic(clusters.source, f"{topic}.none", 1)
    assert [m.offset() for batch in read_range(source, f"{topic}.none", 0, 0, None) for m in batch] == []


def test_end_offset_uses_one_consumer_per_cluster_and_drops_it_on_failure(clusters, unique, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    topic = f"reader.end.{unique}"
    _seed(clusters.source, topic, records=30)
    create_topic(clusters.source, f"{topic}.empty", 1)
    created: list[Any] = []
    real = confluent_kafka.Consumer

    def counting(conf: dict[str, Any]) -> Any:
        created.append(conf)
        return real(conf)

    monkeypatch.setattr(confluent_kafka, "Consumer", counting)
    monkeypatch.setattr(reader, "_WATERMARK_CONSUMERS", {})
    source = Endpoint("source", {"bootstrap.servers": clusters.source})
    assert end_offset(source, topic, 0) == 30
    assert end_offset(source, f"{topic}.empty", 0) == 0
    assert end_offset(source, topic, 0) == 30
    assert len(created) == 1
    with pytest.raises(CopyError, match=r"end offset of source .*missing\[0\]"):
        end_offset(source, f"{topic}.missing", 0, timeout=10)
    assert reader._WATERMARK_CONSUMERS == {}  # not reused after a failure
    assert len(created) == 2  # the reused consumer failed: asked once more with a new one, which failed too
    assert end_offset(source, topic, 0) == 30
    assert len(created) == 3
