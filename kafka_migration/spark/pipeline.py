"""The whole run without Airflow: plan, create topics, copy and verify, record. Used by the CLI.

One Spark application copies and verifies (the ``migrate`` step). It is started when the run
starts, so that Spark's start-up overlaps planning; it waits until the plan is written and the
target topics exist, and is told to stop, without writing anything, when there is nothing to run.
"""

from __future__ import annotations

import logging
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError

from kafka_migration.exceptions import LeaseLostError, LedgerUnavailableError
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.ledger import Ledger
from kafka_migration.ledger.leases import Holder, LeaseHeartbeat, lease_ttl_from_env
from kafka_migration.ledger.urls import redact_url
from kafka_migration.model.bulk import collector_paused
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.results import TopicOutcome
from kafka_migration.model.timings import RunTimings, run_timings, task_intervals
from kafka_migration.reports.summary import TopicSummary, all_verified, run_status, summarize, with_losses
from kafka_migration.run.claims import lease_claim, lease_keys, release_leases
from kafka_migration.run.files import new_run_id, run_dir
from kafka_migration.run.losses import unaccepted_message
from kafka_migration.run.planner import Claim, build_plan
from kafka_migration.run.topics import create_target_topics
from kafka_migration.spark.submit import SparkApplication, SparkSettings, can_wait, migrate_application

log = logging.getLogger(__name__)


@dataclass
class RunOutcome:
    plan: MigrationPlan
    directory: Path
    copy: dict[str, TopicOutcome] = field(default_factory=dict)
    verify: dict[str, TopicOutcome] = field(default_factory=dict)
    # Where the wall time went (filled by run_migration once the parts are known; None: dry run, nothing new).
    timings: RunTimings | None = None

    @property
    def rows(self) -> list[TopicSummary]:
        return summarize(self.plan, self.copy, self.verify)

    @property
    def nothing_new(self) -> bool:
        return self.plan.offset_span == 0 and not any(t.create for t in self.plan.topics)

    @property
    def verified(self) -> bool:
        return not self.plan.unaccepted_losses and (self.nothing_new or all_verified(self.rows))

    @property
    def status(self) -> str:
        """The run's status as the ledger records it (``target_lost`` when the target lost verified records)."""
        return with_losses("up_to_date" if self.nothing_new else run_status(self.rows), self.plan)


@collector_paused()
def record_results(ledger: Ledger, outcome: RunOutcome, target_topic_ids: dict[str, str] | None = None) -> str:
    """Store every topic's evidence, advance checkpoints, close the run; returns the run status."""
    plan = outcome.plan
    lost = unaccepted_message(plan)
    if outcome.nothing_new:
        ledger.record_nothing_new(plan)
        ledger.finish_run(
            plan.run_id,
            outcome.status,
            0,
            lost or "nothing new on the source since the last verified run",
            timings=outcome.timings,
        )
        return outcome.status
    ids = target_topic_ids or {}
    ledger.record_topics(
        plan,
        [
            (
                topic,
                outcome.copy.get(topic.source_topic),
                outcome.verify.get(topic.source_topic),
                ids.get(topic.target_topic),
            )
            for topic in plan.topics
        ],
    )
    rows = outcome.rows
    status = outcome.status
    ledger.finish_run(plan.run_id, status, sum(r.copied or 0 for r in rows), lost, timings=outcome.timings)
    return status


