"""Compacted topics whose log cleaner has run, for tests: offset gaps, and tombstones gone.

Apache Kafka's cleaner compacts only closed segments whose dirty ratio exceeds
``min.cleanable.dirty.ratio``, and removes a tombstone only in a later cleaning, once
``delete.retention.ms`` has passed since the cleaning that first kept it (KIP-534). So a topic
made with ``CLEANER_CONFIGS`` rolls a segment whenever a record's timestamp is 100 ms past its
segment's first one, is cleaned as soon as the broker's cleaner looks (``log.cleaner.backoff.ms``,
1 s on the harness's clusters), and keeps a tombstone 100 ms. ``wait_until_compacted`` writes a
record with a key of its own now and then, which closes the segment before it and gives the
cleaner new dirty data, until every tombstone is gone; keys of their own are never compacted
away, so the partition stays as it is once the wait is over.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any

from harness.data.read import read_partition
from harness.data.seed import producer, send

CLEANER_CONFIGS: Mapping[str, str] = {
    "cleanup.policy": "compact",
    "segment.ms": "100",
    "min.cleanable.dirty.ratio": "0.01",
    "delete.retention.ms": "100",
    "min.compaction.lag.ms": "0",
}


def wait_until_compacted(
    bootstrap: str, topic: str, partition: int, written: int, timeout: float = 90.0
) -> list[dict[str, Any]]:
    """Wait until the cleaner has removed records from the first ``written`` offsets and no tombstone is
    left; returns the partition's records then."""
    nudges = producer(bootstrap)
    deadline = time.monotonic() + timeout
    while True:
        found = read_partition(bootstrap, topic, partition)
        early = [r for r in found if r["offset"] < written]
        if len(early) < written and not any(r["value"] is None for r in found):
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(f"{topic}[{partition}] not compacted within {timeout}s: {len(early)} of {written} left")
        # A record with a key of its own: closes the segment before it (segment.ms), never compacted away.
        send(nudges, topic, partition, f"nudge-{uuid.uuid4().hex[:8]}".encode(), b"nudge")
        nudges.flush(10)
        time.sleep(1.0)
