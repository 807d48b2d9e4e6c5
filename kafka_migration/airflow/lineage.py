"""Lineage and assets inside Airflow: apache-airflow-providers-openlineage sends, so a DAG run is reported once.

run/evidence.py builds the same events for a DAG run as for a CLI run (lineage/events.py). Inside Airflow
openlineage-python's client does not send them (two emitters would report one run twice, and the provider is
how a deployment configures lineage: ``[openlineage] transport``). The tasks pass ``LINEAGE`` (a ``Lineage``
whose sink is ``TASK``) to what records a run, a group sync or a cutover:

* a migration run's events are kept for the operators: the summary (``MigrationSummaryOperator``, the task that
  records the evidence and closes the run) reports the last one's inputs (source topics), outputs (target
  topics) and run facets (``kafkaMigration``, ``errorMessage``) as its OperatorLineage, and the provider sends
  them in the summary task's COMPLETE or FAIL, under its own job (``<dag_id>.summary``) and parent (the DAG run);
* the events of a consumer group sync, a cutover or a failback, which no operator owns, go through the
  provider's own client (its configuration, its redaction), when the provider is enabled.

Without an OpenLineage configuration the provider is disabled and nothing is sent; the asset events
(``verified_assets``) do not depend on it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from kafka_migration.lineage import emit
from kafka_migration.lineage.facets import MIGRATION_FACET

log = logging.getLogger(__name__)

# The alias the summary declares as its outlet: through it, one asset event per verified target topic.
VERIFIED_TOPICS_ALIAS = "kafka_migration.verified_topics"


class ProviderSink:
    """Keeps a migration run's events for the summary's OperatorLineage; sends the others through the provider."""

    def __init__(self) -> None:
        self.runs = emit.Collector()
        self._off = False

    def send(self, event: Any) -> None:
        if MIGRATION_FACET in (event.run.facets or {}):
            self.runs.send(event)
            return
        if self._off:
            return
        try:
            from airflow.providers.openlineage.conf import is_disabled

            if is_disabled():
                return
            from airflow.providers.openlineage.plugins.listener import get_openlineage_listener

            get_openlineage_listener().adapter.emit(event)
        except Exception as exc:
            self._off = True
            log.warning(
                "OpenLineage: could not hand the %s event to the provider (%s: %s)",
                event.job.name,
                type(exc).__name__,
                exc,
            )


TASK = ProviderSink()
LINEAGE = emit.Lineage(TASK)  # what the tasks pass on: this worker's events to TASK, never to openlineage-python


def run_lineage() -> Any:
    """The OperatorLineage of the run this task recorded: the last migration event's datasets and run facets
    (empty when it recorded none, e.g. a dry run or a plan that failed before the run opened)."""
    from airflow.providers.openlineage.extractors import OperatorLineage

    event = TASK.runs.last()
    if event is None:
        return OperatorLineage()
    return OperatorLineage(
        inputs=list(event.inputs or []), outputs=list(event.outputs or []), run_facets=dict(event.run.facets or {})
    )


def job_lineage(plan_path: str, topics: list[str]) -> Any:
    """The OperatorLineage of a Spark step: its job's source topics in, their target topics out."""
    from airflow.providers.openlineage.extractors import OperatorLineage

    from kafka_migration.lineage.events import datasets
    from kafka_migration.run.files import read_plan

    plan = read_plan(Path(plan_path))
    pairs = [(t.source_topic, t.target_topic) for t in plan.topics if t.source_topic in set(topics)]
    inputs, outputs = datasets(plan.source.bootstrap, plan.target.bootstrap, pairs)
    return OperatorLineage(inputs=inputs, outputs=outputs)


def verified_assets(report_path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(asset URI, event extra) of every target topic the run copied and verified, from its report.json;
    none unless the whole run is verified. The URI is the Kafka provider's: ``kafka://host:port/topic``."""
    from kafka_migration.lineage.events import verified_topics
    from kafka_migration.lineage.naming import asset_uri
    from kafka_migration.model.report import SignoffReport
    from kafka_migration.reports.signoff import sha256

    data = report_path.read_bytes()
    report = SignoffReport.from_content(json.loads(data))
    copied = {t.target_topic: t for t in report.topics}
    return [
        (
            asset_uri(report.scope.target.bootstrap, topic),
            {
                "run_id": report.run.run_id,
                "records_copied": copied[topic].records_copied,
                "records_verified": copied[topic].records_verified,
                "report_sha256": sha256(data),
            },
        )
        for topic in verified_topics(report)
    ]
