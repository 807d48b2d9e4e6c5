"""The console's JSON API on its own: FastAPI's TestClient on the plugin's app factory, a real ledger (SQLite file),
progress snapshots as the Spark driver writes them, and a stand-in for the clusters (the unit tier has no broker;
the browser tests read real ones)."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_module

require_module("airflow")
from fastapi import Depends, HTTPException, Request
from fastapi.testclient import TestClient

from kafka_migration.airflow.console.clusters import Clusters
from kafka_migration.airflow.webapp import create_app
from kafka_migration.groups.rules import GroupSync, GroupSyncResult, PartitionSync
from kafka_migration.ledger import Ledger
from tests.unit.ledger.test_ledger import outcomes, plan

RUN_1 = "kafka_migration__manual_1"
RUN_2 = "kafka_nightly_sync__scheduled_2"
RUN_3 = "kafka_migration__manual_3"


class Info:
    def __init__(self, cluster_id: str) -> None:
        self.cluster_id = cluster_id
        self.bootstrap = f"{cluster_id}:9092"


class FakeCluster:
    """What ``GroupCluster`` answers, for the overview: ``src-cluster`` has copy.orders' source topic ending at 130."""

    def __init__(self, conn_id: str, reachable: bool) -> None:
        self.conn_id = conn_id
        self.reachable = reachable

    def describe(self) -> Info:
        if not self.reachable:
            raise ConnectionError(f"{self.conn_id}: no broker answered within 3s")
        return Info({"kafka_source": "src-cluster", "kafka_target": "tgt-cluster"}[self.conn_id])

    def log_ends(self, names: list[str]) -> dict[tuple[str, int], tuple[int, int]]:
        return {(n, p): (130, 130) for n in names for p in (0, 1)}

    def log_starts(self, names: list[str]) -> dict[tuple[str, int], int]:
        return {(n, p): 0 for n in names for p in (0, 1)}  # the target holds every record: nothing lost


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    first = plan(RUN_1, 0, 100, 0)
    ledger.start_run(first, trigger="airflow", dag_id="kafka_migration", dag_run_id="manual_1")
    ledger.record_topic(first, first.topics[0], *outcomes(first, {0: True, 1: True}))
    ledger.finish_run(RUN_1, "verified", 200)
    second = plan(RUN_2, 100, 120, 100)
    ledger.start_run(second, trigger="airflow", dag_id="kafka_nightly_sync", dag_run_id="scheduled_2")
    ledger.record_topic(second, second.topics[0], *outcomes(second, {0: True, 1: False}))
    ledger.finish_run(RUN_2, "mismatch", 40)
    running = plan(RUN_3, 120, 130, 120)
    ledger.start_run(running, trigger="airflow", dag_id="kafka_migration", dag_run_id="manual_3")
    return ledger


def _client(tmp_path: Path, reachable: bool = True, **kw: Any) -> TestClient:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    clusters = Clusters(
        connections=lambda: ("kafka_source", "kafka_target"),
        opener=lambda conn_id, role, timeout: FakeCluster(conn_id, reachable),
    )
    app = create_app(
        lambda: url,
        lambda: tmp_path / "reports",
        state_dir=lambda: tmp_path / "state",
        clusters=clusters,
        bundle_dir=tmp_path / "dist",
        **kw,
    )
    return TestClient(app)


@pytest.fixture
def client(ledger: Ledger, tmp_path: Path) -> TestClient:
    return _client(tmp_path)


