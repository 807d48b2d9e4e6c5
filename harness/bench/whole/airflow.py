"""Scenario 5's two Airflow drivers: ``Airflow``, a temporary home whose DAG runs are ``airflow dags test``
(optionally with the Execution API up first), and ``DeployedAirflow``, a running ``airflow standalone``
whose DAG runs are triggered over its REST API; each run's sample with its trigger to summary."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from harness.bench.common import SPARK, load1
from harness.bench.whole.metadata import airflow_overhead, summary_end, trigger_to_summary
from harness.bench.whole.runs import BIN, REPO, child_env, launch, project_sample


def _kafka_connection(bootstrap: str) -> str:
    """An Airflow connection of type kafka (librdkafka settings in extra), as AIRFLOW_CONN_* holds it."""
    return json.dumps({"conn_type": "kafka", "extra": {"bootstrap.servers": bootstrap}})


def _dag_sample(
    state_dir: Path, wall: float, load: float, dag_run: dict[str, Any], seconds: float | None
) -> dict[str, Any]:
    """A DAG run's sample: the project's figures from its report, trigger to summary, Airflow's share."""
    sample = project_sample(state_dir, wall, load)
    sample["trigger_to_summary_seconds"] = seconds
    sample["airflow"] = airflow_overhead(dag_run)
    sample["dag_run"] = dag_run
    return sample


class Airflow:
    """A temporary AIRFLOW_HOME with a migrated SQLite metadata DB, as tests/e2e/conftest.py sets it up."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.state_dir = home / "kafka-migration"
        self.env = {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "KAFKA_MIGRATION_STATE_DIR": str(self.state_dir),
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": SPARK.settings.master}),
        }

    def migrate(self) -> float:
        started = time.monotonic()
        self.home.mkdir(parents=True, exist_ok=True)
        code, _, output = launch(
            [str(BIN / "airflow"), "db", "migrate"], self.home / "migrate.log", child_env(self.env)
        )
        if code != 0:
            raise RuntimeError(f"airflow db migrate exited {code}:\n{output[-3000:]}")
        return round(time.monotonic() - started, 1)

    def run(self, source: str, target: str, topic: str, log: Path, api_up: bool = False) -> dict[str, Any]:
        """One ``airflow dags test`` of the DAG; ``api_up``: with the Execution API initialised first."""
        load = load1()
        env = child_env(
            {
                **self.env,
                "AIRFLOW_CONN_KAFKA_SOURCE": _kafka_connection(source),
                "AIRFLOW_CONN_KAFKA_TARGET": _kafka_connection(target),
            }
        )
        conf = json.dumps({"include": re.escape(topic), "dry_run": False})
        airflow = [sys.executable, "-m", "harness.servers.airflow_api_up"] if api_up else [str(BIN / "airflow")]
        code, wall, output = launch([*airflow, "dags", "test", "kafka_migration", "-c", conf], log, env)
        dag_run = self.last_run()
        if code != 0 or dag_run.get("state") != "success":
            raise RuntimeError(f"airflow dags test exited {code}, DAG run {dag_run.get('state')}:\n{output[-3000:]}")
        return _dag_sample(self.state_dir, wall, load, dag_run, trigger_to_summary(dag_run))

    def last_run(self) -> dict[str, Any]:
        """The newest kafka_migration DAG run's row (state, queued_at, created_at, start_date), its task
        instances (``tasks``) and when its verdict was complete (``summary_end``); empty when there is none."""
        with sqlite3.connect(self.home / "airflow.db") as db:
            db.row_factory = sqlite3.Row
            row = db.execute(
                "SELECT run_id, state, queued_at, created_at, start_date, end_date FROM dag_run "
                "WHERE dag_id = 'kafka_migration' ORDER BY id DESC LIMIT 1"
            ).fetchone()
            if row is None:
                return {}
            tasks = [
                dict(t)
                for t in db.execute(
                    "SELECT task_id, map_index, state, start_date, end_date FROM task_instance "
                    "WHERE dag_id = 'kafka_migration' AND run_id = ? ORDER BY start_date",
                    (row["run_id"],),
                )
            ]
        return {**dict(row), "tasks": tasks, "summary_end": summary_end(tasks)}


class DeployedAirflow:
    """``airflow standalone`` with the repository's DAGs: runs triggered over REST, timed from its API.

    ``metadata_url``: Airflow's metadata database (PostgreSQL, as docker-compose.yaml runs it); None:
    SQLite in the home, where the scheduler starts a triggered run only at the next whole second (it
    selects queued runs with ``run_after <= now()``, and SQLite's now() has no fraction of a second).
    """

    def __init__(self, home: Path, source: str, metadata_url: str | None = None) -> None:
        self.home = home
        self.source = source
        self.metadata_url = metadata_url
        self.state_dir = home / "kafka-migration"
        self._stack = contextlib.ExitStack()
        self.api: Any = None

    def __enter__(self) -> DeployedAirflow:
        from harness.servers.airflow_server import airflow_standalone

        env = {
            "AIRFLOW_CONN_KAFKA_SOURCE": _kafka_connection(self.source),
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": SPARK.settings.master}),
            "KAFKA_MIGRATION_STATE_DIR": str(self.state_dir),
        }
        if self.metadata_url:  # psycopg 3 for the async engine too, as docker-compose.yaml sets it
            env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = self.metadata_url
            env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"] = self.metadata_url
        server = self._stack.enter_context(airflow_standalone(self.home, env))
        self.api = server.client()
        self._stack.callback(self.api.close)
        self.api.wait_for_dag("kafka_migration")
        self.api.unpause("kafka_migration")
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _point_target_at(self, bootstrap: str) -> None:
        """The ``kafka_target`` connection (in the metadata DB, so that it can change per run)."""
        body = {
            "connection_id": "kafka_target",
            "conn_type": "kafka",
            "extra": json.dumps({"bootstrap.servers": bootstrap}),
        }
        found = self.api.request("GET", "/api/v2/connections/kafka_target", expect=(200, 404))
        if found.status_code == 404:
            self.api.request("POST", "/api/v2/connections", json=body, expect=(201,))
        else:
            self.api.request("PATCH", "/api/v2/connections/kafka_target", json=body)

    def run(self, target: str, topic: str) -> dict[str, Any]:
        load = load1()
        self._point_target_at(target)
        started = self.api.trigger("kafka_migration", {"include": re.escape(topic), "dry_run": False})
        run_id = started["dag_run_id"]
        final = self.api.wait_for_run("kafka_migration", run_id, timeout=900)
        if final["state"] != "success":
            raise RuntimeError(
                f"DAG run {run_id} ended {final['state']}\n{self.api.describe_run('kafka_migration', run_id)}"
            )
        tasks = self.api.task_instances("kafka_migration", run_id)
        dag_run = {**final, "tasks": tasks, "summary_end": summary_end(tasks)}
        seconds = trigger_to_summary(dag_run)
        if seconds is None:
            raise RuntimeError(f"DAG run {run_id}: no trigger or summary time in {final}")
        # No process of its own to time: the wall time is what the user waits, trigger to summary.
        return _dag_sample(self.state_dir, seconds, load, dag_run, seconds)
