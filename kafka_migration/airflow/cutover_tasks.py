"""Bodies of the cutover and failback DAGs' own tasks; the run in between is the migration's (``migration_steps``)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from kafka_migration.airflow import settings
from kafka_migration.airflow.hooks import LedgerHook
from kafka_migration.airflow.run_tasks import PlanFailed
from kafka_migration.cutover.point import DEFAULT_QUIET_SECONDS
from kafka_migration.cutover.preflight import Preflight
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.model.plan import MigrationPlan

log = logging.getLogger(__name__)


def _clusters(params: dict[str, Any]) -> tuple[str, str, ClusterConfig, ClusterConfig]:
    from kafka_migration.airflow.hooks import KafkaClusterHook

    source_conn = params.get("source_conn_id") or "kafka_source"
    target_conn = params.get("target_conn_id") or "kafka_target"
    return (
        source_conn,
        target_conn,
        KafkaClusterHook(source_conn, "source").get_cluster_config(),
        KafkaClusterHook(target_conn, "target").get_cluster_config(),
    )


def _text(params: dict[str, Any], name: str) -> str | None:
    value = params.get(name)
    return None if value is None or str(value).strip() == "" else str(value)


def _quiet(params: dict[str, Any]) -> float:
    value = params.get("quiet_seconds")
    return DEFAULT_QUIET_SECONDS if value is None or value == "" else float(value)


def cutover_id_for(dag_id: str, run_id: str) -> str:
    from kafka_migration.run.planner import safe_run_id

    return safe_run_id(f"{dag_id}__{run_id}__cutover")  # not the final run's id: each has its report directory


def cutover_preflight(params: dict[str, Any], run_id: str, dag_id: str) -> dict[str, Any]:
    """Refuse while producers write or consumers run; record the cutover; hand the checks to ``finish``."""
    from kafka_migration.cutover.steps import CutoverRequest, prepare_cutover

    options = MigrationOptions.from_mapping({**params, "dry_run": False})
    source_conn, target_conn, source, target = _clusters(params)
    cutover_id = cutover_id_for(dag_id, run_id)
    checked = prepare_cutover(
        source,
        target,
        options,
        LedgerHook().get_conn(),
        CutoverRequest(
            cutover_id,
            _quiet(params),
            _text(params, "groups"),
            _text(params, "exclude_groups"),
            trigger="airflow",
            dag_id=dag_id,
            dag_run_id=run_id,
            reports_dir=settings.reports_dir(),
        ),
    )
    log.info("Cutover %s: pre-flight passed; groups to move: %s", cutover_id, ", ".join(checked.groups) or "none")
    return {
        "cutover_id": cutover_id,
        "preflight": checked.to_dict(),
        "source_conn_id": source_conn,
        "target_conn_id": target_conn,
        "options": {"dry_run": False},
    }


def _plan(planned: dict[str, Any] | None, topics_created: bool) -> MigrationPlan:
    """The final run's plan; PlanFailed when the plan task failed (its error is the one to read)."""
    if not planned or not topics_created:
        raise PlanFailed("the plan task of the final run failed (see its log); nothing was copied")
    return MigrationPlan.read(Path(planned["plan_path"]))


def cutover_finish(
    prepared: dict[str, Any] | None,
    planned: dict[str, Any] | None,
    params: dict[str, Any],
    topics_created: bool = True,
) -> dict:  # type: ignore[type-arg]
    """Still quiet, verified, groups synced with proof; record the ends; write the cutover report.

    PlanFailed (the DAG skips the task) when the pre-flight refused or the final run's plan failed: the
    task that failed says why; this one records the cutover as failed and writes its report.
    """
    from kafka_migration.airflow.lineage import LINEAGE
    from kafka_migration.cutover.steps import CutoverRecord
    from kafka_migration.cutover.steps import finish_cutover as finish
    from kafka_migration.exceptions import MigrationError

    if not prepared:
        raise PlanFailed("The pre-flight refused the cutover (see the preflight task): nothing was switched.")
    ledger = LedgerHook().get_conn()
    _, _, source, target = _clusters(params)
    try:
        plan = _plan(planned, topics_created)
    except PlanFailed as exc:
        from kafka_migration.cutover.point import FAILED
        from kafka_migration.cutover.report import generate_cutover_report

        ledger.update_cutover(prepared["cutover_id"], finished=True, status=FAILED, message=str(exc))
        files = generate_cutover_report(ledger, prepared["cutover_id"], settings.reports_dir())
        raise PlanFailed(f"Cutover {prepared['cutover_id']} recorded as FAILED: {exc}. Report: {files.html}") from None
    try:
        outcome = finish(
            source,
            target,
            ledger,
            prepared["cutover_id"],
            Preflight.from_dict(prepared["preflight"]),
            plan,
            CutoverRecord(settings.reports_dir(), LINEAGE),
        )
    except MigrationError as exc:
        raise RuntimeError(str(exc)) from None
    log.info("Cutover %s completed: %s. Report: %s", outcome.cutover_id, outcome.message, outcome.report)
    return {"cutover_id": outcome.cutover_id, "run_id": outcome.run_id, "report": str(outcome.report)}


