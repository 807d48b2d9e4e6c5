"""MirrorMaker 2 as the bench runs it (harness/kafka/mirrormaker.py), on two Apache Kafka clusters of its own:
the migration properties are accepted by the real MM2, the data arrives exactly once, the offsets topic
tells when it has caught up, a group is synced, and nothing of MM2's lands on the source."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from harness.bench.mirrormaker import positions as gp
from harness.bench.mirrormaker.tools import count_records
from harness.bench.seeding import create_topics, end_offsets, seed_topics
from harness.kafka import kafka_clusters
from harness.kafka import mirrormaker as mm2
from harness.servers.ports import free_port

pytestmark = pytest.mark.integration

TOPIC = "orders"
POSITION = gp.Position("app", "middle", TOPIC, 0, 400)
GROUP = POSITION.group  # bench.mm2.g.app


def _topics(bootstrap: str) -> set[str]:
    from confluent_kafka.admin import AdminClient

    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=30).topics)


def _wait(what: str, check, maker: mm2.MirrorMaker, timeout: float = 120.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        maker.check_alive()
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"MirrorMaker 2: {what} within {timeout} s\n{maker.log_tail()}")


def test_migration_properties_copy_exactly_once_sync_a_group_and_leave_the_source_alone(tmp_path: Path) -> None:
    from harness.kafka import fetch

    fetch.ensure()
    with kafka_clusters("mm2-source", "mm2-target", directory=tmp_path / "kafka") as (source, target):
        seed_topics(source.bootstrap, {TOPIC: 3}, 3_000)
        create_topics(source.bootstrap, {"not.mirrored": 1})
        gp.commit(source.bootstrap, [POSITION])
        source_topics = _topics(source.bootstrap)
        ends = end_offsets(source.bootstrap, {TOPIC: 3})

        properties = mm2.migration_properties(
            source.bootstrap,
            target.bootstrap,
            mm2.Flow(
                topics=TOPIC,
                groups=re.escape(GROUP),
                rest_port=free_port(),
                tasks=2,
                intervals=mm2.Intervals(emit_checkpoints=1, sync_group_offsets=1, refresh_groups=5, refresh_topics=5),
            ),
        )
        maker = mm2.MirrorMaker(tmp_path / "mm2", properties, heap_mb=256).start()
        reader = mm2.SourceOffsets(target.bootstrap)
        try:
            last = {(TOPIC, p): end - 1 for (_, p), end in ends.items()}
            _wait("caught up", lambda: mm2.caught_up(reader.poll(0.2), last), maker)
            synced = _wait(
                "group offset on the target",
                lambda: mm2.group_offsets(target.bootstrap, [GROUP])[GROUP].get((TOPIC, 0)),
                maker,
                timeout=60,
            )
            errors = maker.errors()
        finally:
            reader.close()
            maker.stop(timeout=5)  # its graceful shutdown waits on pending requests; nothing to keep here

        assert errors == []
        counts = count_records(target.bootstrap, TOPIC, 3)
        assert counts == {p: end for (_, p), end in ends.items()}
        # Exactly-once on: each transaction left a commit marker, so the target's offsets run ahead.
        target_ends = end_offsets(target.bootstrap, {TOPIC: 3})
        assert all(target_ends[(TOPIC, p)] > counts[p] for p in counts)
        assert "not.mirrored" not in _topics(target.bootstrap)
        # MM2's translation never skips: the record a switched consumer reads first is at or before the next one.
        log = gp.source_log(source.bootstrap, TOPIC, 0)
        following = gp.next_record(target.bootstrap, TOPIC, 0, synced)
        assert gp.displacement(log, POSITION.offset, following) <= 0
        # Nothing of MM2's on the source: no internal topics, no offset syncs, no heartbeats.
        assert _topics(source.bootstrap) == source_topics
