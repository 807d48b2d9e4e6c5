"""A "Migration report" link on every task of the migration DAGs."""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseOperatorLink

MIGRATION_DAGS = ("kafka_migration", "kafka_nightly_sync", "kafka_cutover", "kafka_failback")  # the run each one makes
URL_PREFIX = "/kafka-migrations"


def run_id_for(dag_id: str, dag_run_id: str) -> str:
    from kafka_migration.run.planner import safe_run_id

    return safe_run_id(f"{dag_id}__{dag_run_id}")


class MigrationReportLink(BaseOperatorLink):
    name = "Migration report"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        if ti_key.dag_id not in MIGRATION_DAGS:
            return ""
        return f"{URL_PREFIX}/runs/{run_id_for(ti_key.dag_id, ti_key.run_id)}"
