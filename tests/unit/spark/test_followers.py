"""kafka_migration.spark.followers: which migrate tasks copy, and which follow a copy to verify it (no Spark)."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_migration.spark.driver_jobs import SMALL_SLICE_OFFSETS, group_slices
from kafka_migration.spark.executor_tasks import COPY, FOLLOW, MIGRATE
from kafka_migration.spark.followers import migrate_units
from tests.unit.factories import topic_plan


class TestMigrateUnits:
    def _tasks(self, *spans: int) -> list[list[Any]]:
        return group_slices(topic_plan("t", spans).slices(include_empty=True))

    def test_followers_come_after_every_copy(self) -> None:
        big = SMALL_SLICE_OFFSETS + 1
        tasks = self._tasks(big, 10, big)
        units = migrate_units(tasks, slots=5)
        assert [(mode, [s.partition for s in task]) for mode, task in units] == [
            (COPY, [0]), (COPY, [2]), (MIGRATE, [1]), (FOLLOW, [0]), (FOLLOW, [2])]  # fmt: skip

    @pytest.mark.parametrize("slots", [1, 2, 4])
    def test_no_followers_without_a_slot_for_each(self, slots: int) -> None:
        big = SMALL_SLICE_OFFSETS + 1
        tasks = self._tasks(big, 10, big)  # 3 tasks + 2 followers: 5 slots needed
        assert migrate_units(tasks, slots) == [(MIGRATE, task) for task in tasks]

    def test_small_slices_are_never_followed(self) -> None:
        tasks = self._tasks(SMALL_SLICE_OFFSETS)
        assert migrate_units(tasks, slots=8) == [(MIGRATE, tasks[0])]
