"""DAG ``kafka_nightly_sync``: copy what is new since the last verified run, every night.

Scheduled daily by default; one run at a time; a missed night is caught up by one
run. New topics that match the pattern are picked up; topics that disappeared
from the source are reported. Configure in airflow.cfg section [kafka_migration]
(or AIRFLOW__KAFKA_MIGRATION__<KEY>): nightly_schedule (cron or preset, default
@daily), nightly_include, nightly_exclude, nightly_rename, nightly_schema_ids (off,
keep or translate; the registries: connections schema_registry_source and
schema_registry_target) and nightly_unknown_schema_ids (refuse or pass).
"""

from airflow.configuration import conf

from kafka_migration.airflow.dag_factory import migration_dag, migration_params

dag = migration_dag(
    dag_id="kafka_nightly_sync",
    schedule=conf.get("kafka_migration", "nightly_schedule", fallback="@daily"),
    params=migration_params(
        include=conf.get("kafka_migration", "nightly_include", fallback=".*"),
        exclude=conf.get("kafka_migration", "nightly_exclude", fallback=""),
        rename=conf.get("kafka_migration", "nightly_rename", fallback="{topic}"),
        schema_ids=conf.get("kafka_migration", "nightly_schema_ids", fallback="off"),
        unknown_schema_ids=conf.get("kafka_migration", "nightly_unknown_schema_ids", fallback="refuse"),
    ),
    description="Incremental nightly Kafka topic sync (copies only what is new, verified)",
    doc_md=__doc__,
)
