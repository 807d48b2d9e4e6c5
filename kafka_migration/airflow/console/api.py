"""The console's JSON API: overview, runs, a run, consumer group syncs, cutovers, the read-only pre-flight and
access syncs (``console.access``).

An ``APIRouter`` from a factory; ``kafka_migration.airflow.webapp`` mounts it under ``/api`` in the
plugin's FastAPI app, behind Airflow's authentication. Ledger reads go through the ledger's one read API (``Ledger``);
live progress through the Spark driver's snapshot files (``progress.read_snapshots``); the clusters
are read "now" with short timeouts (``console.clusters``), so a page renders even when one is down.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query
from pydantic import BaseModel, Field

from kafka_migration.airflow.console import live
from kafka_migration.airflow.console.clusters import Clusters, preflight_view
from kafka_migration.airflow.console.models import (
    MAX_PAGE,
    ClustersView,
    CutoversPageView,
    GroupSyncsPageView,
    LagHistoryView,
    OverviewView,
    PreflightView,
    RunDetailView,
    RunFacetsView,
    RunProgressView,
    RunsPageView,
)
from kafka_migration.ledger import Ledger
from kafka_migration.ledger.views import RunFilter
from kafka_migration.model.recorded import RecordedRun, RecordedSegment
from kafka_migration.reports.signoff import VERDICTS as SIGNOFF_VERDICTS

KINDS = {
    "kafka_migration": "migration",
    "kafka_nightly_sync": "nightly sync",
    "kafka_cutover": "cutover",
    "kafka_failback": "failback",
}
# As the sign-off report words them, but for a run still running: its report (written if it stops) says
# INCOMPLETE, the console, which sees it live, RUNNING.
VERDICTS = {**SIGNOFF_VERDICTS, "running": "RUNNING"}
PREFLIGHT_MAX_SECONDS = 30.0


def _iso(value: datetime | None) -> str | None:
    """A ledger time (aware UTC, ``ledger.schema.UtcDateTime``) as the API gives it: to the second, with its offset."""
    return None if value is None else value.isoformat(timespec="seconds")


def _age(value: datetime | None, now: datetime) -> float | None:
    return None if value is None else round((now - value).total_seconds(), 1)


def _parse_time(value: str | None, name: str) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise HTTPException(422, f"{name}={value!r} is not a time; give ISO 8601, e.g. 2026-11-25T08:00:00Z") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def kind_of(run: RecordedRun) -> str:
    return KINDS.get(run.dag_id or "", "CLI run" if run.trigger == "cli" else "run")


class RunsQuery(BaseModel):
    """The query of ``GET /runs``: its filters and its page, each a query parameter of its own."""

    dag_id: str | None = Field(None, description="a DAG id, or 'cli' for runs of the CLI")
    status: str | None = Field(
        None, description="verified, up_to_date, mismatch, unverified, failed, running, target_lost"
    )
    source_cluster_id: str | None = None
    target_cluster_id: str | None = None
    topic: str | None = Field(None, description="a source or target topic the run planned")
    since: str | None = Field(None, description="started at or after (ISO 8601)")
    until: str | None = Field(None, description="started before (ISO 8601)")
    limit: int = Field(25, ge=1, le=MAX_PAGE)
    offset: int = Field(0, ge=0)


class Reader:
    """What the routes read: runs as JSON with their progress, the overview, cutovers with their checklists.

    ``ledger`` and ``state_dir`` are called per read (the configuration may change without a restart).
    """

    def __init__(self, ledger: Callable[[], Ledger], state_dir: Callable[[], Path], clusters: Clusters) -> None:
        self._ledger = ledger
        self.state_dir = state_dir
        self.clusters = clusters

    def ledger(self) -> Ledger:
        """The ledger's one read API (its views and the parts that record), the configured one."""
        return self._ledger()

    def progress(self, run_id: str, segments: list[RecordedSegment] | None = None) -> dict[str, Any]:
        from kafka_migration.run.files import run_dir
        from kafka_migration.run.progress import read_snapshots

        rows = self.ledger().run_segments(run_id) if segments is None else segments
        return live.progress_by_partition(rows, read_snapshots(run_dir(self.state_dir(), run_id)))

    def run(self, run: RecordedRun, with_progress: bool = True) -> dict[str, Any]:
        duration = run.wall_seconds
        if duration is None and run.started_at is not None and run.ended_at is not None:
            duration = round((run.ended_at - run.started_at).total_seconds(), 1)
        out = {
            "run_id": run.run_id,
            "kind": kind_of(run),
            "trigger": run.trigger,
            "dag_id": run.dag_id,
            "dag_run_id": run.dag_run_id,
            "source_cluster_id": run.source_cluster_id,
            "source_bootstrap": run.source_bootstrap,
            "target_cluster_id": run.target_cluster_id,
            "target_bootstrap": run.target_bootstrap,
            "started_at": _iso(run.started_at),
            "ended_at": _iso(run.ended_at),
            "status": run.status,
            "verdict": VERDICTS.get(run.status, run.status.upper()),
            "topics": run.topics or 0,
            "records": run.records or 0,
            "report_sha256": run.report_sha256,
            "message": run.message,
            "timings": run.timings.to_dict() if run.timings is not None else None,
            "duration_seconds": duration,
            "progress": None,
        }
        if with_progress and run.status == "running":
            with_live_counts(out, self.progress(run.run_id))
        return out

    def pair(self, pair: Mapping[str, Any], now: datetime) -> dict[str, Any]:
        rows = self.ledger().checkpoint_rows(pair["source_cluster_id"], pair["target_cluster_id"])
        topics: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in rows:
            topics.setdefault((r["source_topic"], r["target_topic"]), []).append(r)
        ends, error = (
            self.clusters.log_ends(pair["source_cluster_id"], {t for t, _ in topics}) if topics else ({}, None)
        )
        lost, lost_error = (
            self.clusters.target_losses(pair["source_cluster_id"], pair["target_cluster_id"], rows, self.ledger())
            if topics
            else ({}, None)
        )
        topic_rows = [
            {**_topic_lag(key, parts, ends, error, now), "lost": None if lost_error else lost.get(key, 0)}
            for key, parts in sorted(topics.items())
        ]
        lags = [t["lag"] for t in topic_rows]
        return {
            "source_cluster_id": pair["source_cluster_id"],
            "target_cluster_id": pair["target_cluster_id"],
            "source_bootstrap": pair["source_bootstrap"],
            "target_bootstrap": pair["target_bootstrap"],
            "runs": pair["runs"],
            "last_started_at": _iso(pair["last_started_at"]),
            "source_reachable": error is None,
            "source_error": error,
            "lag": None if any(lag is None for lag in lags) else sum(lags),
            # Verified records the target no longer holds although the source does (run/losses.py), checked now.
            "lost": None if lost_error else sum(lost.values()),
            "lost_error": lost_error,
            "topics": topic_rows,
        }

    def group_syncs(self, limit: int, offset: int, group_id: str | None, run_id: str | None) -> dict[str, Any]:
        ledger = self.ledger()
        page = ledger.group_syncs_page(limit=limit, offset=offset, group_id=group_id, run_id=run_id)
        rows: dict[str, list[dict[str, Any]]] = {}
        for r in ledger.group_sync_rows(sync_ids=[s["sync_id"] for s in page.rows]):
            if group_id and r.group_id != group_id:
                continue
            rows.setdefault(r.sync_id, []).append(r.to_dict())
        syncs = [
            {
                **s,
                "synced_at": _iso(s["synced_at"]),
                "not_ok": int(s["not_ok"] or 0),
                "rows": rows.get(s["sync_id"], []),
            }
            for s in page.rows
        ]
        return {"total": page.total, "limit": limit, "offset": offset, "syncs": syncs}

    def sync_rows(self, run_id: str | None) -> list[dict[str, Any]]:
        if not run_id:
            return []
        ledger = self.ledger()
        found = ledger.group_syncs_page(limit=MAX_PAGE, run_id=run_id)
        return [r.to_dict() for r in ledger.group_sync_rows(sync_ids=[s["sync_id"] for s in found.rows])]

    def cutover(self, row: Mapping[str, Any]) -> dict[str, Any]:
        from kafka_migration.cutover.report import checklist

        return {
            **{k: row.get(k) for k in ("cutover_id", "trigger", "dag_id", "dag_run_id", "status", "message")},
            **{k: row[k] for k in ("source_cluster_id", "target_cluster_id", "source_bootstrap", "target_bootstrap")},
            "run_id": row.get("run_id"),
            "started_at": _iso(row.get("started_at")),
            "ended_at": _iso(row.get("ended_at")),
            "params": dict(row.get("params") or {}),
            "groups": list(row.get("groups") or []),
            "topics": list(row.get("topics") or []),
            "failback_run_id": row.get("failback_run_id"),
            "failback_status": row.get("failback_status"),
            "can_fail_back": row["status"] == "completed" and row.get("failback_status") != "completed",
            "checklist": checklist(row, self.sync_rows(row.get("run_id")), self.sync_rows(row.get("failback_run_id"))),
        }


