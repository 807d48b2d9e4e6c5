"""kafka_migration.run.progress.run_guarded_all: a Spark task's slices, failures reported, timeouts not repeated."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from kafka_migration.exceptions import ClusterTimeoutError, CopyError
from kafka_migration.run.progress import ProgressCollector, run_guarded_all
from tests.unit.factories import CLUSTERS


@dataclass(frozen=True)
class Slice:
    source_topic: str
    partition: int


def _failed(task: Slice, message: str) -> tuple[int, str]:
    return (task.partition, message)


def _work(errors: dict[int, Exception], attempted: list[int]):  # type: ignore[no-untyped-def]
    def work(task: Slice, clusters: Any, progress: Any) -> tuple[int, str]:
        attempted.append(task.partition)
        if task.partition in errors:
            raise errors[task.partition]
        return (task.partition, "ok")

    return work


SLICES = [Slice("orders", p) for p in range(4)]


def test_every_slice_runs_and_a_plain_failure_does_not_stop_the_others() -> None:
    attempted: list[int] = []
    results = run_guarded_all(_work({1: CopyError("foreign records")}, attempted), _failed, SLICES, CLUSTERS, None)
    assert attempted == [0, 1, 2, 3]
    assert results == [(0, "ok"), (1, "foreign records"), (2, "ok"), (3, "ok")]


def test_after_a_cluster_timeout_the_remaining_slices_are_not_attempted() -> None:
    attempted: list[int] = []
    lost = ClusterTimeoutError("The target cluster b:9092 sent nothing for 60s (socket.timeout.ms)")
    results = run_guarded_all(_work({1: lost}, attempted), _failed, SLICES, CLUSTERS, None)
    assert attempted == [0, 1]  # slices 2 and 3 would each have waited another 60 s
    assert results[:2] == [(0, "ok"), (1, str(lost))]
    for partition, message in results[2:]:
        assert message == f"not attempted: orders[1] found: {lost}", partition


def test_collector_exit_wakes_its_receiver_instead_of_waiting_out_the_timeout() -> None:
    """Each step's end used to wait up to the receive timeout (0.5 s per collector, two per run)."""
    collector = ProgressCollector("copy", 10)
    collector._sock.settimeout(60)  # far longer than __exit__'s join: only the wake-up can end the thread in time
    with collector:
        pass
    assert not any(thread.is_alive() for thread in collector._threads)


def test_snapshot_writer_keeps_a_whole_file_with_each_partition_in_flight_and_finished_topics(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The console reads a running run's progress from this file while the driver replaces it."""
    from kafka_migration.run.progress import ProgressSender, SnapshotWriter, read_snapshots, snapshot_path

    path = snapshot_path(tmp_path / "copy-job0.json")
    assert path.name == "copy-job0.progress"
    copy = ProgressCollector("copy", 300)
    verify = ProgressCollector("verify", 300)
    with copy, verify, SnapshotWriter(path, "run-7", "migrate", {"copy": copy, "verify": verify}, every=0.05):
        assert read_snapshots(tmp_path)[0]["steps"]["copy"]["partitions"] == []  # written at once, before any datagram
        sender = ProgressSender(copy.address, "orders", 2, every=0)
        sender.update(40, 4000)
        sender.update(70, 7000)
        sender.close()
        copy.topic_done("audit", 100, 9000, topics=2)
        deadline = time.monotonic() + 10
        while True:
            (snap,) = read_snapshots(tmp_path)
            partitions = snap["steps"]["copy"]["partitions"]
            if partitions and partitions[0][2] == 70:
                break
            assert time.monotonic() < deadline, f"the datagrams never reached the snapshot: {snap}"
            time.sleep(0.05)
        (topic, partition, records, size, seconds) = partitions[0]
        assert (topic, partition, records, size) == ("orders", 2, 70, 7000) and seconds >= 0
        assert snap["steps"]["copy"]["done"] == {"audit": [100, 9000]}
        assert snap["steps"]["verify"] == {"total": 300, "partitions": [], "done": {}}
        assert (snap["run_id"], snap["step"], snap["finished"]) == ("run-7", "migrate", False)
    (last,) = read_snapshots(tmp_path)
    assert last["finished"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy-job0.progress"]  # no temporary file left


def test_read_snapshots_leaves_out_what_it_cannot_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from kafka_migration.run.progress import read_snapshots

    (tmp_path / "copy-job0.progress").write_text('{"version": 1, "steps": {}}')
    (tmp_path / "copy-job1.progress").write_text('{"version": 1, "ste')  # cut off
    (tmp_path / "copy-job2.progress").write_text('{"version": 99}')  # a format this code does not know
    (tmp_path / "copy-job0.json").write_text("{}")  # results, not a snapshot
    assert read_snapshots(tmp_path) == [{"version": 1, "steps": {}}]
    assert read_snapshots(tmp_path / "missing") == []
