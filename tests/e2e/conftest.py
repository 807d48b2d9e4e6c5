"""An isolated Airflow home with a migrated metadata DB (SQLite) for end-to-end tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def airflow_home() -> Iterator[Path]:
    """The session's Airflow home (tests/conftest.py pytest_configure), with a migrated metadata DB."""
    home = Path(os.environ["AIRFLOW_HOME"])
    env = {
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    subprocess.run(
        [str(Path(sys.executable).parent / "airflow"), "db", "migrate"],
        check=True,
        stdout=subprocess.DEVNULL,
        env=os.environ.copy(),
    )
    yield home
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture
def kafka_connections(clusters, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    for conn_id, bootstrap in (("KAFKA_SOURCE", clusters.source), ("KAFKA_TARGET", clusters.target)):
        monkeypatch.setenv(
            f"AIRFLOW_CONN_{conn_id}", json.dumps({"conn_type": "kafka", "extra": {"bootstrap.servers": bootstrap}})
        )


@pytest.fixture
def migration_dag(airflow_home: Path):  # type: ignore[no-untyped-def]
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(REPO / "dags"))
    assert not bag.import_errors, bag.import_errors
    return bag.get_dag("kafka_migration")