def test_runs_newest_first_with_verdicts_kinds_and_paging(client: TestClient) -> None:
    page = client.get("/api/runs").json()
    assert (page["total"], page["running"]) == (3, 1)
    assert [r["run_id"] for r in page["runs"]] == [RUN_3, RUN_2, RUN_1]
    by_id = {r["run_id"]: r for r in page["runs"]}
    assert (by_id[RUN_1]["verdict"], by_id[RUN_1]["kind"], by_id[RUN_1]["records"]) == ("VERIFIED", "migration", 200)
    assert (by_id[RUN_2]["verdict"], by_id[RUN_2]["kind"]) == ("NOT VERIFIED", "nightly sync")
    assert by_id[RUN_3]["verdict"] == "RUNNING" and by_id[RUN_3]["progress"]["phase"] == "planning or starting Spark"
    second = client.get("/api/runs", params={"limit": 2, "offset": 2}).json()
    assert (second["total"], [r["run_id"] for r in second["runs"]]) == (3, [RUN_1])


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"dag_id": "kafka_nightly_sync"}, [RUN_2]),
        ({"dag_id": "cli"}, []),
        ({"status": "verified"}, [RUN_1]),
        ({"source_cluster_id": "src-cluster", "target_cluster_id": "tgt-cluster"}, [RUN_3, RUN_2, RUN_1]),
        ({"target_cluster_id": "elsewhere"}, []),
        ({"topic": "copy.orders"}, [RUN_3, RUN_2, RUN_1]),
        ({"topic": "payments"}, []),
        ({"since": "2000-01-01T00:00:00Z"}, [RUN_3, RUN_2, RUN_1]),
        ({"until": "2000-01-01T00:00:00Z"}, []),
    ],
)
def test_runs_filters(client: TestClient, params: dict[str, str], expected: list[str]) -> None:
    page = client.get("/api/runs", params=params).json()
    assert [r["run_id"] for r in page["runs"]] == expected
    assert page["total"] == len(expected)


def test_a_bad_time_filter_is_one_clear_error(client: TestClient) -> None:
    response = client.get("/api/runs", params={"since": "yesterday"})
    assert response.status_code == 422
    assert "since='yesterday' is not a time" in response.json()["detail"]


def test_facets_offer_what_the_ledger_holds(client: TestClient) -> None:
    facets = client.get("/api/runs/facets").json()
    assert facets["dag_ids"] == ["kafka_migration", "kafka_nightly_sync"]
    assert facets["statuses"] == ["mismatch", "running", "verified"]
    assert facets["pairs"] == [["src-cluster", "tgt-cluster"]]


def test_run_detail_has_every_partition_its_checksums_and_first_difference(client: TestClient) -> None:
    detail = client.get(f"/api/runs/{RUN_2}").json()
    assert detail["run"]["run_id"] == RUN_2 and detail["progress"] is None
    bad = [s for s in detail["segments"] if s["status"] == "mismatch"]
    assert [(s["partition"], s["source_start"], s["source_end"]) for s in bad] == [(1, 100, 120)]
    assert bad[0]["target_checksum"] == "sha256:b" and bad[0]["first_difference"] == "value differs"
    assert client.get("/api/runs/nope").status_code == 404
    via_dag_run = client.get(
        "/api/runs/by-dag-run", params={"dag_id": "kafka_nightly_sync", "dag_run_id": "scheduled_2"}
    )
    assert via_dag_run.json()["run"]["run_id"] == RUN_2
    other = client.get("/api/runs/by-dag-run", params={"dag_id": "some_dag", "dag_run_id": "x"})
    assert other.status_code == 404 and "not one of kafka-migration's" in other.json()["detail"]


def _snapshot(tmp_path: Path, updated_ago: float = 1.0) -> dict[str, Any]:
    """RUN_3's progress as the Spark driver writes it: 14 of its 20 offsets copied, 6 verified."""
    directory = tmp_path / "state" / "runs" / RUN_3
    directory.mkdir(parents=True, exist_ok=True)
    now = time.time()
    snapshot = {
        "version": 1,
        "run_id": RUN_3,
        "step": "migrate",
        "started": now - 4,
        "updated": now - updated_ago,
        "finished": False,
        "steps": {
            "copy": {"total": 20, "partitions": [["orders", 0, 4, 400, 2.0], ["orders", 1, 10, 900, 2.0]], "done": {}},
            "verify": {"total": 20, "partitions": [["orders", 1, 6, 600, 1.0]], "done": {}},
        },
    }
    (directory / "copy-job0.progress").write_text(json.dumps(snapshot))
    return snapshot


