"""Which census taker a CLI run gets (run/pipeline._census_taker), without a cluster: a dry run reads in this process
up to $KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS offsets and asks a Spark application of its own for more (saying so
first), or reads each partition's ends when asked (``dry_run_census`` ends, or no launcher); a run asks its
application before its copy is released, or one of its own when the run's cannot wait, whatever the budget;
nobody reads when there is nothing to copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.kafka import ranges
from kafka_migration.model.census import Census, Sighting
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.schemas import RecordPart
from kafka_migration.run import pipeline
from kafka_migration.run.census_takers import CENSUS_LOCAL_RECORDS_ENV
from tests.unit.factories import migration_plan, topic_plan
from tests.unit.run.test_batch_compare import Msg
from tests.unit.run.test_census import framed

SOURCE = ClusterConfig.build("source", "src:9092")
TARGET = ClusterConfig.build("target", "dst:9092")
FOUND = Census((Sighting("a", 0, RecordPart.VALUE, 7, 0),), 1, 1)


class App:
    process = None

    def __init__(self) -> None:
        self.asked: list[MigrationPlan] = []

    def abort(self) -> None:
        pass

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


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple[tuple[int, int], ...]]]:
    """What this process reads: each call's source role and ranges; every range holds one value naming id 5."""
    seen: list[tuple[str, tuple[tuple[int, int], ...]]] = []

    def read(cluster: Any, wanted: Any, **_: Any) -> Any:
        seen.append((cluster.role, tuple((r.start, r.end) for r in wanted)))
        for i, _range in enumerate(wanted):
            yield i, [Msg(_range.start, None, framed(5), None, 0)], True

    monkeypatch.setattr(ranges, "read_ranges", read)
    return seen


def _take(tmp_path: Path, plan: MigrationPlan, app: Any, launch: Any, **options: Any) -> tuple[Census, list[str]]:
    steps: list[str] = []
    taker = pipeline._census_taker(
        MigrationOptions(include="a", **options), (SOURCE, TARGET), app, launch, tmp_path, steps.append
    )
    return taker(plan), steps


def test_a_dry_run_reads_here_up_to_its_budget_and_asks_spark_for_more(
    reads: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = migration_plan(topic_plan("a", (3,)))
    launch = Launch()
    monkeypatch.setenv(CENSUS_LOCAL_RECORDS_ENV, "3")
    found, steps = _take(tmp_path, plan, None, launch, dry_run=True)
    assert found.complete and found.ids() == {5} and reads == [("source", ((0, 3),))] and launch.asked == []
    monkeypatch.setenv(CENSUS_LOCAL_RECORDS_ENV, "2")
    found, steps = _take(tmp_path, plan, None, launch, dry_run=True)
    assert found == FOUND and launch.asked == [(tmp_path, plan, SOURCE, TARGET)] and steps == ["census"]
    assert len(reads) == 1  # Spark read, not this process


def test_a_dry_run_asked_for_the_ends_or_without_a_launcher_reads_them_here(
    reads: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = migration_plan(topic_plan("a", (10,)))
    launch = Launch()
    monkeypatch.setenv(CENSUS_LOCAL_RECORDS_ENV, "4")
    found, steps = _take(tmp_path, plan, None, launch, dry_run=True, dry_run_census="ends")
    assert not found.complete and launch.asked == [] and steps == []
    assert reads == [("source", ((0, 2),)), ("source", ((8, 10),))]  # the head, then the tail
    found, _ = _take(tmp_path, plan, None, None, dry_run=True)
    assert not found.complete and len(reads) == 4


def test_a_run_asks_its_application_or_one_of_its_own_whatever_the_budget(
    reads: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CENSUS_LOCAL_RECORDS_ENV, "1000")
    led: list[tuple[Any, ...]] = []

    def lead(plan: MigrationPlan, source: Any, up: Any, rest: Any) -> Census:  # run/census.lead_census
        led.append((source.role, up(), rest))
        return rest(plan)

    monkeypatch.setattr(pipeline, "lead_census", lead)
    plan = migration_plan(topic_plan("a", (3,)))
    app, launch = App(), Launch()
    assert _take(tmp_path, plan, app, launch)[0] == FOUND and app.asked == [plan] and launch.asked == []
    assert led == [("source", True, app.census)]  # read here while the driver starts, the rest by the driver
    assert _take(tmp_path, plan, None, launch)[0] == FOUND and launch.asked == [(tmp_path, plan, SOURCE, TARGET)]
    with pytest.raises(ConfigurationError, match="needs a launcher"):
        _take(tmp_path, plan, None, None)
    nothing = migration_plan(topic_plan("a", (0,)))
    assert _take(tmp_path, nothing, app, launch)[0] == Census() and len(app.asked) == 1 and len(launch.asked) == 1
    assert reads == []  # nothing else read here: no budget of its own, whatever the setting


def test_a_census_of_the_ends_is_for_a_dry_run_only() -> None:
    with pytest.raises(ConfigurationError, match=r"^A census of the partitions' ends \(ends\) is for a dry run only"):
        MigrationOptions(dry_run_census="ends")
    with pytest.raises(ConfigurationError, match=r"^A dry run's census is full or ends, got 'half'"):
        MigrationOptions(dry_run=True, dry_run_census="half")
    assert MigrationOptions.from_mapping({"dry_run": True, "dry_run_census": "ends"}).dry_run_census == "ends"
    assert MigrationOptions.from_mapping({}).dry_run_census == "full"


def test_a_runs_census_starts_the_target_lookup_meanwhile_first(
    reads: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``meanwhile`` (the target's readers' group lookup) starts as the census begins, before the source is read."""
    order: list[str] = []
    monkeypatch.setattr(pipeline, "lead_census", lambda plan, *_: order.append("census") or FOUND)
    taker = pipeline._census_taker(
        MigrationOptions(include="a"), (SOURCE, TARGET), App(), Launch(), tmp_path, None, lambda: order.append("lookup")
    )
    assert taker(migration_plan(topic_plan("a", (3,)))) == FOUND and order == ["lookup", "census"]
    order.clear()
    assert taker(migration_plan(topic_plan("a", (0,)))) == Census() and order == []  # nothing to read: no census


def test_a_dry_run_looks_nothing_up_on_the_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a new cluster the lookup makes the broker create __consumer_offsets: a dry run writes nothing."""
    given: list[Any] = []
    real = pipeline._census_taker

    def spy(*args: Any) -> Any:
        given.append(args[-1])
        return real(*args)

    monkeypatch.setattr(pipeline, "_census_taker", spy)
    monkeypatch.setattr(pipeline, "lease_claim", lambda *_: None)
    monkeypatch.setattr(pipeline, "_plan", lambda *_: (_ for _ in ()).throw(RuntimeError("planned")))
    for dry_run in (True, False):
        with pytest.raises(RuntimeError, match="planned"):
            pipeline.run_migration(
                SOURCE,
                TARGET,
                MigrationOptions(include="a", dry_run=dry_run),
                tmp_path,
                None,  # type: ignore[arg-type]
                launch=None if dry_run else Launch(),  # type: ignore[arg-type]
                app=None if dry_run else App(),  # type: ignore[arg-type]
                schemas=lambda plan, census: plan,
            )
    assert given[0] is None and given[1].__name__ == "find_reader_coordinator_meanwhile"
