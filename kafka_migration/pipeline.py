"""The whole run without Airflow: plan, create topics, copy, verify, record. Used by the CLI."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kafka_migration.clients import KafkaCluster
from kafka_migration.config import ClusterConfig, MigrationOptions
from kafka_migration.ledger import Ledger
from kafka_migration.plan import MigrationPlan
from kafka_migration.planner import build_plan
from kafka_migration.results import TopicOutcome
from kafka_migration.spark.submit import SparkSettings, run_step
from kafka_migration.summary import TopicSummary, all_verified, run_status, summarize
from kafka_migration.topics import create_target_topics

log = logging.getLogger(__name__)


def run_dir(state_dir: Path, run_id: str) -> Path:
    return Path(state_dir) / "runs" / run_id


@dataclass
class RunOutcome:
    plan: MigrationPlan
    directory: Path
    copy: dict[str, TopicOutcome] = field(default_factory=dict)
    verify: dict[str, TopicOutcome] = field(default_factory=dict)

    @property
    def rows(self) -> list[TopicSummary]:
        return summarize(self.plan, self.copy, self.verify)

    @property
    def nothing_new(self) -> bool:
        return self.plan.offset_span == 0 and not any(t.create for t in self.plan.topics)

    @property
    def verified(self) -> bool:
        return self.nothing_new or all_verified(self.rows)


def record_results(ledger: Ledger, outcome: RunOutcome) -> str:
    """Store every topic's evidence, advance checkpoints, close the run; returns the run status."""
    plan = outcome.plan
    if outcome.nothing_new:
        ledger.record_nothing_new(plan)
        ledger.finish_run(plan.run_id, "up_to_date", 0, "nothing new on the source since the last verified run")
        return "up_to_date"
    for topic in plan.topics:
        ledger.record_topic(plan, topic, outcome.copy.get(topic.source_topic), outcome.verify.get(topic.source_topic))
    rows = outcome.rows
    status = run_status(rows)
    ledger.finish_run(plan.run_id, status, sum(r.copied or 0 for r in rows))
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
) -> RunOutcome:
    spark = spark or SparkSettings()
    source_cluster = KafkaCluster(source)
    target_cluster = KafkaCluster(target)
    plan = build_plan(source_cluster, target_cluster, options, ledger=ledger)
    directory = run_dir(state_dir, plan.run_id)
    plan.write(directory / "plan.json")
    ledger.start_run(plan, trigger="cli")
    if on_plan is not None:
        on_plan(plan)
    outcome = RunOutcome(plan=plan, directory=directory)
    if options.dry_run:
        ledger.finish_run(plan.run_id, "dry_run", 0, "dry run: nothing created or copied")
        return outcome
    try:
        if outcome.nothing_new:
            record_results(ledger, outcome)
            return outcome
        create_target_topics(plan, target_cluster)
        for step in ("copy", "verify"):
            if on_step is not None:
                on_step(step)
            results = run_step(
                step, directory / "plan.json", directory / f"{step}.json", source, target, spark, on_line=on_line
            )
            setattr(outcome, step, results.topics)
        record_results(ledger, outcome)
    except BaseException as exc:
        ledger.finish_run(plan.run_id, "failed", 0, str(exc)[:2000] or type(exc).__name__)
        raise
    return outcome