def run_migration(
    source: ClusterConfig,
    target: ClusterConfig,
    options: MigrationOptions,
    state_dir: Path,
    ledger: Ledger,
    spark: SparkSettings | None = None,
    on_plan: Callable[[MigrationPlan], None] | None = None,
    on_line: Callable[[str], None] | None = None,
    on_step: Callable[[str], None] | None = None,
    lease_ttl: float | None = None,
    run_id: str | None = None,
    app: SparkApplication | None = None,
    started: float | None = None,
) -> RunOutcome:
    """Plan (under the leases of the target topics), create topics, copy and verify, record; release the leases.

    The Spark application starts first and waits for the plan: its start-up runs while the run is planned.
    A caller may have started it earlier still (``migrate_application`` with ``wait=True`` for the
    directory of ``run_id``), e.g. before its own imports: from then on this function owns ``app``,
    tells it to go or stops it. ``started``: when the run began for the user (default: now).
    """
    started = time.time() if started is None else started
    spark = spark or SparkSettings()
    try:
        ttl = lease_ttl if lease_ttl is not None else lease_ttl_from_env()
        source_cluster = KafkaCluster(source)
        target_cluster = KafkaCluster(target)
    except BaseException:
        _abort(app)
        raise
    run_id = run_id or new_run_id()
    holder = Holder.this_process(run_id)
    directory = run_dir(state_dir, run_id)
    running: list[subprocess.Popen[str]] = [app.process] if app is not None else []
    if app is None and not options.dry_run and can_wait(spark):
        app = migrate_application(directory, source, target, spark, on_line, running.append, wait=True)
    try:
        claim = None if options.dry_run else lease_claim(ledger, holder, ttl)
        plan = _plan(source_cluster, target_cluster, options, ledger, run_id, claim, state_dir)
        directory = run_dir(state_dir, plan.run_id)
        if on_plan is not None:
            on_plan(plan)
        outcome = RunOutcome(plan=plan, directory=directory)
        if options.dry_run:
            ledger.finish_run(plan.run_id, "dry_run", 0, "dry run: nothing created or copied")
            return outcome
    except BaseException:
        _abort(app)
        raise

    def stop_spark(_message: str) -> None:
        for process in running:
            if process.poll() is None:
                process.terminate()

    heartbeat = LeaseHeartbeat(ledger.leases, plan.run_id, lease_keys(plan), ttl, on_lost=stop_spark)
    try:
        with heartbeat:
            if outcome.nothing_new:
                app = _abort(app)
                _record(ledger, outcome, {})
                return outcome
            target_ids = create_target_topics(plan, target_cluster).topic_ids
            planned = time.time()
            heartbeat.check()
            if app is None:
                app = migrate_application(directory, source, target, spark, on_line, running.append, wait=False)
            else:
                app.go()
            if on_step is not None:
                on_step("copy")
                on_step("verify")
            results = app.results()
            heartbeat.check()
            outcome.copy = results["copy"].topics
            outcome.verify = results["verify"].topics
            _record(ledger, outcome, target_ids)
            outcome.timings = run_timings(
                started=started,
                planned=planned,
                spark_ready=results["copy"].ready,
                copy_tasks=task_intervals(p for t in outcome.copy.values() for p in t.partitions),
                verify_tasks=task_intervals(p for t in outcome.verify.values() for p in t.partitions),
                finished=time.time(),
            )
            _store_timings(ledger, outcome)
            app.detach()  # Spark stops by itself while the report is written
            app = None
    except BaseException as exc:
        _abort(app)
        error = _failure(ledger, plan.run_id, exc, heartbeat.lost)
        if error is exc:
            raise
        raise error from exc
    finally:
        release_leases(ledger, plan.run_id)
    return outcome


def _store_timings(ledger: Ledger, outcome: RunOutcome) -> None:
    """Keep the run's timings with its evidence; informational, so a ledger that fails here fails nothing."""
    try:
        ledger.set_run_timings(outcome.plan.run_id, outcome.timings)
    except SQLAlchemyError as exc:
        log.warning("Could not store the timings of run %s: %s", outcome.plan.run_id, exc)


def _abort(app: SparkApplication | None) -> None:
    """Stop a Spark application that waits for a plan (or still runs), so that no driver outlives the run."""
    if app is not None:
        app.abort()


def _plan(
    source: KafkaCluster,
    target: KafkaCluster,
    options: MigrationOptions,
    ledger: Ledger,
    run_id: str,
    claim: Claim | None,
    state_dir: Path,
) -> MigrationPlan:
    """Plan under the leases, write the plan file, open the run in the ledger; release the leases on failure."""
    try:
        plan = build_plan(source, target, options, run_id=run_id, ledger=ledger, claim=claim)
        plan.write(run_dir(state_dir, plan.run_id) / "plan.json")
        ledger.start_run(plan, trigger="cli")
    except BaseException:
        if claim is not None:
            release_leases(ledger, run_id)
        raise
    return plan


def _failure(ledger: Ledger, run_id: str, exc: BaseException, lease_lost: str | None) -> BaseException:
    """Record a failed run (when the ledger can); a Spark step stopped for a lost lease fails as such."""
    error: BaseException = exc
    if lease_lost is not None and not isinstance(exc, LeaseLostError):
        error = LeaseLostError(lease_lost)
    if not isinstance(error, LedgerUnavailableError):
        try:
            ledger.finish_run(run_id, "failed", 0, str(error)[:2000] or type(error).__name__)
        except SQLAlchemyError as ledger_exc:
            log.warning("Could not record run %s as failed in the ledger: %s", run_id, ledger_exc)
    return error


def _record(ledger: Ledger, outcome: RunOutcome, target_ids: dict[str, str]) -> str:
    """Store the evidence; a ledger that cannot store it means the run is not verified (and says how to finish)."""
    try:
        return record_results(ledger, outcome, target_ids)
    except SQLAlchemyError as exc:
        raise LedgerUnavailableError(
            f"Run {outcome.plan.run_id} copied and verified in Spark, but its evidence could not be stored in the "
            f"ledger at {redact_url(str(ledger.engine.url))} ({type(exc).__name__}: {str(exc).splitlines()[0]}). "
            "It is NOT reported verified and no checkpoint moved. Run the same command again once the ledger is "
            "back: it resumes this run's partitions, finds the records already on the target (copying nothing "
            f"twice), verifies them and records the evidence. Run files: {outcome.directory}"
        ) from None