def test_a_running_run_shows_live_progress_per_partition_from_the_driver_snapshot(
    client: TestClient, tmp_path: Path
) -> None:
    _snapshot(tmp_path)
    progress = client.get(f"/api/runs/{RUN_3}/progress").json()
    assert progress["phase"] == "copying and verifying" and not progress["stale"]
    rows = {p["partition"]: p for p in progress["partitions"]}
    assert (rows[0]["planned"], rows[0]["copy"]["done"], rows[0]["copy"]["rate"]) == (10, 4, 2.0)
    assert rows[0]["copy"]["eta_seconds"] == 3.0  # 6 records left at 2 a second
    assert rows[1]["copy"] == {"done": 10, "rate": 5.0, "eta_seconds": 0.0, "finished": True}
    assert rows[1]["verify"]["done"] == 6
    assert progress["totals"]["copy"]["done"] == 14 and progress["totals"]["copy"]["planned"] == 20
    (listed,) = client.get("/api/runs", params={"status": "running"}).json()["runs"]
    assert (listed["progress"]["copied"], listed["progress"]["verified"], listed["progress"]["planned"]) == (14, 6, 20)
    _snapshot(tmp_path, updated_ago=120)
    assert client.get(f"/api/runs/{RUN_3}").json()["progress"]["stale"] is True


def test_a_running_run_counts_the_records_copied_so_far(client: TestClient, tmp_path: Path) -> None:
    """The ledger records a run's copied records when it ends (0 until then): while it runs, the run's header and
    the runs list count what its live progress counts, not the ledger's 0."""
    assert client.get(f"/api/runs/{RUN_3}").json()["run"]["records"] == 0  # planning: nothing copied yet
    _snapshot(tmp_path)
    detail = client.get(f"/api/runs/{RUN_3}").json()
    assert detail["run"]["records"] == detail["progress"]["totals"]["copy"]["done"] == 14
    (listed,) = client.get("/api/runs", params={"status": "running"}).json()["runs"]
    assert listed["records"] == listed["progress"]["copied"] == 14
    by_dag_run = client.get("/api/runs/by-dag-run", params={"dag_id": "kafka_migration", "dag_run_id": "manual_3"})
    assert by_dag_run.json()["run"]["records"] == 14
    assert client.get(f"/api/runs/{RUN_1}").json()["run"]["records"] == 200  # ended: the ledger's count


def test_overview_sums_checkpoints_against_the_source_end_now(client: TestClient) -> None:
    (pair,) = client.get("/api/overview").json()["pairs"]
    assert (pair["source_cluster_id"], pair["target_cluster_id"], pair["source_reachable"]) == (
        "src-cluster",
        "tgt-cluster",
        True,
    )
    (topic,) = pair["topics"]
    # partition 0 verified up to 120 (run 2), partition 1 up to 100 (run 2 did not verify it); the source ends at 130
    assert (topic["source_topic"], topic["migrated"], topic["source_end"], topic["lag"]) == ("orders", 220, 260, 40)
    assert topic["last_run_id"] == RUN_2 and topic["age_seconds"] >= 0
    assert pair["lag"] == 40
    assert (pair["lost"], pair["lost_error"], topic["lost"]) == (0, None, 0)  # checked: the target starts at 0


def test_not_migrated_yet_run_after_run_is_what_each_run_found_and_left(ledger: Ledger, client: TestClient) -> None:
    """Per pair, each run (dry runs aside), oldest first: at its start, the records past the checkpoints up to the
    source's end as it found them (its planned ranges); after it, those it did not verify."""
    ledger.start_run(replace(plan("a-dry-run", 130, 150, 130), options={"dry_run": True}), trigger="cli")
    (pair,) = client.get("/api/lag-history").json()["pairs"]
    assert (pair["source_cluster_id"], pair["target_cluster_id"]) == ("src-cluster", "tgt-cluster")
    points = [(r["run_id"], r["kind"], r["at_start"], r["after"]) for r in pair["runs"]]
    assert points == [
        (RUN_1, "migration", 200, 0),  # offsets 0-99 of both partitions, both verified
        (RUN_2, "nightly sync", 40, 20),  # 100-119 of both; partition 1's did not verify: still not migrated
        (RUN_3, "migration", 20, None),  # 120-129 of both, running
    ]
    assert pair["runs"][0]["started_at"] <= pair["runs"][0]["ended_at"] <= pair["runs"][1]["started_at"]
    newest = client.get("/api/lag-history", params={"limit": 2}).json()
    assert newest["limit"] == 2 and [r["run_id"] for r in newest["pairs"][0]["runs"]] == [RUN_2, RUN_3]


