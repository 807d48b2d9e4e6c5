"""The Airflow UI as a user meets it: a real Airflow 3, a DAG run triggered over REST, the plugin page in a browser.

One ``airflow standalone`` (scheduler, dag-processor, triggerer, api-server; LocalExecutor,
SQLite metadata DB) runs for the module in its own AIRFLOW_HOME, with the session's two Apache
Kafka clusters as the ``kafka_source`` / ``kafka_target`` connections. The test logs in with the
admin password Airflow generated, triggers ``kafka_migration`` through the REST API, waits
for the run, and then looks at what a person would look at: the plugin registration, the
"Kafka migrations" page, the sign-off report, the task's "Migration report" link, and the
page and report rendered by headless Chromium (screenshots kept in ``.artifacts/``).
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from confluent_kafka.admin import AdminClient

from harness.airflow_server import AirflowClient, AirflowServer, airflow_standalone
from harness.seed import create_topic, producer, send
from kafka_migration.kafka.clients import client_settings
from tests.conftest import missing
from tests.e2e.ui_harness import Chromium, find_chromium

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / ".artifacts"
DAG_ID = "kafka_migration"
RUN_TIMEOUT = 360.0  # seconds for the whole DAG run (two Spark applications on a 2-core machine)
# topic suffix -> (partitions, records)
TOPICS = {"orders": (3, 240), "payments": (2, 120), "audit": (1, 40)}


@dataclass(frozen=True)
class Migration:
    dag_run_id: str
    run_id: str  # the ledger's run id: kafka_migration__<dag run id made safe for file names>
    topics: tuple[str, ...]
    records: int


def ledger_run_id(dag_id: str, dag_run_id: str) -> str:
    """Written out here on purpose (not imported): kafka_migration.run.planner.safe_run_id's contract."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{dag_id}__{dag_run_id}").strip("_")


def _seed(bootstrap: str, prefix: str) -> tuple[tuple[str, ...], int]:
    names = []
    total = 0
    p = producer(bootstrap)
    for suffix, (partitions, count) in TOPICS.items():
        name = f"{prefix}.{suffix}"
        create_topic(bootstrap, name, partitions)
        for i in range(count):
            headers = [("source", b"ui-test"), ("seq", str(i).encode())] if suffix == "payments" else None
            send(p, name, i % partitions, f"{suffix}-{i}".encode(), f"value {i} of {name}".encode(), headers=headers)
        names.append(name)
        total += count
    p.flush(30)
    return tuple(names), total


@pytest.fixture(scope="module")
def airflow(clusters, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AirflowServer]:  # type: ignore[no-untyped-def]
    home = tmp_path_factory.mktemp("airflow-ui-home")
    env = {
        "AIRFLOW_CONN_KAFKA_SOURCE": json.dumps(
            {"conn_type": "kafka", "extra": {"bootstrap.servers": clusters.source}}
        ),
        "AIRFLOW_CONN_KAFKA_TARGET": json.dumps(
            {"conn_type": "kafka", "extra": {"bootstrap.servers": clusters.target}}
        ),
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
        # the tasks and the api-server's plugin must see the same ledger and reports
        "KAFKA_MIGRATION_STATE_DIR": str(home / "kafka-migration"),
    }
    with airflow_standalone(home, env) as server:
        yield server


@pytest.fixture(scope="module")
def api(airflow: AirflowServer) -> Iterator[AirflowClient]:
    client = airflow.client()
    yield client
    client.close()


@pytest.fixture(scope="module")
def migration(airflow: AirflowServer, api: AirflowClient, clusters) -> Migration:  # type: ignore[no-untyped-def]
    prefix = f"ui{uuid.uuid4().hex[:8]}"
    topics, records = _seed(clusters.source, prefix)
    api.wait_for_dag(DAG_ID)
    api.unpause(DAG_ID)
    run = api.trigger(DAG_ID, {"include": f"{re.escape(prefix)}\\..*", "rename": "{topic}"})
    dag_run_id = run["dag_run_id"]
    final = api.wait_for_run(DAG_ID, dag_run_id, timeout=RUN_TIMEOUT)
    if final["state"] != "success":
        pytest.fail(
            f"DAG run {dag_run_id} ended {final['state']}\n{api.describe_run(DAG_ID, dag_run_id)}\n"
            f"--- end of the Airflow output ({airflow.log_path}) ---\n{airflow.log_tail(40)}",
            pytrace=False,
        )
    return Migration(dag_run_id, ledger_run_id(DAG_ID, dag_run_id), topics, records)