def with_live_counts(run: dict[str, Any], progress: Mapping[str, Any]) -> None:
    """A running run as its live progress counts it: the ledger records how many records a run copied when it
    ends (0 until then); while it runs, what the Spark driver's snapshots count so far."""
    run["progress"] = live.summary(progress)
    run["records"] = run["progress"]["copied"]


def _topic_lag(
    key: tuple[str, str],
    parts: list[dict[str, Any]],
    ends: Mapping[tuple[str, int], int],
    error: str | None,
    now: datetime,
) -> dict[str, Any]:
    """One source topic of the overview: its checkpoints summed, the source's end now, what is left."""
    source_topic, target_topic = key
    known = [ends.get((source_topic, int(p["partition"]))) for p in parts]
    reachable = error is None and all(e is not None for e in known)
    last = max(parts, key=lambda p: p["updated_at"])
    return {
        "source_topic": source_topic,
        "target_topic": target_topic,
        "partitions": len(parts),
        "migrated": sum(int(p["source_offset"]) for p in parts),
        "source_end": sum(int(e or 0) for e in known) if reachable else None,
        "lag": sum(max(0, int(e or 0) - int(p["source_offset"])) for e, p in zip(known, parts, strict=True))
        if reachable
        else None,
        "last_run_id": last["run_id"],
        "last_dag_id": last.get("dag_id"),
        "last_verified_at": _iso(last["updated_at"]),
        "age_seconds": _age(last["updated_at"], now),
    }