def test_overview_renders_when_the_source_is_unreachable_and_says_so(ledger: Ledger, tmp_path: Path) -> None:
    (pair,) = _client(tmp_path, reachable=False).get("/api/overview").json()["pairs"]
    assert (
        pair["source_reachable"] is False and "No Kafka connection reaches cluster src-cluster" in pair["source_error"]
    )
    assert "no broker answered" in pair["source_error"]
    (topic,) = pair["topics"]
    assert (topic["migrated"], topic["source_end"], topic["lag"]) == (220, None, None)
    assert pair["lost"] is None and "No Kafka connection reaches cluster" in pair["lost_error"]  # not checked


def test_group_syncs_list_every_partition_with_lag_and_proof(ledger: Ledger, client: TestClient) -> None:
    parts = tuple(
        PartitionSync(
            "app", "orders", p, 10, None, 25, "copy.orders", 9, None, "within", RUN_1, "write", o, None, proof
        )
        for p, (o, proof) in enumerate([("synced", "same_record"), ("not_proven", "different")])
    )
    ledger.record_group_sync(
        GroupSyncResult(
            "sync-1",
            RUN_1,
            "src-cluster",
            "tgt-cluster",
            False,
            False,
            (GroupSync("app", "EMPTY", False, "NONE", False, parts),),
        )
    )
    page = client.get("/api/group-syncs").json()
    (sync,) = page["syncs"]
    assert (page["total"], sync["sync_id"], sync["groups"], sync["partitions"], sync["not_ok"]) == (
        1,
        "sync-1",
        1,
        2,
        1,
    )
    rows = {r["partition"]: r for r in sync["rows"]}
    assert (rows[0]["source_offset"], rows[0]["target_offset"], rows[0]["lag"], rows[0]["proof"]) == (
        10,
        9,
        15,
        "same_record",
    )
    assert rows[1]["outcome"] == "not_proven"
    assert client.get(f"/api/runs/{RUN_1}").json()["group_syncs"] == ["sync-1"]
    assert client.get("/api/group-syncs", params={"group_id": "other"}).json()["total"] == 0


def test_cutovers_carry_their_checklist_and_whether_they_can_be_failed_back(ledger: Ledger, client: TestClient) -> None:
    values = {
        "trigger": "airflow",
        "dag_id": "kafka_cutover",
        "dag_run_id": "manual_9",
        "params": {"quiet_seconds": 5},
        "source_cluster_id": "src-cluster",
        "source_bootstrap": "s:9092",
        "target_cluster_id": "tgt-cluster",
        "target_bootstrap": "t:9092",
    }
    ledger.start_cutover("done-cutover", values)
    ledger.update_cutover(
        "done-cutover",
        finished=True,
        status="completed",
        run_id=RUN_1,
        groups=["app"],
        topics=[
            {
                "source_topic": "orders",
                "target_topic": "copy.orders",
                "partitions": [{"partition": 0, "source_end": 100, "target_end": 100}],
            }
        ],
    )
    ledger.start_cutover("refused-cutover", values)
    ledger.update_cutover("refused-cutover", finished=True, status="refused", message="orders is still written to")
    page = client.get("/api/cutovers").json()
    by_id = {c["cutover_id"]: c for c in page["cutovers"]}
    assert by_id["done-cutover"]["can_fail_back"] is True and by_id["refused-cutover"]["can_fail_back"] is False
    steps = {i["step"]: i for i in by_id["done-cutover"]["checklist"]}
    assert steps["Final incremental run verified up to the source end"]["done"] is True
    assert steps["Producers stopped on the source"]["done"] is True
    assert by_id["refused-cutover"]["message"] == "orders is still written to"
    assert client.get(f"/api/runs/{RUN_1}").json()["run"]["cutover_id"] == "done-cutover"


