"""What a copy_verify task log shows: the pipeline's lines, not Spark's start-up (real Airflow, real spark-submit).

The kafka_migration DAG runs twice on the shared Apache Kafka clusters, a topic of a few records each
time: by default no Spark INFO line comes before the driver's first line of ours (Spark's loggers are
at WARN, spark/startup.py); with the ``[kafka_migration] spark_log_level`` option at INFO, Spark's
start-up lines are back, and ours still show.
"""

from __future__ import annotations

import re

import pytest

from harness.data.seed import create_topic, producer, send

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

# log4j's pattern in Spark's configuration and ours: "26/11/25 23:21:20 INFO SparkContext: Running Spark version"
SPARK_INFO = re.compile(r"\d\d/\d\d/\d\d \d\d:\d\d:\d\d INFO [\w.$]+: ")
# the driver's own lines (spark/driver_jobs.py): "2026-11-25 23:21:17,874 INFO kafka_migration.spark: migrate: ..."
OURS = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO kafka_migration\.")


def _seed(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic, 1)
    p = producer(bootstrap)
    for i in range(5):
        send(p, topic, 0, f"k{i}".encode(), b"v")
    p.flush(10)


def _task_log(migration_dag, include: str, capfd: pytest.CaptureFixture[str], caplog) -> list[str]:  # type: ignore[no-untyped-def]
    """The lines of the one captured stream that holds the driver's output, in order."""
    capfd.readouterr()
    caplog.clear()
    run = migration_dag.test(run_conf={"include": include})
    assert str(run.state) == "success"
    captured = capfd.readouterr()
    streams = [captured.out, captured.err, caplog.text]
    (log,) = [s for s in streams if OURS.search(s)]  # Airflow's task log, wherever dag.test sends it
    return log.splitlines()


def _first_ours(lines: list[str]) -> int:
    return next(i for i, line in enumerate(lines) if OURS.search(line))


def test_a_copy_verify_log_starts_with_our_lines_and_a_setting_brings_sparks_back(  # type: ignore[no-untyped-def]
    migration_dag, clusters, kafka_connections, unique, capfd, caplog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KAFKA_MIGRATION_SPARK_LOG_LEVEL", raising=False)
    monkeypatch.delenv("AIRFLOW__KAFKA_MIGRATION__SPARK_LOG_LEVEL", raising=False)
    quiet, loud = f"logq{unique}", f"logl{unique}"
    _seed(clusters.source, quiet)
    _seed(clusters.source, loud)

    lines = _task_log(migration_dag, quiet, capfd, caplog)
    first = _first_ours(lines)
    assert [line for line in lines[:first] if SPARK_INFO.search(line)] == []
    assert not any(SPARK_INFO.search(line) for line in lines), "Spark INFO lines in the task log"
    ours = "\n".join(line for line in lines if OURS.search(line))
    assert "migrate: 1 topic, 1 partition" in ours  # the driver's first line, then progress and topics done
    assert "1 of 1 topic done" in ours

    monkeypatch.setenv("AIRFLOW__KAFKA_MIGRATION__SPARK_LOG_LEVEL", "INFO")  # [kafka_migration] spark_log_level
    lines = _task_log(migration_dag, loud, capfd, caplog)
    first = _first_ours(lines)
    before = [line for line in lines[:first] if SPARK_INFO.search(line)]
    assert any("INFO SparkContext: Running Spark version" in line for line in before), lines[:first]
    assert "1 of 1 topic done" in "\n".join(line for line in lines if OURS.search(line))