def _configured_reports_dir() -> Path:
    from kafka_migration.airflow import settings

    return settings.reports_dir()


def create_names_router(read: Reader) -> APIRouter:
    """The clusters by name (``Clusters.names``): the pages show a name beside each cluster id."""
    router = APIRouter()

    @router.get("/clusters", response_model=ClustersView, summary="Each cluster the ledger names, and its name")
    def clusters_by_name() -> dict[str, Any]:
        """Every cluster of the ledger's runs, cutovers and access syncs, with the name a person reads beside its
        id: the one [kafka_migration] cluster_names gives it, else the id of the Kafka connection whose bootstrap
        addresses are the ones recorded for it."""
        return read.clusters.names(read.ledger().cluster_bootstraps())

    return router


def lag_history(rows: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    """The ledger's ``lag_history`` rows as the overview's chart reads them: per pair, each run's kind, times and
    what was not migrated yet when it planned and after it ended."""
    pairs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        known = r["planned"] > 0 or r["status"] == "up_to_date"  # a run that planned nothing new planned no range
        pairs.setdefault((r["source_cluster_id"], r["target_cluster_id"]), []).append(
            {
                "run_id": r["run_id"],
                "kind": KINDS.get(r["dag_id"] or "", "CLI run" if r["trigger"] == "cli" else "run"),
                "status": r["status"],
                "started_at": _iso(r["started_at"]),
                "ended_at": _iso(r["ended_at"]),
                "at_start": int(r["at_start"]) if known else None,
                "after": int(r["after"]) if known and r["status"] != "running" else None,
            }
        )
    return {
        "limit": limit,
        "pairs": [{"source_cluster_id": s, "target_cluster_id": t, "runs": runs} for (s, t), runs in pairs.items()],
    }


def create_history_router(read: Reader) -> APIRouter:
    """What the overview draws over time (``lag_history``)."""
    router = APIRouter()

    @router.get("/lag-history", response_model=LagHistoryView, summary="Not migrated yet, run after run, per pair")
    def lag_history_of_pairs(limit: int = Query(60, ge=1, le=MAX_PAGE, description="runs per pair")) -> dict[str, Any]:
        """Per pair of clusters, its newest runs (dry runs aside), oldest first: at each run's start, the records
        past the checkpoints up to the source's end as the run found it (what it set out to copy, over the
        partitions it planned); at its end, those it did not verify, still not migrated."""
        return lag_history(read.ledger().lag_history(limit), limit)

    return router


def create_router(
    ledger: Callable[[], Ledger],
    state_dir: Callable[[], Path],
    clusters: Clusters,
    reports_dir: Callable[[], Path] | None = None,
) -> APIRouter:
    """``ledger``, ``state_dir`` and ``reports_dir`` are called per request (the configuration may change without
    a restart); ``reports_dir`` defaults to the configured one."""
    from kafka_migration.airflow.console.access import create_access_router
    from kafka_migration.airflow.console.schemas import create_schemas_router

    router = APIRouter()
    read = Reader(ledger, state_dir, clusters)

    @router.get("/overview", response_model=OverviewView, summary="Each pair of clusters and how far each topic is")
    def overview() -> dict[str, Any]:
        """Per pair of clusters and source topic: offsets migrated (checkpoints), the source's end now, the
        offsets not migrated yet (what the next nightly sync copies) and the last run that verified some."""
        now = datetime.now(UTC)
        ledger = read.ledger()
        pairs = [read.pair(pair, now) for pair in ledger.cluster_pairs()]
        return {"pairs": pairs, "running": ledger.running_runs()}

    @router.get("/runs", response_model=RunsPageView, summary="Runs, newest first, filtered and paged")
    def runs(query: Annotated[RunsQuery, Query()]) -> dict[str, Any]:
        texts = {"dag_id": query.dag_id, "status": query.status, "topic": query.topic}
        clusters_ = {"source_cluster_id": query.source_cluster_id, "target_cluster_id": query.target_cluster_id}
        run_filter = RunFilter(
            **{k: (v or "").strip() or None for k, v in {**texts, **clusters_}.items()},
            since=_parse_time(query.since, "since"),
            until=_parse_time(query.until, "until"),
        )
        ledger = read.ledger()
        page = ledger.runs_page(run_filter, limit=query.limit, offset=query.offset)
        return {
            "total": page.total,
            "limit": query.limit,
            "offset": query.offset,
            "running": ledger.running_runs(),
            "runs": [read.run(r) for r in page.rows],
        }

    @router.get("/runs/facets", response_model=RunFacetsView, summary="Values the runs filters offer")
    def facets() -> dict[str, Any]:
        return read.ledger().run_facets()

    @router.get("/runs/by-dag-run", response_model=RunDetailView, summary="The run a DAG run made")
    def by_dag_run(dag_id: str, dag_run_id: str) -> dict[str, Any]:
        run = read.ledger().run_for_dag_run(dag_id, dag_run_id)
        if run is None:
            raise HTTPException(
                404,
                f"DAG run {dag_run_id} of {dag_id} has no migration run in the ledger (yet): its plan task records "
                "it when it starts, or the DAG is not one of kafka-migration's.",
            )
        return run_detail(run.run_id)

    @router.get("/runs/{run_id}", response_model=RunDetailView, summary="A run: its partitions, timings and progress")
    def run_detail(run_id: str) -> dict[str, Any]:
        ledger = read.ledger()
        run = ledger.run(run_id)
        if run is None:
            raise HTTPException(404, f"No run {run_id!r} in the ledger")
        segments = ledger.run_segments(run_id)
        detail = read.run(run, with_progress=False)
        cutover = ledger.cutover_for_run(run_id)
        detail["cutover_id"] = cutover["cutover_id"] if cutover else None
        progress = read.progress(run_id, segments) if run.status == "running" else None
        if progress is not None:
            with_live_counts(detail, progress)
        syncs = ledger.group_syncs_page(limit=MAX_PAGE, run_id=run_id)
        return {
            "run": detail,
            "options": dict(run.params or {}),
            "warnings": list(run.warnings or []),
            "segments": [s.to_dict() for s in segments],
            "progress": progress,
            "group_syncs": [s["sync_id"] for s in syncs.rows],
        }

    @router.get("/runs/{run_id}/progress", response_model=RunProgressView, summary="A running run's live progress")
    def progress_of_running_run(run_id: str) -> dict[str, Any]:
        if read.ledger().run(run_id) is None:
            raise HTTPException(404, f"No run {run_id!r} in the ledger")
        return read.progress(run_id)

    @router.get("/group-syncs", response_model=GroupSyncsPageView, summary="Consumer group syncs with every partition")
    def group_syncs(
        group_id: str | None = None,
        run_id: str | None = None,
        limit: int = Query(10, ge=1, le=MAX_PAGE),
        offset: int = Query(0, ge=0),
    ) -> dict[str, Any]:
        return read.group_syncs(limit, offset, group_id or None, run_id or None)

    @router.get("/cutovers", response_model=CutoversPageView, summary="Cutovers and their failbacks, with checklists")
    def cutovers(limit: int = Query(10, ge=1, le=MAX_PAGE), offset: int = Query(0, ge=0)) -> dict[str, Any]:
        page = read.ledger().cutovers_page(limit=limit, offset=offset)
        return {"total": page.total, "limit": limit, "offset": offset, "cutovers": [read.cutover(r) for r in page.rows]}

    @router.get("/cutover-preflight", response_model=PreflightView, summary="The cutover pre-flight, read only")
    def cutover_preflight(
        include: str = Query(".*", description="topics, as the kafka_cutover DAG's Param"),
        exclude: str | None = None,
        groups: str | None = Query(None, description="consumer group pattern (default: every group)"),
        exclude_groups: str | None = None,
        quiet_seconds: float = Query(5.0, ge=0, le=PREFLIGHT_MAX_SECONDS, description="how long to watch the ends"),
        source_conn_id: str = "kafka_source",
        target_conn_id: str = "kafka_target",
    ) -> dict[str, Any]:
        """Is each selected source topic quiet, and which selected groups have members on either cluster:
        what the kafka_cutover DAG's pre-flight will check. Nothing is recorded and nothing is switched."""
        from kafka_migration.exceptions import MigrationError

        try:
            return preflight_view(
                read.clusters,
                (source_conn_id, target_conn_id),
                include,
                exclude or None,
                groups or None,
                exclude_groups or None,
                quiet_seconds,
            )
        except MigrationError as exc:  # bad patterns, unknown connections, an unreachable cluster
            raise HTTPException(422, " ".join(str(exc).split())) from None

    router.include_router(create_names_router(read))
    router.include_router(create_history_router(read))
    router.include_router(create_access_router(read.ledger, reports_dir or _configured_reports_dir))
    router.include_router(create_schemas_router(read.ledger))
    return router
