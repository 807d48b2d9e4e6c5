"""Who takes the census a schema sync asks for (run/census.py): one rule for the CLI and the DAGs.

- Nothing to copy: nothing to read.
- At most ``local_records`` planned offsets (``CENSUS_LOCAL_RECORDS_ENV``, default 200,000): the process that plans
  reads them all itself (a dry run, a DAG's plan task): a second or two, no Spark start-up.
- More: Spark reads them all (``spark``: the run's application waiting for its plan, or one of its own); or, when
  asked for the ends only (a dry run's ``--dry-run-census ends``), the process that plans reads each partition's
  first and last records within ``local_records`` and the census says it is not complete.

A CLI run that copies has its Spark application starting anyway: it gives ``local_records`` 0, and its census is
always Spark's.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.census import Census
from kafka_migration.model.config import Endpoint
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.text import plural
from kafka_migration.run.census import DRY_RUN_RECORDS, bounded_census, census_slices

log = logging.getLogger(__name__)

CENSUS_LOCAL_RECORDS_ENV = "KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS"
CensusTaker = Callable[[MigrationPlan], Census]


def local_records(value: str | None = None, where: str = f"${CENSUS_LOCAL_RECORDS_ENV}") -> int:
    """The planned offsets a census reads in the process that plans at most: ``value`` (default: the environment's
    ``CENSUS_LOCAL_RECORDS_ENV``, else 200,000), a whole number of 0 or more; one line naming ``where`` otherwise."""
    raw = os.environ.get(CENSUS_LOCAL_RECORDS_ENV) if value is None else value
    if raw is None or not raw.strip():
        return DRY_RUN_RECORDS
    text = raw.strip().replace("_", "").replace(",", "")
    if not text.isdigit():
        raise ConfigurationError(
            f"{where} must be a whole number of offsets (0 or more: how many the census reads without Spark), got "
            f"{raw!r}; the default is {DRY_RUN_RECORDS:,}."
        )
    return int(text)


@dataclass(frozen=True)
class CensusWays:
    """How a run can take its census: its ``source``; ``spark``, the census of a plan by Spark; ``local_records``,
    the planned offsets this process reads itself at most; ``ends_only``: above those, read each partition's ends
    here instead of asking Spark (a dry run's quick census); ``on_spark``: told the planned offsets before Spark is
    asked (a front door says what it waits for)."""

    source: Endpoint
    spark: CensusTaker
    local_records: int = DRY_RUN_RECORDS
    ends_only: bool = False
    on_spark: Callable[[int], None] | None = None


def census_taker(ways: CensusWays) -> CensusTaker:
    """What takes the census of a plan's source ranges, by the rule above."""

    def take(plan: MigrationPlan) -> Census:
        slices = census_slices(plan)
        if not slices:
            return Census()
        started = time.monotonic()
        planned = sum(s.end - s.start for s in slices)
        if planned <= ways.local_records or ways.ends_only:
            how = "in this process"
            found = bounded_census(plan, ways.source, ways.local_records)  # whole within the budget, else the ends
        else:
            how = "by Spark"
            if ways.on_spark is not None:
                ways.on_spark(planned)
            found = ways.spark(plan)
        log.info(
            "census of %s %s in %.1f s: %s",
            plural(planned, "planned offset"),
            how,
            time.monotonic() - started,
            found.describe(),
        )
        return found

    return take
