"""The ledger on both backends (SQLite and PostgreSQL): runs, evidence, checkpoints, translation."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from kafka_migration.ledger import Ledger
from kafka_migration.model.plan import ClusterInfo, MigrationPlan, PartitionPlan, TopicPlan
from kafka_migration.model.results import OK, TopicOutcome

SOURCE = ClusterInfo("source", "s:9092", "src-cluster", 3)
TARGET = ClusterInfo("target", "t:9092", "tgt-cluster", 3)


def plan(run_id: str, start: int, end: int, target_start: int) -> MigrationPlan:
    topic = TopicPlan(
        "orders",
        "copy.orders",
        (PartitionPlan(0, start, end, target_start, 0, end), PartitionPlan(1, start, end, target_start, 0, end)),
        3,
        {},
        {},
        create=start == 0,
    )
    return MigrationPlan(run_id, "now", SOURCE, TARGET, {"include": "orders"}, (topic,), {}, (("orders",),))


def outcomes(p: MigrationPlan, match: dict[int, bool], gap_at: int | None = None) -> tuple[TopicOutcome, TopicOutcome]:
    topic = p.topics[0]
    copy = TopicOutcome(
        "orders",
        "copy.orders",
        OK,
        1.0,
        [
            {"partition": x.partition, "records": x.end - x.start, "resumed_records": 0, "seconds": 1.0}
            for x in topic.partitions
        ],
    )
    verify_rows = []
    for x in topic.partitions:
        shift = 1 if gap_at is not None and x.end > gap_at else 0
        points = [[x.start, x.target_start]] + ([[gap_at + 1, x.target_start + gap_at - x.start]] if shift else [])
        verify_rows.append(
            {
                "partition": x.partition,
                "match": match[x.partition],
                "target_end": x.target_start + (x.end - x.start) - shift,
                "source_records": x.end - x.start - shift,
                "target_records": x.end - x.start - shift,
                "source_checksum": "sha256:a",
                "target_checksum": "sha256:a" if match[x.partition] else "sha256:b",
                "first_difference": None if match[x.partition] else "value differs",
                "first_source_offset": None if match[x.partition] else x.start,
                "first_target_offset": None if match[x.partition] else x.target_start,
                "seconds": 1.0,
                "offset_map": points,
            }
        )
    return copy, TopicOutcome("orders", "copy.orders", OK, 1.0, verify_rows)


def test_checkpoints_advance_only_for_verified_partitions(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    first = plan("run-1", 0, 100, 0)
    ledger.start_run(first, trigger="cli")
    ledger.start_run(first, trigger="cli")  # a retried planning task does not duplicate anything
    copy, verify = outcomes(first, {0: True, 1: False}, gap_at=50)
    ledger.record_topic(first, first.topics[0], copy, verify)
    ledger.finish_run("run-1", "mismatch", 200)

    cps = ledger.checkpoints("src-cluster", "tgt-cluster")
    assert set(cps) == {("orders", 0, "copy.orders")}
    assert (cps["orders", 0, "copy.orders"].source_offset, cps["orders", 0, "copy.orders"].target_offset) == (100, 99)
    pending = ledger.pending_segments("src-cluster", "tgt-cluster")
    assert set(pending) == {("orders", 1, "copy.orders")} and pending["orders", 1, "copy.orders"].source_start == 0
    assert ledger.known_topics("src-cluster", "tgt-cluster") == {"orders": "copy.orders"}
    assert ledger.checkpoints("src-cluster", "other-cluster") == {}

    assert ledger.translate("orders", 0, 10).target_offset == 10
    assert ledger.translate("orders", 0, 51).target_offset == 50  # after the gap at 50
    assert ledger.translate("orders", 0, 100).target_offset == 99  # the end: where a caught-up consumer resumes
    (run,) = ledger.runs()
    assert run.status == "mismatch" and run.records == 200 and run.ended_at is not None
    statuses = {s.partition: s.status for s in ledger.run_segments("run-1")}
    assert statuses == {0: "verified", 1: "mismatch"}


def test_second_run_continues_and_checkpoints_never_move_back(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    first = plan("run-1", 0, 100, 0)
    ledger.start_run(first, trigger="cli")
    ledger.record_topic(first, first.topics[0], *outcomes(first, {0: True, 1: True}))
    second = plan("run-2", 100, 150, 100)
    ledger.start_run(second, trigger="airflow", dag_id="kafka_nightly_sync", dag_run_id="scheduled__x")
    ledger.record_topic(second, second.topics[0], *outcomes(second, {0: True, 1: True}))
    assert ledger.checkpoints("src-cluster", "tgt-cluster")["orders", 1, "copy.orders"].source_offset == 150
    ledger.record_topic(first, first.topics[0], *outcomes(first, {0: True, 1: True}))  # replayed late: ignored
    assert ledger.checkpoints("src-cluster", "tgt-cluster")["orders", 1, "copy.orders"].source_offset == 150
    assert ledger.translate("orders", 1, 120).run_id == "run-2"
    assert [r.run_id for r in ledger.runs()] == ["run-2", "run-1"]
    assert ledger.pending_segments("src-cluster", "tgt-cluster") == {}
    Ledger.open(ledger_url)  # reopening runs the migrations again: a no-op


def test_record_topics_stores_many_topics_at_once_like_one_by_one(ledger_url: str) -> None:
    """The bulk path of a run of many topics: same segments, checkpoints and topic ids as topic by topic."""
    ledger = Ledger.open(ledger_url)
    base = plan("run-1", 0, 100, 0)
    topics = tuple(
        TopicPlan(f"t{i}", f"copy.t{i}", base.topics[0].partitions, 3, {}, {}, create=True, source_topic_id=f"id{i}")
        for i in range(3)
    )
    many = MigrationPlan("run-1", "now", SOURCE, TARGET, {}, topics, {}, (("t0", "t1", "t2"),))
    ledger.start_run(many, trigger="cli")
    results = []
    for i, topic in enumerate(topics):
        copy, verify = outcomes(base, {0: True, 1: i != 1})
        results.append((topic, copy, verify, f"target-id{i}"))
    ledger.record_topics(many, results)

    cps = ledger.checkpoints("src-cluster", "tgt-cluster")
    assert set(cps) == {(f"t{i}", p, f"copy.t{i}") for i in range(3) for p in (0, 1)} - {("t1", 1, "copy.t1")}
    statuses = {(s.source_topic, s.partition): s.status for s in ledger.run_segments("run-1")}
    assert statuses[("t1", 1)] == "mismatch" and statuses[("t2", 1)] == "verified"
    ids = ledger.topic_ids("src-cluster", "tgt-cluster")
    assert ids[("t2", "copy.t2")].source_topic_id == "id2" and ids[("t2", "copy.t2")].target_topic_id == "target-id2"
    assert ledger.translate("t2", 1, 10, target_topic="copy.t2").target_offset == 10

    again = plan("run-2", 100, 150, 100)  # a later run moves the same checkpoints forward in bulk
    later = tuple(
        TopicPlan(t.source_topic, t.target_topic, again.topics[0].partitions, 3, {}, {}, False) for t in topics
    )
    second = MigrationPlan("run-2", "now", SOURCE, TARGET, {}, later, {}, (("t0", "t1", "t2"),))
    ledger.start_run(second, trigger="cli")
    ledger.record_topics(second, [(t, *outcomes(again, {0: True, 1: True}), None) for t in later])
    assert ledger.checkpoints("src-cluster", "tgt-cluster")["t0", 1, "copy.t0"].source_offset == 150
    assert ledger.topic_ids("src-cluster", "tgt-cluster")[("t0", "copy.t0")].run_id == "run-2"


def test_a_ledger_names_itself_without_its_password(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    if ledger_url.startswith("sqlite"):
        assert ledger.label == ledger_url.removeprefix("sqlite:///")
    else:
        password = make_url(ledger_url).password
        assert ledger.label.startswith("postgresql") and make_url(ledger_url).database in ledger.label
        assert not password or str(password) not in ledger.label
    ledger.engine.dispose()


def test_a_named_sqlite_ledger_in_a_missing_folder_is_refused_and_nothing_created(tmp_path: Path) -> None:
    from kafka_migration.exceptions import ConfigurationError
    from kafka_migration.ledger.urls import check_named_sqlite_folder

    url = f"sqlite:///{tmp_path}/typo/ledger.db"
    with pytest.raises(ConfigurationError, match=r"given by --ledger is in a folder that does not exist"):
        check_named_sqlite_folder(url, "--ledger")
    assert not (tmp_path / "typo").exists()
    check_named_sqlite_folder(f"sqlite:///{tmp_path}/ledger.db", "--ledger")  # the folder exists: fine
    check_named_sqlite_folder("postgresql://u:p@h/db", "--ledger")  # not a file
