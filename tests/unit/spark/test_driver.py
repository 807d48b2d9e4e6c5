"""kafka_migration.spark.driver: which of the plan's jobs a driver runs, and the go/abort FIFO (no Spark)."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_migration.spark.driver import select_jobs, wait_for_go
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


class TestWaitForGo:
    """The driver's side of the go/abort FIFO (the launcher holds it open read-write, see spark/submit.py)."""

    def _fifo(self, tmp_path: Any) -> tuple[Any, int]:
        import os

        path = tmp_path / "go"
        os.mkfifo(path, 0o600)
        return path, os.open(path, os.O_RDWR)

    def _wait(self, path: Any) -> tuple[Any, list[bool]]:
        import threading

        answer: list[bool] = []
        thread = threading.Thread(target=lambda: answer.append(wait_for_go(path)))
        thread.start()
        return thread, answer

    def test_go_written_before_the_driver_looks(self, tmp_path: Any) -> None:
        import os

        path, fd = self._fifo(tmp_path)
        os.write(fd, b"go\n")  # the driver was slower than the plan: the line waits in the FIFO
        assert wait_for_go(path) is True
        os.close(fd)

    def test_abort_and_a_vanished_launcher_both_mean_stop(self, tmp_path: Any) -> None:
        import os

        path, fd = self._fifo(tmp_path)
        thread, answer = self._wait(path)
        os.write(fd, b"abort\n")
        thread.join(10)
        assert answer == [False]
        thread, answer = self._wait(path)
        os.close(fd)  # the launcher is gone (or closed without a word): end of file
        thread.join(10)
        assert answer == [False]
        assert wait_for_go(path) is False  # no launcher at all: nothing to wait for
