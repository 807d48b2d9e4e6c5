"""Small slices read together (ranges.read_ranges, copy_window, verify_window) on Apache Kafka.

A task of many small slices must open a bounded number of consumers, and every per-slice result
must be what the per-slice path (copy_partition, verify_partition) gives.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

import confluent_kafka
import pytest

from harness.data.read import read_partition
from harness.data.seed import KEEP_FOREVER, create_topic, producer, send
from kafka_migration.exceptions import CopyError
from kafka_migration.kafka.ranges import OffsetRange, read_all, read_ranges
from kafka_migration.kafka.reader import end_offset
from kafka_migration.model.config import ClusterPair
from kafka_migration.model.plan import MigrationPlan, PartitionSlice
from kafka_migration.run.copy import copy_partition, copy_partitions_safely
from kafka_migration.run.verify import verify_partition, verify_partitions_safely
from tests.integration.test_copy_verify import _plan_and_create

pytestmark = pytest.mark.integration

TOPICS = 4
PARTITIONS = 3
RECORDS = 40  # per partition


def _pair(clusters: Any) -> ClusterPair:
    return ClusterPair.of_settings({"bootstrap.servers": clusters.source}, {"bootstrap.servers": clusters.target})


def _seed(bootstrap: str, prefix: str, transactions: bool = True) -> list[str]:
    """TOPICS topics of PARTITIONS partitions; the first topic starts with committed transactions (offset gaps)."""
    names = [f"{prefix}.{t}" for t in range(TOPICS)]
    p = producer(bootstrap)
    for t, name in enumerate(names):
        create_topic(bootstrap, name, PARTITIONS, KEEP_FOREVER)  # timestamps from 1970
        if t == 0 and transactions:
            tx = producer(bootstrap, **{"transactional.id": f"{name}-tx"})
            tx.init_transactions(10)
            for n in range(2):
                tx.begin_transaction()
                for partition in range(PARTITIONS):
                    send(tx, name, partition, f"tx{n}".encode(), b"paid")
                tx.commit_transaction(10)
        for partition in range(PARTITIONS):
            for i in range(RECORDS):
                send(p, name, partition, f"k{i}".encode(), f"{name}-{partition}-{i}".encode(), timestamp=5000 + i)
    p.flush(30)
    return names


def _slices(plan: MigrationPlan) -> list[PartitionSlice]:
    return [s for topic in plan.topics for s in topic.slices(include_empty=True)]


class _CountedConsumers:
    """Counts real Consumer constructions (still the real class, against the real broker)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.made = 0
        real = confluent_kafka.Consumer
        counter = self

        class Counted(real):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                counter.made += 1
                super().__init__(*args, **kwargs)

        monkeypatch.setattr(confluent_kafka, "Consumer", Counted)


