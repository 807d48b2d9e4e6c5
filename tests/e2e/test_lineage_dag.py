"""Lineage and assets in a real Airflow (``airflow standalone``, LocalExecutor, real Spark, two Apache Kafka
clusters), apache-airflow-providers-openlineage configured with its file transport as a deployment configures it.

The downstream DAG of docs/lineage.md, scheduled on a migrated topic's asset (``kafka://host:port/topic``), runs
after a verified migration of that topic and does not run after a migration with differences (a faulty copier,
put in front of Spark's copy, leaves each partition's last record out). Every OpenLineage event the provider
wrote is valid against the OpenLineage schemas; the summary task's COMPLETE carries the datasets and the
``kafkaMigration`` facet of the run's report.json, the FAIL of the run with differences says mismatch.
A screenshot of Airflow's Assets view after both runs is kept in .artifacts/airflow-assets.png.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from harness.data.seed import create_topic, producer, send
from harness.servers.airflow_server import AirflowClient, AirflowServer, airflow_standalone
from kafka_migration.lineage.naming import asset_uri, namespace
from tests.e2e.ui_harness import find_chromium
from tests.spark.test_migrate_job import FAULTY_COPIER
from tests.unit.lineage.schemas import validate_event

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / ".artifacts"
RUN_TIMEOUT = 600.0


def downstream_dag(dag_id: str, uri: str) -> str:
    """The example DAG of docs/lineage.md, scheduled on ``uri`` under ``dag_id``."""
    text = (REPO / "docs" / "lineage.md").read_text()
    (code,) = [c for c in re.findall(r"```python\n(.*?)```", text, re.S) if 'dag_id="orders_report"' in c]
    assert 'Asset("kafka://kafka-target:9092/orders")' in code
    return code.replace("kafka://kafka-target:9092/orders", uri).replace('"orders_report"', f'"{dag_id}"')


def _seed(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic, 2)
    p = producer(bootstrap)
    for i in range(80):
        send(p, topic, i % 2, f"k{i}".encode(), f"v{i}".encode())
    p.flush(10)


def _kafka_connection(bootstrap: str) -> str:
    return json.dumps({"conn_type": "kafka", "extra": {"bootstrap.servers": bootstrap}})


@pytest.fixture(scope="module")
def setup(clusters, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:  # type: ignore[no-untyped-def]
    unique = f"{int(time.time()) % 100000}"
    good, faulty = f"lineage{unique}", f"lineage{unique}faulty"
    for topic in (good, faulty):
        _seed(clusters.source, topic)
    home = tmp_path_factory.mktemp("airflow-lineage-home")
    dags = home / "dags"
    dags.mkdir()
    shutil.copy(REPO / "dags" / "kafka_migration_dag.py", dags)
    uris = {t: asset_uri(clusters.target, f"copy.{t}") for t in (good, faulty)}
    (dags / "after_good.py").write_text(downstream_dag("after_good", uris[good]))
    (dags / "after_faulty.py").write_text(downstream_dag("after_faulty", uris[faulty]))
    plugin = home / "faulty-copier"
    plugin.mkdir()
    (plugin / "sitecustomize.py").write_text(FAULTY_COPIER)  # topics named *faulty* lose a record in the copy
    events = home / "openlineage.jsonl"
    env = {
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps({"type": "file", "log_file_path": str(events), "append": True}),
        "AIRFLOW_CONN_KAFKA_SOURCE": json.dumps(
            {"conn_type": "kafka", "extra": {"bootstrap.servers": clusters.source}}
        ),
        "AIRFLOW_CONN_KAFKA_TARGET": json.dumps(
            {"conn_type": "kafka", "extra": {"bootstrap.servers": clusters.target}}
        ),
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
        "KAFKA_MIGRATION_STATE_DIR": str(home / "kafka-migration"),
        "AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": "180",
        "AIRFLOW__WORKERS__EXECUTION_API_RETRIES": "10",
        "PYTHONPATH": str(plugin),
    }
    with airflow_standalone(home, env, timeout=600) as server:
        api = server.client()
        for dag_id in ("kafka_migration", "after_good", "after_faulty"):
            api.wait_for_dag(dag_id, timeout=240)
            api.unpause(dag_id)
        yield {"server": server, "api": api, "good": good, "faulty": faulty, "uris": uris, "events": events,
               "reports": home / "kafka-migration" / "reports"}  # fmt: skip
        api.close()


def _migrate(api: AirflowClient, topic: str) -> dict[str, Any]:
    run = api.trigger("kafka_migration", {"include": topic, "rename": "copy.{topic}"})
    return api.wait_for_run("kafka_migration", run["dag_run_id"], timeout=RUN_TIMEOUT)


def _runs(api: AirflowClient, dag_id: str) -> list[dict[str, Any]]:
    return list(api.get_json(f"/api/v2/dags/{dag_id}/dagRuns").get("dag_runs", []))


def _ledger_run_id(dag_run_id: str) -> str:
    """kafka_migration.run.planner.safe_run_id's contract, written out."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"kafka_migration__{dag_run_id}").strip("_")


