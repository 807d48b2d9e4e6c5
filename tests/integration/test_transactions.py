"""Committed and aborted transactions interleaved on Apache Kafka: copied exactly, groups moved exactly.

Three transactional producers and a plain one write to the same partitions in turn
(harness/data/transactions.py): one transaction's records sit between another's, a commit marker
right before an abort marker, an aborted transaction alone, and a transaction still open when the
first run plans. That run (through Spark) stops at the last stable offset: the open transaction's
records and everything after them, committed or not, wait for the next run, which copies them
once it commits. Both runs verify. Then groups committed at every marker, right after every
marker, inside the aborted ranges and at the end are synced: each lands where the target holds
the next committed record (an oracle independent of the ledger: the committed records before it),
proven the same record, and consumers of the groups on the target read what they would have read
on the source.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.data.group_clients import commit, resume_records
from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic
from harness.data.topics import log_range
from harness.data.transactions import Interleaved, layout
from kafka_migration.groups.sync import GroupSyncOptions, sync_groups
from kafka_migration.ledger import Ledger
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.model.groups import BOTH_AT_END, SAME_RECORD, SYNCED
from kafka_migration.run.pipeline import run_migration
from kafka_migration.spark.submit import SparkLauncher
from tests.runs import verified_run

pytestmark = [pytest.mark.integration, pytest.mark.spark]

BEFORE_OPEN = [
    ("plain", "write", 2),
    ("A", "begin"),
    ("B", "begin"),
    ("A", "write", 2),
    ("B", "write", 2),  # B's records between A's
    ("A", "write", 1),
    ("B", "write", 1),
    ("A", "commit"),
    ("B", "abort"),  # a commit marker, then right after it an abort marker
    ("plain", "write", 1),
    ("C", "begin"),
    ("C", "write", 3),
    ("C", "abort"),  # an aborted range alone
    ("B", "begin"),
    ("B", "write", 2),
    ("A", "begin"),
    ("A", "write", 2),
    ("B", "write", 1),
    ("B", "commit"),
    ("A", "abort"),
]
WHILE_OPEN = [
    ("open", "begin"),
    ("open", "write", 2),  # still open when the first run plans
    ("A", "begin"),
    ("A", "write", 2),
    ("A", "commit"),  # committed, but after the open transaction's first record
    ("plain", "write", 2),
]
AFTER = [("open", "write", 1), ("open", "commit"), ("plain", "write", 1)]


def test_interleaved_transactions_copy_exactly_and_groups_move_exactly(  # type: ignore[no-untyped-def]
    clusters, unique: str, tmp_path: Path
) -> None:
    topic = f"tx{unique}"
    create_topic(clusters.source, topic, 2)
    writer = Interleaved(clusters.source, topic, (0, 1))
    writer.play(BEFORE_OPEN)
    last_stable = log_range(clusters.source, topic, 0)[1]  # where the open transaction's first record lands
    writer.play(WHILE_OPEN)

    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    source = ClusterConfig("source", {"bootstrap.servers": clusters.source})
    target = ClusterConfig("target", {"bootstrap.servers": clusters.target})
    first = run_migration(source, target, MigrationOptions(include=topic), tmp_path, ledger, launch=SparkLauncher())
    assert first.verified, first.rows
    assert [p.end for p in first.plan.topic(topic).partitions] == [last_stable, last_stable]
    assert log_range(clusters.source, topic, 0)[1] > last_stable + 6  # more was written, left for the next run

    writer.play(AFTER)
    verified_run(clusters.source, clusters.target, topic, ledger)  # the rest, now committed
    layouts = {q: layout(clusters.source, topic, q) for q in (0, 1)}
    for q in (0, 1):
        assert without_offsets(read_partition(clusters.target, topic, q)) == without_offsets(list(layouts[q].records))
    lay = layouts[0]
    assert (len(lay.markers), len(lay.aborted), lay.end) == (7, 8, 32)  # as the script writes them

    # Every position users get hurt by: at and right after each marker, inside the aborted ranges, the end.
    positions = sorted({*lay.markers, *(m + 1 for m in lay.markers), *lay.aborted[::2], lay.end})
    positions += positions[-1:] * (len(positions) % 2)
    groups = {f"tx{unique}-g{i:02d}": (positions[2 * i], positions[2 * i + 1]) for i in range(len(positions) // 2)}
    for group, (p0, p1) in groups.items():
        commit(clusters.source, group, {(topic, 0): p0, (topic, 1): p1})
    result = sync_groups(source, target, ledger, GroupSyncOptions(groups=f"tx{unique}-g.*"))

    assert {p.outcome for p in result.partitions} == {SYNCED}, [(p.name(), p.reason) for p in result.failures()]
    for synced in result.partitions:
        offset = groups[synced.group_id][synced.partition]
        here = layouts[synced.partition]
        expected_proof = SAME_RECORD if here.next_record(offset) is not None else BOTH_AT_END
        assert (synced.target_offset, synced.proof) == (here.target_offset(offset), expected_proof), offset

    # Consumers of three of the groups, on the target, read next what they would have read on the source.
    for group in list(groups)[:: max(1, len(groups) // 3)][:3]:
        resumed = resume_records(clusters.target, group, topic, [q for q in (0, 1) if _more(layouts, groups, group, q)])
        for q, got in resumed.items():
            expected = layouts[q].next_record(groups[group][q])
            assert expected is not None
            assert (got["key"], got["value"], got["headers"]) == (
                expected["key"],
                expected["value"],
                expected["headers"],
            )


def _more(layouts, groups, group: str, partition: int) -> bool:  # type: ignore[no-untyped-def]
    """Whether the group has a committed record left to read in the partition."""
    return layouts[partition].next_record(groups[group][partition]) is not None
