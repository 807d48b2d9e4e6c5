"""The whole run without Airflow: plan, create topics, copy, verify. Used by the CLI."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kafka_migration.clients import KafkaCluster
from kafka_migration.config import ClusterConfig, MigrationOptions
from kafka_migration.plan import MigrationPlan
from kafka_migration.planner import build_plan
from kafka_migration.results import TopicOutcome
from kafka_migration.spark.submit import SparkSettings, run_step
from kafka_migration.summary import TopicSummary, all_verified, summarize
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
    def verified(self) -> bool:
        return all_verified(self.rows)


def run_migration(
    source: ClusterConfig,
    target: ClusterConfig,
    options: MigrationOptions,
    state_dir: Path,
    spark: SparkSettings | None = None,
    on_plan: Callable[[MigrationPlan], None] | None = None,
    on_line: Callable[[str], None] | None = None,
    on_step: Callable[[str], None] | None = None,
) -> RunOutcome:
    spark = spark or SparkSettings()
    source_cluster = KafkaCluster(source)
    target_cluster = KafkaCluster(target)
    plan = build_plan(source_cluster, target_cluster, options)
    directory = run_dir(state_dir, plan.run_id)
    plan.write(directory / "plan.json")
    if on_plan is not None:
        on_plan(plan)
    outcome = RunOutcome(plan=plan, directory=directory)
    if options.dry_run:
        return outcome
    create_target_topics(plan, target_cluster)
    for step in ("copy", "verify"):
        if on_step is not None:
            on_step(step)
        results = run_step(
            step, directory / "plan.json", directory / f"{step}.json", source, target, spark, on_line=on_line
        )
        setattr(outcome, step, results.topics)
    return outcome
