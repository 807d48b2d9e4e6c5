"""kafka_migration.run.progress.run_guarded_all: a Spark task's slices, failures reported, timeouts not repeated."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_migration.exceptions import ClusterTimeoutError, CopyError
from kafka_migration.run.progress import ProgressCollector, run_guarded_all


@dataclass(frozen=True)
class Slice:
    source_topic: str
    partition: int


def _failed(task: Slice, message: str) -> tuple[int, str]:
    return (task.partition, message)


def _work(errors: dict[int, Exception], attempted: list[int]):  # type: ignore[no-untyped-def]
    def work(task: Slice, source: Any, target: Any, progress: Any) -> tuple[int, str]:
        attempted.append(task.partition)
        if task.partition in errors:
            raise errors[task.partition]
        return (task.partition, "ok")

    return work


SLICES = [Slice("orders", p) for p in range(4)]


def test_every_slice_runs_and_a_plain_failure_does_not_stop_the_others() -> None:
    attempted: list[int] = []
    results = run_guarded_all(_work({1: CopyError("foreign records")}, attempted), _failed, SLICES, {}, {}, None)
    assert attempted == [0, 1, 2, 3]
    assert results == [(0, "ok"), (1, "foreign records"), (2, "ok"), (3, "ok")]


def test_after_a_cluster_timeout_the_remaining_slices_are_not_attempted() -> None:
    attempted: list[int] = []
    lost = ClusterTimeoutError("The target cluster b:9092 sent nothing for 60s (socket.timeout.ms)")
    results = run_guarded_all(_work({1: lost}, attempted), _failed, SLICES, {}, {}, None)
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