def test_read_ranges_reads_many_partitions_bounded_open_ended_and_empty(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    names = _seed(clusters.source, f"ranges.{unique}")
    source = _pair(clusters).source
    full = {(n, p): read_partition(clusters.source, n, p) for n in names for p in range(PARTITIONS)}
    gapped = full[(names[0], 1)]
    assert gapped[10]["offset"] > 10  # the transactions' commit markers leave gaps
    ranges = [
        OffsetRange(names[0], 1, 0, gapped[10]["offset"]),  # bounded, through the gaps
        OffsetRange(names[1], 0, 5, None),  # open-ended: to the high watermark
        OffsetRange(names[1], 2, 7, 7),  # empty
        OffsetRange(names[2], 1, full[(names[2], 1)][-1]["offset"] + 1, None),  # open-ended, at the end already
        OffsetRange(names[3], 2, 3, 20),
    ]
    got = read_all(source, ranges)
    expected = [
        gapped[:10],
        full[(names[1], 0)][5:],
        [],
        [],
        full[(names[3], 2)][3:20],
    ]
    assert [[m.offset() for m in batch] for batch in got] == [[r["offset"] for r in e] for e in expected]
    assert [m.value() for m in got[1]] == [r["value"] for r in expected[1]]
    # Each range reports done exactly once, after its last records.
    done = [i for i, _batch, finished in read_ranges(source, ranges) if finished]
    assert sorted(done) == list(range(len(ranges)))


def test_read_ranges_names_a_start_past_the_end(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    """A start the partition does not reach: Apache Kafka answers OFFSET_OUT_OF_RANGE, a CopyError naming
    topic[partition] and offset (the range that cannot be read, not the others)."""
    names = _seed(clusters.source, f"ranges.gone.{unique}", transactions=False)
    ranges = [OffsetRange(names[0], 0, 0, 10), OffsetRange(names[1], 2, 10_000, 10_010)]
    with pytest.raises(CopyError, match=rf"{names[1]}\[2\].* at offset 10000"):
        read_all(_pair(clusters).source, ranges, idle_timeout=2.0)


def test_a_task_of_small_slices_opens_few_consumers_with_per_slice_results(clusters, unique, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    prefix = f"win.{unique}"
    _seed(clusters.source, prefix)
    plan = _plan_and_create(clusters, f"{prefix}.*")
    slices = _slices(plan)
    assert len(slices) == TOPICS * PARTITIONS
    pair = _pair(clusters)
    # Topics created a moment ago answer NOT_LEADER until their leaders are ready, and end_offset asks
    # again with a new consumer: wait for that first, so that the count below is the copy's own.
    for piece in slices:
        end_offset(pair.target, piece.target_topic, piece.partition)
    counted = _CountedConsumers(monkeypatch)
    copied = copy_partitions_safely(slices, pair)
    copy_consumers = counted.made
    verified = verify_partitions_safely(slices, pair)
    verify_consumers = counted.made - copy_consumers
    # Per slice it was 1 (read) + 2 (verify); end offsets share one cached consumer per cluster.
    assert copy_consumers <= 2, copy_consumers
    assert verify_consumers == 2, verify_consumers
    assert len(copied.stamps) == len(verified.stamps) == len(slices)
    for piece, c, v in zip(slices, copied, verified, strict=True):
        assert c.error is None and (c.source_topic, c.partition) == (piece.source_topic, piece.partition)
        assert c.records == len(read_partition(clusters.target, piece.target_topic, piece.partition))
        alone = verify_partition(piece, pair)  # the per-slice path's verdict
        assert v.match
        assert {**asdict(v), "seconds": 0} == {**asdict(alone), "seconds": 0}
    for started, ended in copied.stamps + verified.stamps:
        assert started <= ended


@pytest.mark.parametrize("case", ["changed", "missing", "extra"])
def test_verify_window_names_the_one_slice_that_differs(clusters, unique, monkeypatch, case: str) -> None:  # type: ignore[no-untyped-def]
    prefix = f"win.bad.{unique}"
    _seed(clusters.source, prefix)
    plan = _plan_and_create(clusters, f"{prefix}.*")
    slices = _slices(plan)
    pair = _pair(clusters)
    victim = next(s for s in slices if s.source_topic.endswith(".0") and s.partition == 1)  # the gapped one
    source = [r for r in read_partition(clusters.source, victim.source_topic, 1) if r["offset"] < victim.end]
    at = 12  # target position of the victim record; its source offset is larger (commit markers)
    bad = source[at]
    assert bad["offset"] > at
    others = [s for s in slices if s is not victim]
    assert all(r.error is None for r in copy_partitions_safely(others, pair))
    if case == "extra":
        copy_partition(victim, pair)
        w = producer(clusters.target)
        send(w, victim.target_topic, 1, b"intruder", b"extra")
        w.flush(10)
    else:
        copy_partition(replace(victim, end=bad["offset"]), pair)
        if case == "changed":
            w = producer(clusters.target)
            send(w, victim.target_topic, 1, bad["key"], b"tampered", timestamp=bad["timestamp"])
            w.flush(10)
        copy_partition(replace(victim, start=bad["offset"] + 1, target_start=at + (case == "changed")), pair)
    counted = _CountedConsumers(monkeypatch)
    verified = verify_partitions_safely(slices, pair)
    # One consumer per cluster for the whole window (per slice: two each); a slice whose target read short is read
    # once more after a pause, alone (verify.SETTLE_SECONDS: a new leader's high watermark may lag).
    assert counted.made == (4 if case == "missing" else 2)
    alone = verify_partition(victim, pair)
    for piece, v in zip(slices, verified, strict=True):
        if piece is not victim:
            assert v.match and v.error is None, v
            continue
        assert not v.match and v.error is None
        expected = {
            "changed": (bad["offset"], at, "value differs"),
            "missing": (bad["offset"], at, None),
            "extra": (None, len(source), "extra record on the target"),
        }[case]
        assert (v.first_source_offset, v.first_target_offset) == expected[:2]
        if expected[2] is not None:
            assert v.first_difference == expected[2]
        assert {**asdict(v), "seconds": 0} == {**asdict(alone), "seconds": 0}


def test_copy_window_resumes_a_prefix_and_refuses_a_foreign_record(clusters, unique, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    prefix = f"win.resume.{unique}"
    _seed(clusters.source, prefix, transactions=False)
    plan = _plan_and_create(clusters, f"{prefix}.*")
    slices = _slices(plan)
    pair = _pair(clusters)
    resumed, foreign = slices[4], slices[7]
    copy_partition(replace(resumed, end=resumed.start + 15), pair)  # an interrupted attempt's prefix
    w = producer(clusters.target)
    send(w, foreign.target_topic, foreign.partition, b"intruder", b"not ours")
    w.flush(10)
    counted = _CountedConsumers(monkeypatch)
    copied = copy_partitions_safely(slices, pair)
    # One end-offset consumer and one window read; the two slices handed back reconcile alone
    # (target and source reads each, and the resumed one's rest). Per slice it was at least 12 reads.
    assert counted.made <= 7, counted.made
    for piece, c in zip(slices, copied, strict=True):
        planned = piece.end - piece.start
        if piece is resumed:
            assert (c.error, c.resumed_records, c.records) == (None, 15, planned - 15)
        elif piece is foreign:
            assert c.records == 0 and c.error is not None
            assert f"target {foreign.target_topic}[{foreign.partition}] offset 0 holds a record" in c.error
        else:
            assert (c.error, c.resumed_records, c.records) == (None, 0, planned)
        target = read_partition(clusters.target, piece.target_topic, piece.partition)
        assert len(target) == (1 if piece is foreign else planned)
    verified = verify_partitions_safely(slices, pair)
    assert [v.match for v in verified] == [piece is not foreign for piece in slices]
