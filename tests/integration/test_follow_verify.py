"""verify_partition(following=True): verification behind a copy that is still writing, on real brokers.

The follower is started before the copy (in a thread), so it must wait at the target's high
watermark for records still to come: through source offset gaps (transaction markers), after
a resumed copy, and it must notice an extra record on the target. Without a copy it gives up
after the stall timeout (socket.timeout.ms) instead of waiting forever.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any

import pytest

from harness.data.seed import producer, send
from kafka_migration.model.config import ClusterPair
from kafka_migration.model.plan import PartitionSlice
from kafka_migration.run.copy import copy_partition
from kafka_migration.run.verify import PartitionVerification, verify_partition, verify_partitions_following
from tests.integration.test_copy_verify import _plan_and_create, _seed_rich, _settings

pytestmark = pytest.mark.integration

SHORT = {"socket.timeout.ms": 4000}  # the follower's stall timeout: how long it waits for a copy


def _follow(task: PartitionSlice, pair: ClusterPair) -> dict[str, Any]:
    """Start a following verification in a thread; its result lands in the returned dict."""
    found: dict[str, Any] = {}

    def run() -> None:
        found["result"] = verify_partition(task, pair, following=True)

    found["thread"] = threading.Thread(target=run, daemon=True)
    found["thread"].start()
    return found


def _result(found: dict[str, Any]) -> PartitionVerification:
    found["thread"].join(60)
    assert not found["thread"].is_alive()
    return found["result"]


def test_a_follower_started_before_the_copy_verifies_the_whole_range(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    topic = f"follow{unique}"
    _seed_rich(clusters.source, topic)  # offset gaps from transactions, records near 1 MB
    pair = ClusterPair.of_settings(_settings(clusters.source), {**_settings(clusters.target), **SHORT})
    (topic_plan,) = _plan_and_create(clusters, topic).topics
    first, second = topic_plan.slices(include_empty=True)

    # Partition 0: the follower starts on an empty target; the copy starts a little later.
    found = _follow(first, pair)
    time.sleep(1.0)
    copied = copy_partition(first, pair)
    verified = _result(found)
    assert verified.match, verified
    assert verified.source_records == verified.target_records == copied.records

    # Partition 1: half the range is already on the target (an interrupted copy), the rest is resumed.
    middle = (second.start + second.end) // 2
    copy_partition(replace(second, end=middle), pair)
    found = _follow(second, pair)
    time.sleep(1.0)
    resumed = copy_partition(second, pair)
    assert resumed.resumed_records > 0 and resumed.records > 0
    verified = _result(found)
    assert verified.match, verified
    assert verified.source_records == verified.target_records == resumed.records + resumed.resumed_records

    # An extra record on the target after the copied range is still caught.
    p = producer(clusters.target)
    send(p, topic, 1, b"extra", b"not from the source")
    p.flush(10)
    verified = verify_partition(second, pair, following=True)
    assert not verified.match and verified.first_difference == "extra record on the target"


def test_a_follower_without_a_copy_stops_after_the_stall_timeout(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    topic = f"followalone{unique}"
    _seed_rich(clusters.source, topic)
    pair = ClusterPair.of_settings(_settings(clusters.source), {**_settings(clusters.target), **SHORT})
    (topic_plan,) = _plan_and_create(clusters, topic).topics
    task = topic_plan.slices(include_empty=True)[0]
    copy_partition(replace(task, end=(task.start + task.end) // 2), pair)  # a copy that stopped halfway

    found: dict[str, Any] = {}
    waiting = threading.Thread(target=lambda: found.update(rows=verify_partitions_following([task], pair)))
    waiting.start()
    waiting.join(60)  # bounded by socket.timeout.ms (4 s): a follower never waits forever
    assert not waiting.is_alive()
    (verified,) = found["rows"]
    assert not verified.match and verified.error is not None
    assert "waited for the copy" in verified.error
