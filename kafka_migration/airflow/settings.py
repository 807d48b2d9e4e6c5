"""Where the state directory, reports and ledger live; the same answer in tasks, plugin and CLI.

Order: Airflow Variable (tasks only), ``[kafka_migration]`` option in airflow.cfg
(or ``AIRFLOW__KAFKA_MIGRATION__*``), ``KAFKA_MIGRATION_*`` environment variable,
then a default under ``$AIRFLOW_HOME``.
"""

from __future__ import annotations

import os
from pathlib import Path


def _airflow_option(key: str) -> str | None:
    try:
        from airflow.configuration import conf

        value = conf.get("kafka_migration", key, fallback=None)
    except Exception:
        return None
    return value or None


def state_dir() -> Path:
    value = (
        _airflow_option("state_dir")
        or os.environ.get("KAFKA_MIGRATION_STATE_DIR")
        or os.path.join(os.environ.get("AIRFLOW_HOME", os.path.expanduser("~/airflow")), "kafka-migration")
    )
    return Path(value)


STATE_DIR_VARIABLE = "kafka_migration_state_dir"


def task_state_dir() -> Path:
    """As a task sees it: Airflow Variable ``kafka_migration_state_dir``, else ``state_dir()``."""
    from airflow.sdk import Variable

    return Path(Variable.get(STATE_DIR_VARIABLE, default=None) or state_dir())


def reports_dir() -> Path:
    value = _airflow_option("reports_dir") or os.environ.get("KAFKA_MIGRATION_REPORTS_DIR")
    return Path(value) if value else state_dir() / "reports"


def configured_ledger_url() -> str:
    from kafka_migration.ledger import default_ledger_url

    return (
        _airflow_option("ledger_url") or os.environ.get("KAFKA_MIGRATION_LEDGER_URL") or default_ledger_url(state_dir())
    )


def executor_env() -> str | None:
    """The packed executor environment to ship with every spark-submit (kafka_migration/spark/executor_env.py)."""
    from kafka_migration.spark.executor_env import configured_executor_env

    return configured_executor_env(_airflow_option("executor_env"))


EXECUTOR_ENV_VARIABLE = "kafka_migration_executor_env"


def task_executor_env() -> str | None:
    """As a task sees it: Variable ``kafka_migration_executor_env``, else ``executor_env()`` (the
    ``[kafka_migration] executor_env`` option, else $KAFKA_MIGRATION_EXECUTOR_ENV); None: nothing shipped."""
    from airflow.sdk import Variable

    from kafka_migration.spark.executor_env import configured_executor_env

    return configured_executor_env(Variable.get(EXECUTOR_ENV_VARIABLE, default=None)) or executor_env()


def lease_ttl() -> float:
    """Seconds a DAG run's leases live without renewal: ``[kafka_migration] lease_ttl``, else the environment.

    It must outlast the longest wait between two tasks of a DAG run (tasks renew while they run).
    """
    from kafka_migration.ledger.leases import LEASE_TTL_ENV, parse_lease_ttl

    option = _airflow_option("lease_ttl")
    if option is not None:
        return parse_lease_ttl(option, "[kafka_migration] lease_ttl")
    return parse_lease_ttl(os.environ.get(LEASE_TTL_ENV), LEASE_TTL_ENV)


def spark_log_level() -> str | None:
    """Spark's own log level in the Spark tasks' logs: ``[kafka_migration] spark_log_level`` (or
    ``AIRFLOW__KAFKA_MIGRATION__SPARK_LOG_LEVEL``); None: $KAFKA_MIGRATION_SPARK_LOG_LEVEL, else WARN
    (spark/startup.py). ``INFO`` brings Spark's start-up lines back."""
    return _airflow_option("spark_log_level")


def census_local_records() -> int:
    """Planned offsets a DAG run's plan task reads itself for the census of the schema ids (schema_ids keep or
    translate); more are read by a Spark application of its own: ``[kafka_migration] census_local_records`` (or
    ``AIRFLOW__KAFKA_MIGRATION__CENSUS_LOCAL_RECORDS``), else $KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS, else 200,000."""
    from kafka_migration.run.census_takers import local_records

    option = _airflow_option("census_local_records")
    if option is not None:
        return local_records(option, "[kafka_migration] census_local_records")
    return local_records()
