"""Who takes the census a schema sync asks for (run/pipeline._census_taker), without a cluster: this process,
bounded, in a dry run; the run's application before its copy is released; an application of its own when the run's
cannot wait; nobody when there is nothing to copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafka_migration.model.census import Census, Sighting
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.schemas import RecordPart
from kafka_migration.run import pipeline
from tests.unit.factories import migration_plan, topic_plan

SOURCE = ClusterConfig.build("source", "src:9092")
TARGET = ClusterConfig.build("target", "dst:9092")
FOUND = Census((Sighting("a", 0, RecordPart.VALUE, 7, 0),), 1, 1)


class App:
    def __init__(self) -> None:
        self.asked: list[MigrationPlan] = []

    def census(self, plan: MigrationPlan) -> Census:
        self.asked.append(plan)
        return FOUND

    def up(self) -> bool:
        return True


class Launch:
    def __init__(self) -> None:
        self.asked: list[tuple[Any, ...]] = []

    def census(self, *args: Any) -> Census:
        self.asked.append(args)
        return FOUND


def test_each_kind_of_run_takes_its_census_where_it_can(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bounded: list[tuple[MigrationPlan, Any]] = []
    monkeypatch.setattr(pipeline, "bounded_census", lambda plan, source: bounded.append((plan, source)) or FOUND)
    led: list[tuple[Any, ...]] = []

    def lead(plan: MigrationPlan, source: Any, up: Any, rest: Any) -> Census:  # this process, then the driver
        led.append((source.role, up(), rest))
        return rest(plan)

    monkeypatch.setattr(pipeline, "lead_census", lead)
    plan = migration_plan(topic_plan("a", (3,)))
    app, launch = App(), Launch()

    def take(dry_run: bool, with_app: bool) -> Census:
        options = MigrationOptions(include="a", dry_run=dry_run)
        return pipeline._census_taker(options, (SOURCE, TARGET), app if with_app else None, launch, tmp_path)(plan)  # type: ignore[arg-type]

    assert take(dry_run=True, with_app=False) == FOUND and [p for p, _ in bounded] == [plan]
    assert bounded[0][1].role == "source" and bounded[0][1].settings["bootstrap.servers"] == "src:9092"
    assert take(dry_run=False, with_app=True) == FOUND and app.asked == [plan]
    assert led == [("source", True, app.census)]  # the lead census, handing the rest to the run's application
    assert take(dry_run=False, with_app=False) == FOUND and launch.asked == [(tmp_path, plan, SOURCE, TARGET)]
    nothing = migration_plan(topic_plan("a", (0,)))
    taker = pipeline._census_taker(MigrationOptions(include="a"), (SOURCE, TARGET), app, launch, tmp_path)  # type: ignore[arg-type]
    assert taker(nothing) == Census() and len(app.asked) == 1 and len(launch.asked) == 1  # nothing read
