"""Runs made the way the pipeline makes them, with the copy and verification in this process instead of Spark.

For tests whose point is planning or what the clusters hold between runs (stale state, retention,
config sync, consumer groups): the plan under the run's leases, topic creation, the copy and the
verification of each topic's slices as one task of the Spark migrate step runs them on an executor
(``spark.executor_tasks._migrate_rows``), and the ledger's evidence.
Spark itself is covered by tests/spark and by the tests that run ``kafka-migrate run``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.ledger import Ledger
from kafka_migration.ledger.leases import Holder
from kafka_migration.model.config import ClusterConfig, ClusterPair, MigrationOptions
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.run.claims import lease_claim
from kafka_migration.run.evidence import RunEvidence, record_run
from kafka_migration.run.pipeline import RunOutcome
from kafka_migration.run.planner import build_plan, new_run_id
from kafka_migration.run.topics import create_target_topics
from kafka_migration.spark.driver_jobs import _outcome
from kafka_migration.spark.executor_tasks import _migrate_rows


def settings_of(cluster: str | Mapping[str, Any]) -> dict[str, Any]:
    """A bootstrap address, or librdkafka settings, as settings."""
    return {"bootstrap.servers": cluster} if isinstance(cluster, str) else dict(cluster)


def planned_run(
    source: str | Mapping[str, Any],
    target: str | Mapping[str, Any],
    options: MigrationOptions,
    ledger: Ledger,
) -> MigrationPlan:
    """Plan under the run's leases, open the run in the ledger and create the target topics."""
    tgt = KafkaCluster(ClusterConfig("target", settings_of(target)))
    run_id = new_run_id()
    claim = lease_claim(ledger, Holder.this_process(run_id), 600)
    try:
        plan = build_plan(
            KafkaCluster(ClusterConfig("source", settings_of(source))), tgt, options, run_id, ledger, claim
        )
        ledger.start_run(plan, trigger="cli")
        create_target_topics(plan, tgt)
    except BaseException:
        ledger.leases.release(run_id)
        raise
    return plan


def copied_and_verified(
    plan: MigrationPlan, source: str | Mapping[str, Any], target: str | Mapping[str, Any], ledger: Ledger
) -> RunOutcome:
    """Copy and verify every planned partition here, record the evidence (run/evidence.py, as every run does;
    its report in a temporary directory), release the leases."""
    pair = ClusterPair.of_settings(settings_of(source), settings_of(target))
    outcomes: dict[str, dict[str, Any]] = {"copy": {}, "verify": {}}
    try:
        for t in plan.topics:
            rows = _migrate_rows(t.slices(True), pair, None, None)  # what one task of the migrate step runs
            for step, results in outcomes.items():
                results[t.source_topic] = _outcome(step, t, [r for r in rows if r["step"] == step], 0.0)
        tgt = KafkaCluster(ClusterConfig("target", pair.target.settings))
        ids = tgt.topic_ids([t.target_topic for t in plan.topics])
        evidence = RunEvidence(plan, outcomes["copy"], outcomes["verify"], ids)
        report = record_run(ledger, evidence, None, Path(tempfile.mkdtemp(prefix="km-reports-")))
    finally:
        ledger.leases.release(plan.run_id)
    return RunOutcome(evidence, Path("."), report=report)


def verified_run(
    source: str | Mapping[str, Any],
    target: str | Mapping[str, Any],
    include: str | MigrationOptions,
    ledger: Ledger,
) -> MigrationPlan:
    """A whole run that must end verified (``include``: a pattern, or the run's options)."""
    options = include if isinstance(include, MigrationOptions) else MigrationOptions(include=include)
    plan = planned_run(source, target, options, ledger)
    outcome = copied_and_verified(plan, source, target, ledger)
    assert outcome.verified, outcome.rows
    return plan