def test_a_verified_migration_starts_the_downstream_dag_and_one_with_differences_does_not(setup) -> None:  # type: ignore[no-untyped-def]
    api, server = setup["api"], setup["server"]
    first = _migrate(api, setup["good"])
    assert first["state"] == "success", api.describe_run("kafka_migration", first["dag_run_id"])
    deadline = time.monotonic() + 180
    while not (runs := _runs(api, "after_good")) and time.monotonic() < deadline:
        time.sleep(2)
    assert len(runs) == 1 and runs[0]["run_type"] == "asset_triggered", runs
    after = api.wait_for_run("after_good", runs[0]["dag_run_id"], timeout=RUN_TIMEOUT)
    assert after["state"] == "success", api.describe_run("after_good", after["dag_run_id"])
    upstream = api.get_json(
        f"/api/v2/dags/after_good/dagRuns/{quote(after['dag_run_id'], safe='')}/upstreamAssetEvents"
    )
    (event,) = upstream["asset_events"]
    report_path = setup["reports"] / _ledger_run_id(first["dag_run_id"]) / "report.json"
    data = report_path.read_bytes()
    assert event["uri"] == setup["uris"][setup["good"]]
    assert event["extra"]["run_id"] == _ledger_run_id(first["dag_run_id"])
    assert event["extra"]["report_sha256"] == "sha256:" + hashlib.sha256(data).hexdigest()
    assert event["extra"]["records_verified"] == 80

    second = _migrate(api, setup["faulty"])
    assert second["state"] == "failed"
    time.sleep(30)  # the scheduler looks for asset events every 0.25 s: ample time to start a run that should not
    assert _runs(api, "after_faulty") == []
    assert len(_runs(api, "after_good")) == 1
    uris = {e["uri"] for e in api.get_json("/api/v2/assets/events", params={"limit": 100})["asset_events"]}
    assert setup["uris"][setup["good"]] in uris and setup["uris"][setup["faulty"]] not in uris
    _screenshot_assets(server, setup["uris"][setup["good"]])  # both topics' assets: an event for the verified one

    _check_openlineage(setup, first["dag_run_id"], second["dag_run_id"], json.loads(data))


def _check_openlineage(setup: dict[str, Any], good_run: str, faulty_run: str, report: dict[str, Any]) -> None:
    """Every event valid; the summary's COMPLETE and FAIL carry the runs' datasets and evidence."""
    lines = setup["events"].read_text().splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    for event in events:
        validate_event(event)
    summaries = {
        (e["eventType"], e["run"]["facets"]["kafkaMigration"]["runId"]): e
        for e in events
        if e["job"]["name"] == "kafka_migration.summary" and "kafkaMigration" in e["run"].get("facets", {})
    }
    complete = summaries["COMPLETE", _ledger_run_id(good_run)]
    good, target = setup["good"], complete["outputs"][0]["namespace"]
    assert [(d["namespace"], d["name"]) for d in complete["outputs"]] == [(target, f"copy.{good}")]
    assert target == setup["uris"][good].rsplit("/", 1)[0] == namespace(target.removeprefix("kafka://"))
    assert [d["name"] for d in complete["inputs"]] == [good]
    facet = complete["run"]["facets"]["kafkaMigration"]
    assert facet["verdict"] == report["verdict"] == "VERIFIED"
    for ours, theirs in zip(facet["topics"][0]["partitions"], report["topics"][0]["partition_details"], strict=True):
        assert (ours["sourceRecords"], ours["sourceChecksum"]) == (theirs["source_records"], theirs["source_checksum"])
        assert (ours["targetRecords"], ours["targetChecksum"]) == (theirs["target_records"], theirs["target_checksum"])
    fail = summaries["FAIL", _ledger_run_id(faulty_run)]
    assert fail["run"]["facets"]["kafkaMigration"]["status"] == "mismatch"
    copies = [e for e in events if e["job"]["name"] == "kafka_migration.copy_verify" and e["eventType"] == "COMPLETE"]
    assert [d["name"] for e in copies for d in e["outputs"]] == [f"copy.{good}"]
    # One emitter per DAG run: the run's own job (kafka-migrate.run[...]) is the CLI's, never sent from here.
    assert not [e for e in events if e["job"]["name"].startswith("kafka-migrate.run")]


def _screenshot_assets(server: AirflowServer, uri: str) -> None:
    binary = find_chromium()
    if binary is None:
        return  # the console's browser tests say what is missing; the assets are checked above all the same
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=binary, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        page.set_default_timeout(180_000)
        page.goto(f"{server.base_url}/assets")
        page.get_by_label("Username").fill(server.username)
        page.get_by_label("Password").fill(server.password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url("**/assets")
        page.get_by_text(uri).first.wait_for()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "airflow-assets.png"), full_page=True)
        browser.close()