def failback_prepare(params: dict[str, Any]) -> dict[str, Any]:
    """Check the target is quiet and the groups idle; seed the reverse checkpoints; the reverse run's options."""
    from dataclasses import asdict

    from kafka_migration.airflow.schema_tasks import check_failback_mode
    from kafka_migration.cutover.steps import load_cutover, prepare_failback
    from kafka_migration.exceptions import ConfigurationError

    cutover_id = _text(params, "cutover_id")
    if not cutover_id:
        raise ConfigurationError("Give the cutover to fail back (Param cutover_id); see 'kafka-migrate history'.")
    source_conn, target_conn, source, target = _clusters(params)
    ledger = LedgerHook().get_conn()
    check_failback_mode(params, ledger, load_cutover(ledger, cutover_id))  # before the pre-flight records anything
    cutover, checked, options = prepare_failback(
        source, target, ledger, cutover_id, _quiet(params), settings.reports_dir()
    )
    log.info(
        "Failback of cutover %s: target quiet, groups idle; copying %s back",
        cutover_id,
        ", ".join(f"{t} -> {s}" for t, s in sorted(cutover.reverse_topic_map().items())),
    )
    run_options = {**asdict(options), "topic_map": dict(options.topic_map or {})}
    run_options["topics_per_job"] = int(params.get("topics_per_job") or options.topics_per_job)
    return {
        "cutover_id": cutover_id,
        "preflight": checked.to_dict(),
        # the reverse direction: read the cutover's target, write its source
        "source_conn_id": target_conn,
        "target_conn_id": source_conn,
        "options": run_options,
    }


def failback_finish(
    prepared: dict[str, Any] | None,
    planned: dict[str, Any] | None,
    params: dict[str, Any],
    topics_created: bool = True,
) -> dict:  # type: ignore[type-arg]
    """Target still quiet, the reverse run verified, groups moved back with proof; the cutover report.
    PlanFailed (skipped) as ``cutover_finish``."""
    from kafka_migration.airflow.lineage import LINEAGE
    from kafka_migration.cutover.point import FAILED
    from kafka_migration.cutover.steps import CutoverRecord, load_cutover
    from kafka_migration.cutover.steps import finish_failback as finish
    from kafka_migration.exceptions import MigrationError

    if not prepared:
        raise PlanFailed("The failback's pre-flight failed (see the prepare task): nothing was copied back.")
    ledger = LedgerHook().get_conn()
    _, _, source, target = _clusters(params)
    cutover = load_cutover(ledger, prepared["cutover_id"])
    try:
        plan = _plan(planned, topics_created)
    except PlanFailed as exc:
        from kafka_migration.cutover.report import generate_cutover_report

        ledger.update_cutover(cutover.cutover_id, failback_status=FAILED, failback_message=str(exc))
        files = generate_cutover_report(ledger, cutover.cutover_id, settings.reports_dir())
        raise PlanFailed(
            f"Failback of cutover {cutover.cutover_id} recorded as FAILED: {exc}. Report: {files.html}"
        ) from None
    try:
        checked = Preflight.from_dict(prepared["preflight"])
        outcome = finish(source, target, ledger, cutover, checked, plan, CutoverRecord(settings.reports_dir(), LINEAGE))
    except MigrationError as exc:
        raise RuntimeError(str(exc)) from None
    log.info("Failback of cutover %s completed: %s. Report: %s", outcome.cutover_id, outcome.message, outcome.report)
    return {"cutover_id": outcome.cutover_id, "run_id": outcome.run_id, "report": str(outcome.report)}