@pytest.fixture(scope="module")
def chromium() -> Chromium:
    binary = find_chromium()
    if binary is None:
        message = (
            "headless Chromium is needed to look at the Airflow pages: install Debian's 'chromium' package "
            "(make system-deps, as root: apt-get install -y --no-install-recommends chromium)"
        )
        missing(message)
    return Chromium(binary)


def _row_of(page: str, run_id: str) -> str:
    rows = [row for row in re.findall(r"<tr>.*?</tr>", page, flags=re.S) if run_id in row]
    assert len(rows) == 1, f"expected one row for {run_id} on the page, found {len(rows)}:\n{page[-3000:]}"
    return rows[0]


# --------------------------------------------------------------------------- tests


def test_rest_api_needs_a_login(airflow: AirflowServer) -> None:
    anonymous = httpx.get(f"{airflow.base_url}/api/v2/dags", timeout=30)
    assert anonymous.status_code == 401, anonymous.text
    wrong = httpx.post(
        f"{airflow.base_url}/auth/token", json={"username": airflow.username, "password": "not-it"}, timeout=30
    )
    assert wrong.status_code == 401, wrong.text


def test_plugin_is_registered_with_page_view_and_link(api: AirflowClient) -> None:
    plugins = {p["name"]: p for p in api.get_json("/api/v2/plugins")["plugins"]}
    assert "kafka_migration" in plugins, f"plugins: {sorted(plugins)}"
    plugin = plugins["kafka_migration"]
    assert plugin["source"].endswith("kafka_migration_plugin.py")
    assert [(a["url_prefix"], a["name"]) for a in plugin["fastapi_apps"]] == [("/kafka-migrations", "Kafka migrations")]
    (view,) = plugin["external_views"]
    assert (view["name"], view["href"], view["destination"]) == ("Kafka migrations", "/kafka-migrations/", "nav")
    assert any("MigrationReportLink" in link for link in plugin["global_operator_extra_links"])
    assert api.get_json("/api/v2/plugins/importErrors")["total_entries"] == 0


def test_triggered_run_succeeds_task_by_task(migration: Migration, api: AirflowClient, clusters) -> None:  # type: ignore[no-untyped-def]
    tis = api.task_instances(DAG_ID, migration.dag_run_id)
    assert {(t["task_id"], t["state"]) for t in tis} == {
        (task, "success") for task in ("plan", "copy_verify", "list_topics", "topic_result", "summary")
    }
    # one result task per topic, labelled with the topic in the grid
    labels = sorted(t["rendered_map_index"] for t in tis if t["task_id"] == "topic_result")
    assert labels == sorted(migration.topics)
    target = AdminClient(client_settings({"bootstrap.servers": clusters.target})).list_topics(timeout=10).topics
    assert set(migration.topics) <= set(target)


def test_page_lists_the_run_verified_with_a_report_link(migration: Migration, api: AirflowClient) -> None:
    response = api.request("GET", "/kafka-migrations/")
    assert response.headers["content-type"].startswith("text/html")
    row = _row_of(response.text, migration.run_id)
    assert "<span class='pill ok'>VERIFIED</span>" in row, row
    assert f"href='{api.base_url}/kafka-migrations/runs/{migration.run_id}/report.html'" in row, row
    assert f"{migration.records:,}" in row, row  # records copied
    runs = {r["run_id"]: r for r in api.get_json("/kafka-migrations/api/runs")}
    assert runs[migration.run_id]["dag_run_id"] == migration.dag_run_id
    assert runs[migration.run_id]["status"] == "verified"


