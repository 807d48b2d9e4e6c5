"""kafka_migration.spark.driver: which of the plan's jobs a driver runs (no Spark; its FIFO: test_gate.py)."""

from __future__ import annotations

import pytest

from kafka_migration.spark.driver import select_jobs
from tests.unit.factories import migration_plan, topic_plan


def _plan_with_jobs(n: int):  # type: ignore[no-untyped-def]
    topics = [topic_plan(f"t{i}") for i in range(n)]
    return migration_plan(*topics, jobs=tuple((t.source_topic,) for t in topics))


class TestSelectJobs:
    @pytest.mark.parametrize("jobs", [[], ["all"], ["1", "all"]])
    def test_all(self, jobs: list[str]) -> None:
        assert select_jobs(_plan_with_jobs(3), jobs) == [0, 1, 2]

    def test_repeated_and_comma_separated_sorted_and_deduplicated(self) -> None:
        assert select_jobs(_plan_with_jobs(4), ["3", "0,2", "2,"]) == [0, 2, 3]

    def test_single(self) -> None:
        assert select_jobs(_plan_with_jobs(4), ["1"]) == [1]

    @pytest.mark.parametrize("job", ["3", "-1"])
    def test_out_of_range_names_job_and_count(self, job: str) -> None:
        with pytest.raises(SystemExit, match=rf"job {job} is not in the plan \(it has 3 jobs\)"):
            select_jobs(_plan_with_jobs(3), [job])

    def test_plan_without_jobs(self) -> None:
        assert select_jobs(_plan_with_jobs(0), ["all"]) == []
        with pytest.raises(SystemExit, match="it has 0 jobs"):
            select_jobs(_plan_with_jobs(0), ["0"])