def test_clusters_are_named_by_the_operator_or_by_the_connection_at_their_addresses(
    ledger: Ledger, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger names clusters by their ids (KRaft's are random); a person reads the name the operator gave one in
    cluster_names, else the id of the Airflow connection whose bootstrap addresses the ledger recorded for it."""
    kafka = {"conn_type": "kafka"}
    source = {**kafka, "extra": {"bootstrap.servers": "other:9092, S:9092"}}  # shares s:9092 (any case, any order)
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA_SOURCE", json.dumps(source))
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA_TARGET", json.dumps({**kafka, "extra": {"bootstrap.servers": "t:9092"}}))
    monkeypatch.setenv("KAFKA_MIGRATION_CLUSTER_NAMES", "tgt-cluster = DR site, no-equals-sign")
    ledger.start_cutover(
        "elsewhere-cutover",
        {
            "trigger": "cli",
            "params": {},
            "source_cluster_id": "elsewhere",
            "source_bootstrap": "SASL_SSL://e:9093",
            "target_cluster_id": "tgt-cluster",
            "target_bootstrap": "t:9092",
        },
    )
    answer = client.get("/api/clusters").json()
    by_id = {c["cluster_id"]: c for c in answer["clusters"]}
    assert by_id["src-cluster"] == {
        "cluster_id": "src-cluster",
        "name": "kafka_source",
        "named_by": "connection",
        "connections": ["kafka_source"],
        "bootstraps": ["s:9092"],
    }
    assert (by_id["tgt-cluster"]["name"], by_id["tgt-cluster"]["named_by"]) == ("DR site", "setting")
    assert by_id["tgt-cluster"]["connections"] == ["kafka_target"]
    assert by_id["elsewhere"]["name"] is None and by_id["elsewhere"]["connections"] == []
    (problem,) = answer["problems"]
    assert "'no-equals-sign' is not CLUSTER_ID=name" in problem
    monkeypatch.delenv("AIRFLOW_CONN_KAFKA_SOURCE")  # a connection that is gone names nothing
    again = {c["cluster_id"]: c["name"] for c in client.get("/api/clusters").json()["clusters"]}
    assert again == {"elsewhere": None, "src-cluster": None, "tgt-cluster": "DR site"}


def test_preflight_answers_a_bad_pattern_with_one_clear_line(client: TestClient) -> None:
    response = client.get("/api/cutover-preflight", params={"include": "(", "quiet_seconds": 0})
    assert response.status_code == 422
    assert "include" in response.json()["detail"].lower()
    assert client.get("/api/cutover-preflight", params={"quiet_seconds": 31}).status_code == 422


def test_reports_are_served_and_the_old_page_leads_to_the_console(client: TestClient) -> None:
    redirect = client.get("/", follow_redirects=False)
    assert redirect.status_code == 307 and redirect.headers["location"] == "../plugin/kafka-migrations"
    report = client.get(f"/runs/{RUN_2}/report.html")
    assert report.status_code == 200 and "NOT VERIFIED" in report.text
    assert client.get(f"/runs/{RUN_2}", follow_redirects=False).headers["location"].endswith("/report.html")
    assert client.get(f"/runs/{RUN_3}/report.html").status_code == 404  # still running: its report comes at the end
    assert client.get("/runs/nope/report.html").status_code == 404


def test_the_bundle_is_served_and_a_missing_build_says_how_to_make_it(ledger: Ledger, tmp_path: Path) -> None:
    client = _client(tmp_path)
    missing = client.get("/static/console.umd.cjs")
    assert missing.status_code == 404 and "make console" in missing.json()["detail"]
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "console.umd.cjs").write_text("/* bundle */")
    served = client.get("/static/console.umd.cjs")
    assert served.status_code == 200 and served.headers["content-type"].startswith("text/javascript")
    assert client.get("/static/..%2Fledger.db").status_code == 404


def test_openapi_documents_every_endpoint(client: TestClient) -> None:
    paths = set(client.get("/openapi.json").json()["paths"])
    assert {
        "/api/overview",
        "/api/runs",
        "/api/runs/facets",
        "/api/runs/by-dag-run",
        "/api/runs/{run_id}",
        "/api/runs/{run_id}/progress",
        "/api/group-syncs",
        "/api/cutovers",
        "/api/cutover-preflight",
        "/api/clusters",
        "/api/lag-history",
        "/runs/{run_id}/report.{fmt}",
        "/cutovers/{cutover_id}/report.{fmt}",
    } <= paths


def _login_required(request: Request) -> None:
    """Stands in for Airflow's access check (which needs Airflow's API server; the browser tests use the real one)."""
    if request.headers.get("authorization") != "Bearer good":
        raise HTTPException(401, "Not authenticated")


def test_every_route_refuses_an_unauthenticated_caller(ledger: Ledger, tmp_path: Path) -> None:
    client = _client(tmp_path, dependencies=[Depends(_login_required)])
    routes = [r.path for r in client.app.routes if hasattr(r, "methods")]  # type: ignore[attr-defined]
    assert "/api/runs" in routes and "/static/{name}" in routes and "/openapi.json" in routes
    for path in routes:
        url = path.format(run_id=RUN_1, cutover_id="c", sync_id="s", fmt="html", name="console.umd.cjs")
        assert client.get(url).status_code == 401, path
    assert client.get("/api/runs", headers={"Authorization": "Bearer good"}).status_code == 200


RUN_SCHEMAS = "kafka_migration__manual_schemas"


def test_a_runs_schemas_are_its_reports_and_a_run_without_any_answers_as_before(
    client: TestClient, ledger: Ledger
) -> None:
    """``/runs/{id}/schemas``: the subject versions, the id map and the keys and values translated per partition,
    as the report's Schemas section holds them; the answers about runs that moved none keep their keys."""
    import dataclasses

    from kafka_migration.reports.schemas import schemas_section
    from tests.unit.ledger.test_ledger_schema_ids import RUN

    translated = plan(RUN_SCHEMAS, 0, 50, 0)
    topic = dataclasses.replace(translated.topics[0], schema_ids=RUN.id_map.to_dict())
    translated = dataclasses.replace(translated, topics=(topic,), schemas=RUN.to_dict())
    ledger.start_run(translated, trigger="cli")
    copy, verify = outcomes(translated, {0: True, 1: True})
    for p in verify.partitions:
        counts = {"translated": 20 + p["partition"], "unchanged": 0, "without_header": 5}
        p["schema_counts"] = {"topic": "orders", "partition": p["partition"], "keys": counts, "values": counts}
    ledger.record_topic(translated, topic, copy, verify)
    ledger.finish_run(RUN_SCHEMAS, "verified", 50)

    answer = client.get(f"/api/runs/{RUN_SCHEMAS}/schemas")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    expected = schemas_section(translated.to_dict(), ledger.run_segments(RUN_SCHEMAS))
    assert body == {"run_id": RUN_SCHEMAS, **expected}  # type: ignore[dict-item]
    assert [v["target_subject"] for v in body["versions"]] == ["shop.Address", "dst.orders-value"]
    assert body["id_map"] == [
        {"source": 4, "target": 1, "format": "AVRO"},
        {"source": 9, "target": 2_000_000_000, "format": "AVRO"},
    ]
    assert [(p["partition"], p["values"]["translated"]) for p in body["partitions"]] == [(0, 20), (1, 21)]
    assert body["totals"]["keys"] == {"translated": 41, "unchanged": 0, "without_header": 10}

    plain = client.get(f"/api/runs/{RUN_1}")
    assert set(plain.json()) == {"run", "options", "warnings", "segments", "progress", "group_syncs"}
    assert "schema" not in plain.text
    none = client.get(f"/api/runs/{RUN_1}/schemas")
    assert none.status_code == 404 and "moved no schemas" in none.json()["detail"]
    assert client.get("/api/runs/no-such-run/schemas").status_code == 404