def test_report_served_over_http_matches_the_ledger(migration: Migration, api: AirflowClient) -> None:
    base = f"/kafka-migrations/runs/{migration.run_id}"
    page = api.request("GET", f"{base}/report.html")
    assert page.headers["content-type"].startswith("text/html")
    assert "VERIFIED" in page.text and "NOT VERIFIED" not in page.text
    for topic in migration.topics:
        assert topic in page.text, topic

    raw = api.request("GET", f"{base}/report.json").content
    report = json.loads(raw)
    assert report["verdict"] == "VERIFIED"
    assert report["run"]["run_id"] == migration.run_id and report["run"]["dag_run_id"] == migration.dag_run_id
    assert {t["source_topic"]: t["verdict"] for t in report["topics"]} == dict.fromkeys(migration.topics, "verified")
    assert report["totals"]["records_copied"] == report["totals"]["records_verified"] == migration.records
    # the digest the ledger recorded is the digest of the file a user downloads
    (run,) = [r for r in api.get_json("/kafka-migrations/api/runs") if r["run_id"] == migration.run_id]
    assert run["report_sha256"] == "sha256:" + hashlib.sha256(raw).hexdigest()

    assert "VERIFIED" in api.request("GET", f"{base}/report.md").text
    assert api.request("GET", f"{base}/report.exe", expect=(404,)).status_code == 404


def test_page_and_reports_need_a_login(migration: Migration, airflow: AirflowServer) -> None:
    for path in (
        "/kafka-migrations/",
        "/kafka-migrations/api/runs",
        f"/kafka-migrations/runs/{migration.run_id}/report.json",
    ):
        anonymous = httpx.get(f"{airflow.base_url}{path}", timeout=30)
        assert anonymous.status_code in (401, 403), (
            f"{path} served to an anonymous caller: HTTP {anonymous.status_code}"
        )


def test_task_report_link_leads_to_the_report(migration: Migration, api: AirflowClient) -> None:
    expected = f"/kafka-migrations/runs/{migration.run_id}"
    assert api.extra_links(DAG_ID, migration.dag_run_id, "summary") == {"Migration report": expected}
    assert api.extra_links(DAG_ID, migration.dag_run_id, "copy_verify", map_index=0)["Migration report"] == expected
    followed = api.request("GET", expected, follow_redirects=True)
    assert str(followed.url).endswith(f"{expected}/report.html")
    assert "VERIFIED" in followed.text


def test_browser_shows_the_page_and_the_report(chromium: Chromium, migration: Migration, api: AirflowClient) -> None:
    # logged in as the UI would be: Airflow's session cookie holds the same JWT
    with chromium.session(cookies={"_token": api.token or ""}, origin=api.base_url) as page:
        dom = page.open(f"{api.base_url}/kafka-migrations/")
        row = _row_of(dom, migration.run_id)
        assert "VERIFIED" in row and "NOT VERIFIED" not in row, row
        assert page.screenshot(ARTIFACTS / "kafka-migrations-page.png") == (1280, 1600)

        report_url = api.base_url + api.extra_links(DAG_ID, migration.dag_run_id, "summary")["Migration report"]
        report_dom = page.open(report_url)  # the link a user clicks: redirects to report.html
        assert "VERIFIED" in report_dom and "NOT VERIFIED" not in report_dom
        for topic in migration.topics:
            assert topic in report_dom, topic
        assert page.screenshot(ARTIFACTS / "report.png") == (1280, 1600)

    with chromium.session() as anonymous:  # without the cookie the page is refused
        assert migration.run_id not in anonymous.open(f"{api.base_url}/kafka-migrations/")


@pytest.mark.parametrize(
    "bad",
    [{"topics_per_job": 0}, {"rename": "no-placeholder"}, {"start": "yesterday"}, {"include": ""}],
    ids=["topics_per_job", "rename", "start", "include"],
)
def test_trigger_refuses_bad_params(migration: Migration, api: AirflowClient, bad: dict[str, object]) -> None:
    # The trigger form and the REST API validate against the same Param schemas; no run is created.
    before = len(api.get_json(f"/api/v2/dags/{DAG_ID}/dagRuns")["dag_runs"])
    response = api.request(
        "POST", f"/api/v2/dags/{DAG_ID}/dagRuns", json={"logical_date": None, "conf": bad}, expect=(400, 422)
    )
    assert response.status_code in (400, 422)
    assert len(api.get_json(f"/api/v2/dags/{DAG_ID}/dagRuns")["dag_runs"]) == before
