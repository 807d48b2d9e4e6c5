"""The reports the plugin's FastAPI app serves, and the tasks' report link (the console's API: test_console_api)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import require_module

require_module("airflow")
from fastapi.testclient import TestClient

from kafka_migration.airflow.links import MigrationReportLink, run_id_for
from kafka_migration.airflow.webapp import create_app
from kafka_migration.ledger import Ledger
from tests.unit.ledger.test_ledger import outcomes, plan


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    ledger = Ledger.open(url)
    p = plan("kafka_migration__manual_1", 0, 100, 0)
    ledger.start_run(p, trigger="airflow", dag_id="kafka_migration", dag_run_id="manual_1")
    ledger.record_topic(p, p.topics[0], *outcomes(p, {0: True, 1: False}))
    ledger.finish_run(p.run_id, "mismatch", 200)
    return TestClient(create_app(lambda: url, lambda: tmp_path / "reports", state_dir=lambda: tmp_path))


def test_report_generated_on_demand_and_served(client: TestClient) -> None:
    redirect = client.get("/runs/kafka_migration__manual_1", follow_redirects=False)
    assert redirect.status_code == 307
    report = client.get("/runs/kafka_migration__manual_1/report.html")
    assert report.status_code == 200 and "NOT VERIFIED" in report.text
    data = client.get("/runs/kafka_migration__manual_1/report.json").json()
    assert data["run"]["run_id"] == "kafka_migration__manual_1"
    assert client.get("/runs/nope/report.html").status_code == 404
    assert client.get("/runs/kafka_migration__manual_1/report.exe").status_code == 404


def test_task_link_points_at_the_run_report() -> None:
    class Key:
        dag_id = "kafka_migration"
        run_id = "manual__2026-11-22T21:00:00+00:00"

    link = MigrationReportLink().get_link(None, ti_key=Key())
    assert link == f"/kafka-migrations/runs/{run_id_for('kafka_migration', Key.run_id)}"
    Key.dag_id = "other_dag"
    assert MigrationReportLink().get_link(None, ti_key=Key()) == ""


def test_cutover_reports_are_served(client: TestClient, tmp_path: Path) -> None:
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    ledger.start_cutover(
        "kafka_cutover__manual_2__cutover",
        {
            "trigger": "airflow",
            "params": {"quiet_seconds": 30},
            "source_cluster_id": "src-cluster",
            "source_bootstrap": "s:9092",
            "target_cluster_id": "tgt-cluster",
            "target_bootstrap": "t:9092",
        },
    )
    ledger.update_cutover("kafka_cutover__manual_2__cutover", finished=True, status="refused", message="busy")
    report = client.get("/cutovers/kafka_cutover__manual_2__cutover/report.html")
    assert report.status_code == 200 and "CUTOVER REFUSED" in report.text
    assert client.get("/cutovers/nope/report.html").status_code == 404
