"""A compacted Apache Kafka topic whose log cleaner has run: copied exactly, verified, its groups moved exactly.

Six rounds of updates to eight keys per partition, with tombstones in the middle rounds (superseded
later) and in the last one (the key's final state), then the cleaner (harness/data/compaction.py):
most offsets are gone, the gaps are irregular, and the tombstones are gone too once
``delete.retention.ms`` passed. One run through Spark copies the surviving records densely to the
target and verifies them; groups committed inside removed ranges, on a removed tombstone and at
the end move to the target offset of the next surviving record, proven the same record, and a
consumer of the group on the target reads next what it would have read on the source.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.data.compaction import CLEANER_CONFIGS, wait_until_compacted
from harness.data.group_clients import commit, resume_records
from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic, producer, send
from kafka_migration.groups.sync import GroupSyncOptions, sync_groups
from kafka_migration.ledger import Ledger
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.model.groups import BOTH_AT_END, SAME_RECORD, SYNCED
from kafka_migration.run.pipeline import run_migration
from kafka_migration.spark.submit import SparkLauncher

pytestmark = [pytest.mark.integration, pytest.mark.spark]

ROUNDS, KEYS = 6, 8
WRITTEN = ROUNDS * KEYS  # offsets 0..47 of each partition


def _value(round_: int, key: int) -> bytes | None:
    if (round_ == 3 and key % 3 == 0) or (round_ == ROUNDS - 1 and key in (1, 5)):
        return None  # tombstones: superseded by round 4 and 5 values, or the key's last word
    return f"round {round_} of key {key}".encode()


def test_a_compacted_topic_copies_exactly_and_its_groups_move_to_the_next_surviving_record(  # type: ignore[no-untyped-def]
    clusters, unique: str, tmp_path: Path
) -> None:
    topic = f"compacted{unique}"
    create_topic(clusters.source, topic, 2, CLEANER_CONFIGS)
    p = producer(clusters.source)
    long_ago = int(time.time() * 1000) - 600_000
    for round_ in range(ROUNDS):  # a second between rounds (by timestamp): each round in segments of its own
        for key in range(KEYS):
            for partition in (0, 1):
                headers = [("round", str(round_).encode())]
                send(
                    p,
                    topic,
                    partition,
                    f"key-{key}".encode(),
                    _value(round_, key),
                    headers=headers,
                    timestamp=long_ago + round_ * 1000,
                )
        p.flush(10)
    survivors = {q: wait_until_compacted(clusters.source, topic, q, WRITTEN) for q in (0, 1)}
    offsets = [r["offset"] for r in survivors[0]]
    assert offsets[:6] == [40, 42, 43, 44, 46, 47]  # only round 5 is left, without its two tombstones
    assert all(r["value"] is not None for q in (0, 1) for r in survivors[q])

    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    source = ClusterConfig("source", {"bootstrap.servers": clusters.source})
    target = ClusterConfig("target", {"bootstrap.servers": clusters.target})
    outcome = run_migration(source, target, MigrationOptions(include=topic), tmp_path, ledger, launch=SparkLauncher())
    assert outcome.verified, outcome.rows
    for q in (0, 1):
        copied = read_partition(clusters.target, topic, q)
        assert without_offsets(copied) == without_offsets(survivors[q])  # every surviving record, nothing else
        assert [r["offset"] for r in copied] == list(range(len(survivors[q])))  # dense on the target
    plan = outcome.plan.topic(topic)
    assert plan.configs["cleanup.policy"] == "compact"
    assert plan.configs["delete.retention.ms"] == "100"  # the topic's overrides travelled

    end = survivors[0][-1]["offset"] + 1
    group = f"compacted{unique}-app"
    committed = {
        (topic, 0): 10,  # inside the removed rounds 0..4: next survivor is 40, target offset 0
        (topic, 1): 41,  # on a removed tombstone: next survivor 42, target offset 1
    }
    commit(clusters.source, group, committed)
    at_end = f"compacted{unique}-done"
    commit(clusters.source, at_end, {(topic, 0): end})
    result = sync_groups(source, target, ledger, GroupSyncOptions(groups=f"compacted{unique}-(app|done)"))
    by_group = {(p.group_id, p.partition): p for p in result.partitions}
    assert [(by_group[group, q].target_offset, by_group[group, q].proof) for q in (0, 1)] == [
        (0, SAME_RECORD),
        (1, SAME_RECORD),
    ]
    assert (by_group[at_end, 0].target_offset, by_group[at_end, 0].proof) == (len(survivors[0]), BOTH_AT_END)
    assert {p.outcome for p in result.partitions} == {SYNCED}

    # A consumer of the group on the target reads next exactly what it would have read on the source.
    resumed = resume_records(clusters.target, group, topic, [0, 1])
    for q, offset in ((0, 10), (1, 41)):
        expected = next(r for r in survivors[q] if r["offset"] >= offset)
        got = resumed[q]
        assert (got["key"], got["value"], got["headers"]) == (expected["key"], expected["value"], expected["headers"])
