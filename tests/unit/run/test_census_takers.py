"""Who takes the census a schema sync asks for (run/census_takers.py), without a broker: the process that plans
reads up to its budget itself, Spark reads more, or (a dry run's ``ends``) the process reads each partition's ends;
nothing is read when nothing is copied; the budget's setting is refused with one line when it is no number. The
process's reads go through ``ranges.read_ranges``, stood in for here; the real ones, and the Spark census, are in
tests/integration/test_schema_ids.py and tests/e2e/test_schema_dag.py."""

from __future__ import annotations

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.kafka import ranges
from kafka_migration.model.census import Census, Sighting
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.schemas import RecordPart
from kafka_migration.run.census_takers import CENSUS_LOCAL_RECORDS_ENV, CensusWays, census_taker, local_records
from tests.unit.factories import migration_plan, topic_plan
from tests.unit.run.test_batch_compare import Msg
from tests.unit.run.test_census import SOURCE, _reads, framed

BY_SPARK = Census((Sighting("t", 0, RecordPart.VALUE, 77, 3),), 10, 10)


class Spark:
    """What a front door gives as its Spark census: records the plans it was asked for."""

    def __init__(self) -> None:
        self.asked: list[MigrationPlan] = []
        self.told: list[int] = []

    def __call__(self, plan: MigrationPlan) -> Census:
        self.asked.append(plan)
        return BY_SPARK


@pytest.fixture
def source_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every range the process reads holds one value naming id 5 (and its tails, for an ends-only census)."""
    monkeypatch.setattr(ranges, "read_ranges", _reads({0: [[Msg(0, None, framed(5), None, 0)]]}))


@pytest.mark.usefixtures("source_reads")
def test_the_process_reads_up_to_its_budget_spark_reads_more() -> None:
    plan = migration_plan(topic_plan("t", (6, 4)))  # 10 planned offsets
    spark = Spark()
    ways = CensusWays(SOURCE, spark, local_records=10, on_spark=spark.told.append)
    found = census_taker(ways)(plan)
    assert (found.ids(), found.complete, found.planned) == ({5}, True, 10) and spark.asked == []
    found = census_taker(CensusWays(SOURCE, spark, local_records=9, on_spark=spark.told.append))(plan)
    assert found == BY_SPARK and spark.asked == [plan] and spark.told == [10]


@pytest.mark.usefixtures("source_reads")
def test_an_ends_only_census_reads_the_ends_here_and_says_it_is_not_complete() -> None:
    plan = migration_plan(topic_plan("t", (6, 4)))
    spark = Spark()
    found = census_taker(CensusWays(SOURCE, spark, local_records=4, ends_only=True))(plan)
    assert spark.asked == [] and not found.complete and found.planned == 10 and found.ids() == {5}
    whole = census_taker(CensusWays(SOURCE, spark, local_records=10, ends_only=True))(plan)
    assert whole.complete and spark.asked == []  # within the budget the ends are everything


def test_nothing_to_copy_reads_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranges, "read_ranges", lambda *a, **k: pytest.fail("read"))
    spark = Spark()
    plan = migration_plan(topic_plan("t", (0, 0)))
    assert census_taker(CensusWays(SOURCE, spark, local_records=0))(plan) == Census() and spark.asked == []


def test_the_budget_is_a_whole_number_from_its_setting_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CENSUS_LOCAL_RECORDS_ENV, raising=False)
    assert local_records() == 200_000
    monkeypatch.setenv(CENSUS_LOCAL_RECORDS_ENV, " 1_000 ")
    assert local_records() == 1000
    assert local_records("2,500", "[kafka_migration] census_local_records") == 2500
    assert local_records("0") == 0
    monkeypatch.setenv(CENSUS_LOCAL_RECORDS_ENV, "")
    assert local_records() == 200_000
    for bad in ("-1", "lots", "1e6", "2.5"):
        monkeypatch.setenv(CENSUS_LOCAL_RECORDS_ENV, bad)
        where = r"^\$KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS must be a whole number"
        with pytest.raises(ConfigurationError, match=rf"{where} .*got {bad!r}; the default is 200,000\.$"):
            local_records()
    with pytest.raises(ConfigurationError, match=r"^\[kafka_migration\] census_local_records must be .*'x'; the"):
        local_records("x", "[kafka_migration] census_local_records")


def test_the_census_says_how_much_it_planned_where_it_read_and_what_it_found(
    source_reads: None, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kafka_migration.kafka.ranges import OffsetRange
    from kafka_migration.run import census_takers
    from kafka_migration.run.census import rest_of

    clock = iter([100.0, 102.25, 200.0, 200.5])
    monkeypatch.setattr(census_takers.time, "monotonic", lambda: next(clock))
    plan = rest_of(migration_plan(topic_plan("t", (10,))), [OffsetRange("t", 0, 4, 10)])  # offsets 4 to 10
    with caplog.at_level("INFO", logger="kafka_migration.run.census_takers"):
        found = census_taker(CensusWays(SOURCE, Spark(), local_records=6))(plan)
        census_taker(CensusWays(SOURCE, Spark(), local_records=5))(plan)
    assert caplog.messages == [
        f"census of 6 planned offsets in this process in 2.2 s: {found.describe()}",
        f"census of 6 planned offsets by Spark in 0.5 s: {BY_SPARK.describe()}",
    ]
