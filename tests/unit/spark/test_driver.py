"""kafka_migration.spark.driver: which of the plan's jobs a driver runs (no Spark; its FIFO: test_gate.py)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from kafka_migration.spark import driver
from kafka_migration.spark.driver import select_jobs, spark_up
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


def test_the_launcher_knows_the_driver_is_up_from_the_line_it_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The line the driver logs once it waits for its plan, formatted as its output is (driver.main's basicConfig),
    is what ``spark_up`` knows; the launcher's lead census stops there (run/census.lead_census)."""
    monkeypatch.setattr(driver, "warm_workers", lambda sc, target: None)
    channel = tmp_path / "go"
    channel.write_text("abort\n")
    with caplog.at_level(logging.INFO, logger="kafka_migration.spark"):
        assert driver._warm_and_wait(object(), "migrate", channel, time.time()) is None  # told to stop
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    lines = [formatter.format(record) for record in caplog.records]
    assert [spark_up(line) for line in lines] == [True]
    assert not spark_up("INFO kafka_migration.spark: copy progress: Spark is up (a record's text)")
    assert not spark_up("INFO other.logger: migrate: Spark is up (context 1.0s)")
