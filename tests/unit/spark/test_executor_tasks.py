"""kafka_migration.spark.executor_tasks: what one migrate task runs, with stand-ins for Kafka (no Spark)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from kafka_migration.exceptions import CopyError
from kafka_migration.spark.executor_tasks import COPY_FAILED, _migrate_rows
from tests.unit.factories import CLUSTERS, topic_plan


@dataclass(frozen=True)
class _Result:
    source_topic: str
    partition: int
    seconds: float = 0.25
    error: str | None = None


class TestMigrateTask:
    """``_migrate_rows``, the body of one migrate task, with stand-ins for the copy and verify functions."""

    def _run(self, monkeypatch: pytest.MonkeyPatch, copy_errors: set[int]) -> tuple[list[dict[str, Any]], list[Any]]:
        import kafka_migration.run.copy
        import kafka_migration.run.verify
        from kafka_migration.run.progress import run_guarded_all

        verified: list[Any] = []

        def copy(slices, clusters, address):  # type: ignore[no-untyped-def]
            def one(s, *_: Any, **__: Any) -> _Result:  # type: ignore[no-untyped-def]
                if s.partition in copy_errors:
                    raise CopyError("target down")
                return _Result(s.source_topic, s.partition)

            return run_guarded_all(
                one, lambda s, m: _Result(s.source_topic, s.partition, 0.0, m), slices, clusters, address
            )

        def verify(slices, clusters, address):  # type: ignore[no-untyped-def]
            verified.extend(slices)  # what verification is given: slices and cluster settings, nothing of the copy
            return [_Result(s.source_topic, s.partition) for s in slices]

        monkeypatch.setattr(kafka_migration.run.copy, "copy_partitions_safely", copy)
        monkeypatch.setattr(kafka_migration.run.verify, "verify_partitions_safely", verify)
        task = topic_plan("a", (3, 0, 4)).slices(include_empty=True)
        return _migrate_rows(task, CLUSTERS, None, None), verified

    def test_copies_non_empty_slices_then_verifies_every_slice(self, monkeypatch: pytest.MonkeyPatch) -> None:
        rows, verified = self._run(monkeypatch, set())
        assert [(r["step"], r["partition"]) for r in rows] == [
            ("copy", 0),
            ("copy", 2),
            ("verify", 0),
            ("verify", 1),
            ("verify", 2),
        ]
        assert [s.partition for s in verified] == [0, 1, 2]
        copies = [r for r in rows if r["step"] == "copy"]
        assert all(r["started"] <= r["ended"] for r in rows)  # stamps from run_guarded_all
        assert copies[0]["ended"] <= copies[1]["started"]
        assert all(
            r["ended"] - r["started"] == pytest.approx(0.25) for r in rows if r["step"] == "verify"
        )  # laid end to end

    def test_a_slice_whose_copy_failed_is_not_verified(self, monkeypatch: pytest.MonkeyPatch) -> None:
        rows, verified = self._run(monkeypatch, {2})
        assert [s.partition for s in verified] == [0, 1]
        (skipped,) = [r for r in rows if r["step"] == "verify" and r["partition"] == 2]
        assert skipped["error"] == COPY_FAILED and not skipped["match"]
        (failed,) = [r for r in rows if r["step"] == "copy" and r["error"]]
        assert failed["partition"] == 2 and "target down" in failed["error"]
