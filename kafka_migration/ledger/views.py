"""The ledger's reads for lists and the console: runs with filters and paging, the overview's cluster pairs,
checkpoints, group sync summaries, cutovers. A part of ``Ledger`` (``LedgerViews``), so that every reader (the
CLI, the reports, the console) reads through one object; a single run, its segments, a sync's partitions and a
cutover are read with the methods of the parts that record them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from sqlalchemy import Engine, case, func, or_, select, union

from kafka_migration.ledger.schema import access_checks, checkpoints, cutovers, group_syncs, runs, segments
from kafka_migration.model.groups import GOOD_OUTCOMES
from kafka_migration.model.recorded import RecordedRun

# The run columns a list shows: everything but the plan (large).
RUN_COLUMNS = (
    runs.c.run_id,
    runs.c.trigger,
    runs.c.dag_id,
    runs.c.dag_run_id,
    runs.c.source_cluster_id,
    runs.c.source_bootstrap,
    runs.c.target_cluster_id,
    runs.c.target_bootstrap,
    runs.c.started_at,
    runs.c.ended_at,
    runs.c.status,
    runs.c.topics,
    runs.c.records,
    runs.c.report_sha256,
    runs.c.message,
    runs.c.timings,
)


@dataclass(frozen=True)
class RunFilter:
    """What the runs list is narrowed to; None leaves a field open. ``dag_id`` "cli" means runs of the CLI."""

    dag_id: str | None = None
    status: str | None = None
    source_cluster_id: str | None = None
    target_cluster_id: str | None = None
    topic: str | None = None  # a source or target topic the run planned
    since: datetime | None = None  # started at or after
    until: datetime | None = None  # started before


RowT = TypeVar("RowT")


@dataclass(frozen=True)
class Page(Generic[RowT]):
    """One page of a list, and how many rows match in all."""

    total: int
    rows: list[RowT]


def _run_conditions(f: RunFilter) -> list[Any]:
    conditions: list[Any] = []
    if f.dag_id == "cli":
        conditions.append(runs.c.dag_id.is_(None))
    elif f.dag_id:
        conditions.append(runs.c.dag_id == f.dag_id)
    if f.status:
        conditions.append(runs.c.status == f.status)
    if f.source_cluster_id:
        conditions.append(runs.c.source_cluster_id == f.source_cluster_id)
    if f.target_cluster_id:
        conditions.append(runs.c.target_cluster_id == f.target_cluster_id)
    if f.since is not None:
        conditions.append(runs.c.started_at >= f.since)
    if f.until is not None:
        conditions.append(runs.c.started_at < f.until)
    if f.topic:
        planned = select(segments.c.run_id).where(
            or_(segments.c.source_topic == f.topic, segments.c.target_topic == f.topic)
        )
        conditions.append(runs.c.run_id.in_(planned))
    return conditions


class LedgerViews:
    """The ledger's reads for lists and the console (pages, filters, the overview's pairs), a part of ``Ledger``:
    the one read API, beside the parts that record (runs, checkpoints, group syncs, cutovers, losses)."""

    engine: Engine

    def runs_page(self, run_filter: RunFilter = RunFilter(), limit: int = 25, offset: int = 0) -> Page[RecordedRun]:
        """One page of runs, newest first (without their params, warnings and plan), and how many match."""
        conditions = _run_conditions(run_filter)
        with self.engine.connect() as c:
            total = c.execute(select(func.count()).select_from(runs).where(*conditions)).scalar_one()
            rows = c.execute(
                select(*RUN_COLUMNS)
                .where(*conditions)
                .order_by(runs.c.started_at.desc(), runs.c.run_id)
                .limit(limit)
                .offset(offset)
            )
            return Page(int(total), [RecordedRun.from_row(r._mapping) for r in rows])

    def run_for_dag_run(self, dag_id: str, dag_run_id: str) -> RecordedRun | None:
        """The run a DAG run made (each DAG run makes at most one; a cleared plan task replans under the same id)."""
        with self.engine.connect() as c:
            row = c.execute(
                select(*RUN_COLUMNS)
                .where(runs.c.dag_id == dag_id, runs.c.dag_run_id == dag_run_id)
                .order_by(runs.c.started_at.desc())
            ).first()
            return RecordedRun.from_row(row._mapping) if row else None

    def running_runs(self) -> int:
        with self.engine.connect() as c:
            return int(c.execute(select(func.count()).select_from(runs).where(runs.c.status == "running")).scalar_one())

    def run_facets(self) -> dict[str, list[Any]]:
        """The values the runs filters offer: DAGs (None: the CLI), statuses and cluster pairs seen in the ledger."""
        with self.engine.connect() as c:
            dags = [r[0] for r in c.execute(select(runs.c.dag_id).distinct())]
            statuses = sorted(r[0] for r in c.execute(select(runs.c.status).distinct()))
            pairs = [
                (r.source_cluster_id, r.target_cluster_id)
                for r in c.execute(select(runs.c.source_cluster_id, runs.c.target_cluster_id).distinct())
            ]
        return {
            "dag_ids": sorted(dags, key=lambda d: (d is None, d or "")),
            "statuses": statuses,
            "pairs": sorted(pairs),
        }

    # -- overview -----------------------------------------------------------------------------------

    def cluster_pairs(self) -> list[dict[str, Any]]:
        """Each (source cluster, target cluster) the ledger has runs for, with the newest run's bootstrap addresses,
        connection Params and start: the source is read "now" through that run's connection."""
        newest = (
            select(
                runs.c.source_cluster_id,
                runs.c.target_cluster_id,
                func.max(runs.c.started_at).label("last_started_at"),
                func.count().label("runs"),
            )
            .group_by(runs.c.source_cluster_id, runs.c.target_cluster_id)
            .subquery()
        )
        query = (
            select(
                runs.c.run_id,
                runs.c.dag_id,
                runs.c.params,
                runs.c.source_cluster_id,
                runs.c.target_cluster_id,
                runs.c.source_bootstrap,
                runs.c.target_bootstrap,
                newest.c.last_started_at,
                newest.c.runs,
            )
            .join(
                newest,
                (runs.c.source_cluster_id == newest.c.source_cluster_id)
                & (runs.c.target_cluster_id == newest.c.target_cluster_id)
                & (runs.c.started_at == newest.c.last_started_at),
            )
            .order_by(newest.c.last_started_at.desc())
        )
        seen: set[tuple[str, str]] = set()
        out = []
        with self.engine.connect() as c:
            for r in c.execute(query):
                key = (r.source_cluster_id, r.target_cluster_id)
                if key not in seen:  # two runs started in the same instant: one row
                    seen.add(key)
                    out.append(dict(r._mapping))
        return out

    def cluster_bootstraps(self) -> dict[str, list[str]]:
        """Every cluster the ledger names (runs, cutovers, access syncs), with each bootstrap list it was reached at."""
        query = union(
            *(
                select(
                    table.c[f"{role}_cluster_id"].label("cluster_id"), table.c[f"{role}_bootstrap"].label("bootstrap")
                )
                for table in (runs, cutovers, access_checks)
                for role in ("source", "target")
            )
        )
        found: dict[str, list[str]] = {}
        with self.engine.connect() as c:
            for row in c.execute(query):
                if row.bootstrap:
                    found.setdefault(row.cluster_id, []).append(row.bootstrap)
        return {cluster_id: sorted(lists) for cluster_id, lists in sorted(found.items())}

    def lag_history(self, limit: int = 60) -> list[dict[str, Any]]:
        """Per pair of clusters, its newest ``limit`` runs (dry runs aside), oldest first, each with what was not
        migrated yet when it planned and after it ended, summed over the partitions it planned:

        - ``at_start``: the records past the checkpoints up to the source's end as the run found it (its planned
          ranges, end excluded: what it set out to copy);
        - ``after``: the records of those ranges the run did not verify (each partition's checkpoint stays where it
          was): what it left behind the source's end as it found it.

        ``planned``: how many partitions it planned (0: the ledger recorded no plan for it)."""
        newest = (
            select(
                runs.c.run_id,
                func.row_number()
                .over(
                    partition_by=(runs.c.source_cluster_id, runs.c.target_cluster_id),
                    order_by=(runs.c.started_at.desc(), runs.c.run_id.desc()),
                )
                .label("age"),
            )
            .where(runs.c.status != "dry_run")
            .subquery()
        )
        span = case(
            (segments.c.source_end > segments.c.source_start, segments.c.source_end - segments.c.source_start), else_=0
        )
        left = case((segments.c.status.in_(("verified", "nothing_new")), 0), else_=span)
        query = (
            select(
                runs.c.run_id,
                runs.c.dag_id,
                runs.c.trigger,
                runs.c.status,
                runs.c.source_cluster_id,
                runs.c.target_cluster_id,
                runs.c.started_at,
                runs.c.ended_at,
                func.count(segments.c.id).label("planned"),
                func.coalesce(func.sum(span), 0).label("at_start"),
                func.coalesce(func.sum(left), 0).label("after"),
            )
            .join(newest, (newest.c.run_id == runs.c.run_id) & (newest.c.age <= limit))
            .join(segments, segments.c.run_id == runs.c.run_id, isouter=True)
            .group_by(runs.c.run_id)
            .order_by(runs.c.source_cluster_id, runs.c.target_cluster_id, runs.c.started_at, runs.c.run_id)
        )
        with self.engine.connect() as c:
            return [dict(r._mapping) for r in c.execute(query)]

    def checkpoint_rows(self, source_cluster_id: str, target_cluster_id: str) -> list[dict[str, Any]]:
        """Every partition's checkpoint for a pair, with the run that set it and when."""
        with self.engine.connect() as c:
            result = c.execute(
                select(
                    checkpoints,
                    runs.c.dag_id,
                    runs.c.status.label("run_status"),
                    runs.c.ended_at.label("run_ended_at"),
                )
                .join(runs, runs.c.run_id == checkpoints.c.run_id, isouter=True)
                .where(
                    checkpoints.c.source_cluster_id == source_cluster_id,
                    checkpoints.c.target_cluster_id == target_cluster_id,
                )
                .order_by(checkpoints.c.source_topic, checkpoints.c.partition)
            )
            return [dict(r._mapping) for r in result]

    # -- consumer group syncs ---------------------------------------------------------------------

    def group_syncs_page(
        self, limit: int = 25, offset: int = 0, group_id: str | None = None, run_id: str | None = None
    ) -> Page[dict[str, Any]]:
        """One summary per sync, newest first: when, clusters, groups, partitions, and how many are not ok."""
        conditions = []
        if group_id:
            conditions.append(group_syncs.c.group_id == group_id)
        if run_id:
            conditions.append(group_syncs.c.run_id == run_id)
        with self.engine.connect() as c:
            total = c.execute(select(func.count(func.distinct(group_syncs.c.sync_id))).where(*conditions)).scalar_one()
            result = c.execute(
                select(*_sync_summary_columns())
                .where(*conditions)
                .group_by(group_syncs.c.sync_id)
                .order_by(func.max(group_syncs.c.synced_at).desc(), group_syncs.c.sync_id)
                .limit(limit)
                .offset(offset)
            )
            return Page(int(total), [dict(r._mapping) for r in result])

    # -- cutovers ------------------------------------------------------------------------------------

    def cutovers_page(self, limit: int = 25, offset: int = 0) -> Page[dict[str, Any]]:
        with self.engine.connect() as c:
            total = c.execute(select(func.count()).select_from(cutovers)).scalar_one()
            result = c.execute(
                select(cutovers)
                .order_by(cutovers.c.started_at.desc(), cutovers.c.cutover_id)
                .limit(limit)
                .offset(offset)
            )
            return Page(int(total), [dict(r._mapping) for r in result])

    def cutover_for_run(self, run_id: str) -> dict[str, Any] | None:
        """The cutover whose final run, or whose failback run, this run is."""
        with self.engine.connect() as c:
            row = c.execute(
                select(cutovers).where(or_(cutovers.c.run_id == run_id, cutovers.c.failback_run_id == run_id))
            ).first()
            return dict(row._mapping) if row else None


def _sync_summary_columns() -> tuple[Any, ...]:
    """The columns of one summary per sync (grouped by sync_id): when, clusters, groups, partitions, and how
    many partitions ended in an outcome that is not good."""
    good = group_syncs.c.outcome.in_(sorted(GOOD_OUTCOMES))
    return (
        group_syncs.c.sync_id,
        func.max(group_syncs.c.run_id).label("run_id"),
        func.max(group_syncs.c.synced_at).label("synced_at"),
        func.max(group_syncs.c.source_cluster_id).label("source_cluster_id"),
        func.max(group_syncs.c.target_cluster_id).label("target_cluster_id"),
        func.count(func.distinct(group_syncs.c.group_id)).label("groups"),
        func.count().label("partitions"),
        func.sum(case((good, 0), else_=1)).label("not_ok"),
    )
