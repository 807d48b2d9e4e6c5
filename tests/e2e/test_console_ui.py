"""The operator's console in a real browser: Debian's Chromium (driven by Playwright) against a real Airflow
(``airflow standalone``), real Spark runs and a real ledger, doing what a person does.

One Airflow and one fresh pair of clusters for the module (the DAGs' defaults copy every topic of the source,
so the source holds only what this module seeds). In order: anonymous callers are refused; a person signs in
with the login form; triggers kafka_migration from Airflow's own trigger form with its defaults (the Trigger
button must be enabled: issue 25's blocker) and watches the run's live progress in the console; reads the run
(partitions, checksums, timings), follows its links (DAG run, logs, report) and the "Migration" tab of the DAG
run page; sees the overview's lag grow and a kafka_nightly_sync (triggered from its form, defaults) close it;
filters and pages the runs; checks the cutover pre-flight, triggers kafka_cutover (defaults), reads its
checklist and the consumer group sync, and fails it back through the console's link, the cutover id filled in.
Screenshots of each view are kept in .artifacts/ (named in docs/console.md).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.data.group_clients import commit
from harness.data.seed import create_topic, producer, send
from harness.data.topics import delete_records
from harness.kafka.node import start_cluster
from harness.kafka.proxied import ProxiedCluster, proxied_cluster
from harness.servers.airflow_server import AirflowClient, AirflowServer, airflow_standalone
from harness.servers.postgres import database_url
from tests.conftest import missing, postgres_databases
from tests.e2e.ui_harness import find_chromium

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / ".artifacts"
RUN_TIMEOUT = 480.0  # seconds for one DAG run on a loaded 2-core machine
UI_TIMEOUT = 180_000  # milliseconds for a page or an element (the API server stalls at times, see below)
WIDTH = 1280  # pixels: the console's pages (and their screenshots) at a laptop's width
# topic -> (partitions, records per partition): "events" is big enough for its copy to be watched while it runs
TOPICS = {"orders": (3, 100), "events": (2, 60_000)}
GROUP = "billing"


def ledger_run_id(dag_id: str, dag_run_id: str) -> str:
    """Written out here on purpose (not imported): kafka_migration.run.planner.safe_run_id's contract."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{dag_id}__{dag_run_id}").strip("_")


def _seed(bootstrap: str, topic: str, partitions: int, records: int, start: int = 0) -> None:
    # Batches of 16 KB: a fetch returns whole batches, so only small ones make SLOW_FETCHES small.
    p = producer(bootstrap, **{"batch.size": 16384, "linger.ms": 5})
    for i in range(start, start + records * partitions):
        send(p, topic, i % partitions, f"{topic}-{i}".encode(), f"value {i} of {topic}".encode())
    p.flush(60)


# The source's connection fetches 16 KB at a time: while the proxy in front of the source answers 50 ms late
# (only while the first run is watched), the copy of "events" takes long enough for a person to see it move.
SLOW_FETCHES = {"fetch.max.bytes": 16384, "max.partition.fetch.bytes": 16384, "message.max.bytes": 16384}


@pytest.fixture(scope="module")
def source_proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ProxiedCluster, str]]:
    """A pair of clusters of its own (kafka_migration's default include ('.*') copies all of the source), the
    source behind a loopback proxy whose latency a test can raise."""
    directory = tmp_path_factory.mktemp("kafka")
    with ExitStack() as stack:
        source = stack.enter_context(proxied_cluster("console-source", directory))
        target = start_cluster("console-target", directory)
        stack.callback(target.stop)
        for topic, (partitions, records) in TOPICS.items():
            create_topic(source.bootstrap, topic, partitions)
            _seed(source.bootstrap, topic, partitions, records)
        commit(source.bootstrap, GROUP, {("orders", 0): 40, ("orders", 1): 30, ("orders", 2): 20})
        yield source, target.bootstrap


@pytest.fixture(scope="module")
def source_target(source_proxied: tuple[ProxiedCluster, str]) -> tuple[str, str]:
    return source_proxied[0].bootstrap, source_proxied[1]


@pytest.fixture(scope="module")
def airflow(source_target: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[AirflowServer]:
    source, target = source_target
    home = tmp_path_factory.mktemp("airflow-console-home")
    env = {
        "AIRFLOW_CONN_KAFKA_SOURCE": json.dumps(
            {"conn_type": "kafka", "extra": {"bootstrap.servers": source, **SLOW_FETCHES}}
        ),
        "AIRFLOW_CONN_KAFKA_TARGET": json.dumps({"conn_type": "kafka", "extra": {"bootstrap.servers": target}}),
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
        # the tasks and the api-server's plugin must see the same ledger, run files and reports
        "KAFKA_MIGRATION_STATE_DIR": str(home / "kafka-migration"),
        # A loaded 2-core machine can hold the API server for many seconds while a task starts: wait longer
        # than Airflow's defaults before a task's call to it counts as failed.
        "AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": "180",
        "AIRFLOW__WORKERS__EXECUTION_API_RETRIES": "10",
        # Runs only when a person triggers one: unpaused, kafka_nightly_sync would otherwise start its latest
        # @daily interval at once (after midnight it did, and copied everything before kafka_migration ran).
        "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",
    }
    # Metadata on PostgreSQL, as docker-compose.yaml runs it: on SQLite every writer waits for the UI's readers.
    with postgres_databases("km_console_airflow") as (name,):
        url = database_url(name, like="postgresql+psycopg://postgres@localhost/postgres")
        env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = url
        env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"] = url
        with airflow_standalone(home, env, timeout=600) as server:
            yield server


@pytest.fixture(scope="module")
def api(airflow: AirflowServer) -> Iterator[AirflowClient]:
    client = airflow.client()
    client.http.timeout = httpx.Timeout(180.0)  # the API server stalls at times (see the airflow fixture)
    for dag_id in ("kafka_migration", "kafka_nightly_sync", "kafka_cutover", "kafka_failback"):
        client.wait_for_dag(dag_id, timeout=240)
        client.unpause(dag_id)  # paused at creation (the nightly sync must not start by itself)
    yield client
    client.close()


@pytest.fixture(scope="module")
def page(airflow: AirflowServer, api: AirflowClient) -> Iterator[Any]:
    """A signed-in browser page: the person opens the console, is sent to the login form and signs in."""
    binary = find_chromium()
    if binary is None:
        missing("Debian's chromium is needed for the console's browser tests: make system-deps (as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=binary,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        context = browser.new_context(viewport={"width": WIDTH, "height": 1000})
        context.set_default_timeout(UI_TIMEOUT)
        tab = context.new_page()
        tab.goto(f"{airflow.base_url}/plugin/kafka-migrations")
        tab.get_by_label("Username").fill(airflow.username)
        tab.get_by_label("Password").fill(airflow.password)
        tab.get_by_role("button", name="Sign in").click()
        tab.wait_for_url("**/plugin/kafka-migrations")
        yield tab
        browser.close()


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def console(page: Any, airflow: AirflowServer, path: str = "") -> None:
    """Open the console at ``path`` by its address (a full load of the Airflow UI)."""
    page.goto(f"{airflow.base_url}/plugin/kafka-migrations{path}")
    mounted(page)


def mounted(page: Any) -> None:
    try:
        page.get_by_test_id("kafka-console").wait_for()
    except Exception:
        shot(page, "failed-console-mount.png")
        raise


def view(page: Any, airflow: AirflowServer, tab: str) -> None:
    """Go to one of the console's views by clicking its tab, as a person does once the console is open."""
    if "/plugin/kafka-migrations" not in page.url or page.get_by_test_id("kafka-console").count() == 0:
        console(page, airflow)
    page.get_by_role("navigation", name="Console views").get_by_role("link", name=tab, exact=True).click()
    mounted(page)


def open_run(page: Any, airflow: AirflowServer, run_id: str) -> None:
    view(page, airflow, "Runs")
    page.locator(f'tr[data-run-id="{run_id}"]').get_by_role("link", name=run_id).click()
    page.get_by_test_id("run-view").wait_for()


def trigger_from_form(page: Any, airflow: AirflowServer, dag_id: str) -> str:
    """Open the DAG in Airflow, open its trigger form, leave every field at its default, click Trigger; then go
    to the console's runs to watch it (off the DAG page: its polling of a SQLite metadata DB stalled the API
    server while the first task started)."""
    page.goto(f"{airflow.base_url}/dags/{dag_id}")
    page.get_by_test_id("trigger-dag-button").click()
    dialog = page.get_by_role("dialog")
    submit = dialog.get_by_role("button", name="Trigger", exact=True)
    submit.wait_for()
    shot(page, f"airflow-trigger-form-{dag_id}.png")
    assert submit.is_enabled(), f"{dag_id}: the Trigger button is disabled while the form holds its defaults"
    with page.expect_response(
        lambda r: r.request.method == "POST" and r.url.endswith(f"/dags/{dag_id}/dagRuns")
    ) as posted:
        submit.click()
    response = posted.value
    assert response.ok, f"Airflow refused the trigger of {dag_id}: {response.status} {response.text()}"
    dag_run_id = str(response.json()["dag_run_id"])
    console(page, airflow, "/runs")
    return dag_run_id


def wait_success(airflow: AirflowServer, api: AirflowClient, dag_id: str, dag_run_id: str) -> None:
    final = api.wait_for_run(dag_id, dag_run_id, timeout=RUN_TIMEOUT)
    if final["state"] != "success":
        pytest.fail(
            f"DAG run {dag_run_id} of {dag_id} ended {final['state']}\n{api.describe_run(dag_id, dag_run_id)}\n"
            f"--- end of the Airflow output ({airflow.log_path}) ---\n{airflow.log_tail(40)}",
            pytrace=False,
        )


def table_rows(page: Any, label: str) -> list[list[str]]:
    rows = page.locator(f'table[aria-label="{label}"] tbody tr')
    return [[c.strip() for c in row.locator("td").all_inner_texts()] for row in rows.all()]


def number(text: str) -> int:
    return int(text.replace(",", ""))


def last_column_cut(table: Any, may_scroll: bool = False) -> str | None:
    """Whether a person reads the table's last column at this width (None: yes; else what was measured): it fits
    its frame, the frame inside the page; or, ``may_scroll``, the frame scrolls sideways to it. Nothing outside the
    frame may have to scroll, and scrolling is not enough for a table that must fit: the screenshots, like a Mac's
    overlay scrollbars, show no scrollbar, only a table cut at the frame's edge."""
    measure = """(table, scroll) => {
        const frame = table.parentElement;
        frame.scrollLeft = scroll ? frame.scrollWidth : 0;
        const column = table.querySelector("thead th:last-child");
        let from = 0, to = innerWidth;  // what the window shows, narrowed by each ancestor that clips
        for (let el = frame.parentElement; el; el = el.parentElement) {
            if (getComputedStyle(el).overflowX === "visible") continue;
            const box = el.getBoundingClientRect();
            [from, to] = [Math.max(from, box.left), Math.min(to, box.right)];
        }
        const [f, c] = [frame.getBoundingClientRect(), column.getBoundingClientRect()];
        frame.scrollLeft = 0;
        return {
            column: column.innerText.trim(), column_from: c.left, column_to: c.right, frame_from: f.left,
            frame_to: f.right, shown_from: from, shown_to: to, table_width: frame.scrollWidth,
        };
    }"""
    seen = table.evaluate(measure, False)
    if may_scroll and seen["column_to"] > seen["frame_to"]:
        seen = {**table.evaluate(measure, True), "scrolled": True}
    left, right = seen["shown_from"] - 1, seen["shown_to"] + 1  # a pixel of rounding
    frame_shown = left <= seen["frame_from"] and seen["frame_to"] <= right
    column_shown = max(left, seen["frame_from"] - 1) <= seen["column_from"] and seen["column_to"] <= min(
        right, seen["frame_to"] + 1
    )
    return None if frame_shown and column_shown else f"at {WIDTH} px the table's last column is cut: {seen}"


# --------------------------------------------------------------------------- tests


def test_anonymous_callers_are_refused(airflow: AirflowServer, api: AirflowClient) -> None:
    for path in (
        "/api/v2/dags",
        "/kafka-migrations/api/runs",
        "/kafka-migrations/api/overview",
        "/kafka-migrations/openapi.json",
        "/kafka-migrations/static/console.umd.cjs",
        "/kafka-migrations/runs/x/report.json",
    ):
        anonymous = httpx.get(f"{airflow.base_url}{path}", timeout=30)
        assert anonymous.status_code in (401, 403), f"{path} served to an anonymous caller: {anonymous.status_code}"
    assert api.request("GET", "/kafka-migrations/static/console.umd.cjs").text.startswith("(function(")


def test_plugin_registers_the_console_in_the_nav_and_on_dag_run_pages(api: AirflowClient) -> None:
    plugins = {p["name"]: p for p in api.get_json("/api/v2/plugins")["plugins"]}
    plugin = plugins["kafka_migration"]
    apps = {a["destination"]: a for a in plugin["react_apps"]}
    assert (apps["nav"]["name"], apps["nav"]["url_route"]) == ("Kafka migrations", "kafka-migrations")
    assert apps["dag_run"]["url_route"] == "kafka-migration-run"
    assert apps["nav"]["bundle_url"] == "/kafka-migrations/static/console.umd.cjs"
    assert apps["dag_run"]["bundle_url"] == "/kafka-migrations/static/console.umd.cjs?app=dag-run"
    assert [(a["url_prefix"], a["name"]) for a in plugin["fastapi_apps"]] == [("/kafka-migrations", "Kafka migrations")]
    assert any("MigrationReportLink" in link for link in plugin["global_operator_extra_links"])
    assert api.get_json("/api/v2/plugins/importErrors")["total_entries"] == 0


def test_the_console_opens_from_the_navigation_before_any_run(page: Any, airflow: AirflowServer) -> None:
    page.goto(f"{airflow.base_url}/")
    page.get_by_role("button", name="Browse").click()
    page.get_by_role("menuitem", name="Kafka migrations").click()
    page.get_by_test_id("kafka-console").wait_for()
    page.get_by_text("No migration runs yet").wait_for()
    assert "/plugin/kafka-migrations" in page.url


@pytest.fixture(scope="module")
def migration(
    page: Any, airflow: AirflowServer, api: AirflowClient, source_proxied: tuple[ProxiedCluster, str]
) -> Iterator[dict[str, str]]:
    """The first kafka_migration run, triggered from its form with the defaults, on a slow source until it ends
    (so that a person can watch it); later tests read it."""
    proxy = source_proxied[0].proxy
    proxy.set_latency(0.05)
    try:
        dag_run_id = trigger_from_form(page, airflow, "kafka_migration")
        run = {"dag_run_id": dag_run_id, "run_id": ledger_run_id("kafka_migration", dag_run_id)}
        yield run
    finally:
        proxy.set_latency(0)


def test_trigger_kafka_migration_with_defaults_and_watch_its_live_progress(
    page: Any,
    airflow: AirflowServer,
    api: AirflowClient,
    migration: dict[str, str],
    source_proxied: tuple[ProxiedCluster, str],
) -> None:
    run_id = migration["run_id"]
    view(page, airflow, "Runs")
    row = page.locator(f'tr[data-run-id="{run_id}"]')
    progress = row.get_by_test_id("run-progress")
    progress.wait_for(timeout=RUN_TIMEOUT * 1000)  # after the plan, once the Spark driver writes its snapshot
    listed = [c.strip() for c in row.locator("td").all_inner_texts()]  # the row as read at one moment
    assert "RUNNING" in listed[4]
    copied = number(re.search(r"([\d,]+) of", listed[4]).group(1))  # type: ignore[union-attr]
    runs_cut = last_column_cut(page.locator('table[aria-label="Runs"]'))
    shot(page, "console-runs-running.png")

    row.get_by_role("link", name=run_id).click()
    page.get_by_test_id("run-view").wait_for()
    seen: list[tuple[int, int]] = []
    headers: list[str] = []  # what the run's header said while a partition was part-way through its copy
    rates: list[int] = []  # the copy rates the rate chart's table lists, records/s between snapshots
    lines = 0  # the lines the rate chart draws
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline:
        if page.locator('table[aria-label="Live progress"]').count() == 0:
            break  # the run ended: the live table gives way to the verdicts
        part_way = False
        for cells in table_rows(page, "Live progress"):
            done, planned = (number(x) for x in re.findall(r"[\d,]+", cells[3])[:2])
            if cells[0] == "events" and 0 < done < planned:
                seen.append((done, planned))
                part_way = True
        if part_way:
            headers.append(page.get_by_test_id("run-summary").inner_text())
        rows = page.locator('table[aria-label="Copy and verify rates"] tbody tr').all()
        rates = [int(r.get_attribute("data-copy-rate") or 0) for r in rows]
        if len(seen) >= 2 and sum(1 for r in rates if r > 0) >= 2:
            lines = page.get_by_test_id("rates").locator(".recharts-line-curve").count()  # copied and verified
            shot(page, "console-run-live.png")
            break
        page.wait_for_timeout(500)
    assert seen, (
        f"the run page never showed a partition part-way through its copy (the runs list had {copied} copied); "
        "the driver's progress snapshot did not reach the console"
    )
    assert all(planned == TOPICS["events"][1] for _, planned in seen)
    # the copy's rate over the run's life, drawn while it runs, each point listed beside the chart
    assert sum(1 for r in rates if r > 0) >= 2 and lines == 2, (rates, lines)
    wait_success(airflow, api, "kafka_migration", migration["dag_run_id"])
    # Asked once the run has ended (the tests after this one read it). The runs list's Records column and the run's
    # header count the records copied so far, as the live progress does (the ledger's count comes when it ends).
    assert number(listed[6]) == copied, listed
    assert runs_cut is None, runs_cut
    planned_records = sum(partitions * records for partitions, records in TOPICS.values())
    said = [re.search(r"([\d,]+) records? copied so far", h) for h in headers]
    assert headers and all(said) and all(0 < number(m.group(1)) <= planned_records for m in said if m), headers
    source_proxied[0].proxy.set_latency(0)  # watched: the source answers at full speed again


def test_run_view_shows_partitions_checksums_and_where_the_time_went(
    page: Any, airflow: AirflowServer, migration: dict[str, str]
) -> None:
    open_run(page, airflow, migration["run_id"])
    page.get_by_text("Wall time").wait_for()
    rows = table_rows(page, "Partitions")
    assert sorted(r[0] for r in rows) == ["events[0]", "events[1]", "orders[0]", "orders[1]", "orders[2]"]
    for cells in rows:
        assert cells[7] == "VERIFIED", cells
        source_sum, target_sum = cells[6].split(" / ")
        assert source_sum == target_sum and len(source_sum) == 12, cells
    events0 = next(r for r in rows if r[0] == "events[0]")
    assert events0[1] == events0[3] == "0–59999 (60,000 offsets)"
    timings = page.get_by_test_id("timings").inner_text()
    for part in ("planning", "Spark start-up", "copy", "verification"):
        assert part in timings
    view = page.get_by_test_id("run-view").inner_text()
    assert "VERIFIED" in view
    summary = page.get_by_test_id("run-summary").inner_text()
    assert "2 topics, 120,300 records copied" in summary and "so far" not in summary, summary  # the ledger's count
    cut = last_column_cut(page.locator('table[aria-label="Partitions"]'), may_scroll=True)
    assert cut is None, cut
    # each cluster by the name of the connection at its addresses, its id and where it was reached beside
    named = re.compile(r"kafka_source \(\S+, 127\.0\.0\.1:\d+\) → kafka_target \(\S+, 127\.0\.0\.1:\d+\)")
    page.get_by_test_id("run-summary").filter(has_text=named).wait_for()
    shot(page, "console-run.png")


def test_run_links_lead_to_the_dag_run_its_logs_and_the_report(
    page: Any, airflow: AirflowServer, api: AirflowClient, migration: dict[str, str]
) -> None:
    run_id, dag_run_id = migration["run_id"], migration["dag_run_id"]
    open_run(page, airflow, run_id)
    run_view = page.get_by_test_id("run-view")
    with page.expect_popup() as opened:
        run_view.get_by_role("link", name="Report").click()
    report = opened.value
    report.wait_for_load_state()
    text = report.inner_text("body")
    assert "VERIFIED" in text and "NOT VERIFIED" not in text and "events" in text and "orders" in text
    report.close()

    run_view.get_by_role("link", name="Summary log").click()
    page.wait_for_url(re.compile(r"/dags/kafka_migration/runs/.+/tasks/summary"))
    page.go_back()
    page.get_by_test_id("run-view").get_by_role("link", name="DAG run").click()
    page.wait_for_url(re.compile(r"/dags/kafka_migration/runs/[^/]+$"))

    page.get_by_role("link", name="Migration", exact=True).click()  # the plugin's tab on the DAG run page
    page.wait_for_url(re.compile(r"/dags/kafka_migration/runs/[^/]+/plugin/kafka-migration-run$"))
    try:
        page.get_by_test_id("run-view").wait_for()
    except Exception:
        shot(page, "failed-dag-run-tab.png")
        raise
    assert run_id in page.get_by_test_id("run-view").inner_text()
    shot(page, "console-dag-run-tab.png")

    # the tasks' "Migration report" link and the digest the ledger recorded for the file a user downloads
    expected = f"/kafka-migrations/runs/{run_id}"
    assert api.extra_links("kafka_migration", dag_run_id, "summary") == {"Migration report": expected}
    raw = api.request("GET", f"{expected}/report.json").content
    detail = api.get_json(f"/kafka-migrations/api/runs/{run_id}")
    assert detail["run"]["report_sha256"] == "sha256:" + hashlib.sha256(raw).hexdigest()


def test_overview_shows_the_lag_and_a_nightly_sync_from_its_form_closes_it(
    page: Any, airflow: AirflowServer, api: AirflowClient, source_target: tuple[str, str], migration: dict[str, str]
) -> None:
    _seed(source_target[0], "orders", 3, 10, start=10_000)  # 30 records since the run
    view(page, airflow, "Overview")
    # The pair by the names of the connections at its clusters' addresses, each cluster's (random KRaft) id beside.
    (pair,) = api.get_json("/kafka-migrations/api/overview")["pairs"]
    title = f"kafka_source ({pair['source_cluster_id']}) → kafka_target ({pair['target_cluster_id']})"
    page.get_by_role("heading", name=title, exact=True).wait_for()
    orders = page.locator('tr[data-topic="orders"]')
    orders.wait_for()
    cells = [c.strip() for c in orders.locator("td").all_inner_texts()]
    assert (cells[3], cells[4], cells[5]) == ("300", "330", "30"), cells  # migrated, source end now, not yet
    assert migration["run_id"] in cells[7]  # after "Lost" (0)
    assert cells[6] == "0"
    assert "30 offsets not migrated yet" in page.get_by_test_id("pair-lag").inner_text()
    shot(page, "console-overview.png")
    cut = last_column_cut(page.locator('table[aria-label^="Topics from"]').first)
    assert cut is None, cut

    dag_run_id = trigger_from_form(page, airflow, "kafka_nightly_sync")
    wait_success(airflow, api, "kafka_nightly_sync", dag_run_id)
    view(page, airflow, "Overview")
    page.get_by_test_id("pair-lag").filter(has_text="0 offsets not migrated yet").wait_for()
    cells = [c.strip() for c in page.locator('tr[data-topic="orders"]').locator("td").all_inner_texts()]
    nightly = ledger_run_id("kafka_nightly_sync", dag_run_id)
    assert (cells[3], cells[5]) == ("330", "0") and nightly in cells[7]
    # Not migrated yet, run after run: what each run found when it started and left when it ended, newest first
    chart = page.get_by_test_id("lag-history")
    chart.locator(f'tr[data-run-id="{nightly}"]').wait_for()
    points = {
        row.get_attribute("data-run-id"): [c.strip() for c in row.locator("td").all_inner_texts()]
        for row in chart.locator("tbody tr").all()
    }
    assert list(points) == [nightly, migration["run_id"]], points
    assert points[nightly][0].startswith("nightly sync, ") and points[nightly][1:] == ["30", "0"], points
    assert points[migration["run_id"]][1:] == ["120,300", "0"], points  # 120,000 of events, 300 of orders
    assert chart.locator(".recharts-line-curve").count() == 1  # the line through the four points
    shot(page, "console-overview-history.png")


def test_runs_filters_and_paging(page: Any, airflow: AirflowServer, migration: dict[str, str]) -> None:
    view(page, airflow, "Runs")
    # The list first shows what the console fetched before (one run), then refreshes: wait for both runs.
    page.get_by_test_id("runs-summary").filter(has_text="2 runs match").wait_for()
    assert page.locator("tr[data-run-id]").count() == 2
    page.get_by_label("DAG", exact=True).select_option("kafka_nightly_sync")
    page.get_by_test_id("runs-summary").filter(has_text="1 run matches").wait_for()
    (nightly,) = page.locator("tr[data-run-id]").all()
    assert "nightly sync" in nightly.inner_text()
    shot(page, "console-runs-filtered.png")
    page.get_by_label("DAG", exact=True).select_option("")
    page.get_by_label("Verdict").select_option("verified")
    page.wait_for_url(lambda url: "status=verified" in url and "dag_id" not in url)
    page.get_by_test_id("runs-summary").filter(has_text="2 runs match").wait_for()
    assert page.get_by_label("DAG", exact=True).input_value() == ""
    page.get_by_label("Topic").fill("no-such-topic")
    page.get_by_role("button", name="Filter", exact=True).click()
    page.get_by_text("No run matches these filters").wait_for()
    page.get_by_label("Topic").fill("events")
    page.get_by_role("button", name="Filter", exact=True).click()
    page.get_by_test_id("runs-summary").filter(has_text="2 runs match").wait_for()
    page.get_by_label("Started from").fill("2000-01-01")
    page.get_by_label("Started until").fill("2000-12-31")
    page.get_by_text("No run matches these filters").wait_for()
    page.get_by_role("button", name="Clear filters").click()
    page.get_by_label("Clusters").select_option(index=1)
    page.get_by_test_id("runs-summary").filter(has_text="2 runs match").wait_for()
    # Two filters changed faster than the page renders (both change events in one task): both hold.
    page.evaluate(
        """() => {
            for (const [label, value] of [["DAG", "kafka_nightly_sync"], ["Verdict", "verified"]]) {
                const select = document.querySelector(`select[aria-label="${label}"]`);
                select.value = value;
                select.dispatchEvent(new Event("change", { bubbles: true }));
            }
        }"""
    )
    page.wait_for_url(lambda url: "dag_id=kafka_nightly_sync" in url and "status=verified" in url)
    page.get_by_test_id("runs-summary").filter(has_text="1 run matches").wait_for()

    console(page, airflow, "/runs?limit=1")
    page.get_by_test_id("pager").filter(has_text="1–1 of 2").wait_for()
    first = page.locator("tr[data-run-id]").first.get_attribute("data-run-id")
    page.get_by_role("button", name="Next").click()
    page.get_by_test_id("pager").filter(has_text="2–2 of 2").wait_for()
    assert page.locator("tr[data-run-id]").first.get_attribute("data-run-id") not in (first, None)


@pytest.fixture(scope="module")
def cutover(page: Any, airflow: AirflowServer, api: AirflowClient, migration: dict[str, str]) -> dict[str, str]:
    dag_run_id = trigger_from_form(page, airflow, "kafka_cutover")
    wait_success(airflow, api, "kafka_cutover", dag_run_id)
    (row,) = api.get_json("/kafka-migrations/api/cutovers", params={"limit": 1})["cutovers"]
    return {"dag_run_id": dag_run_id, "cutover_id": row["cutover_id"]}


def test_cutover_preflight_reads_the_clusters_without_recording_anything(
    page: Any, airflow: AirflowServer, api: AirflowClient, migration: dict[str, str]
) -> None:
    view(page, airflow, "Cutover")
    page.get_by_label("Watch for (s)").fill("1")
    page.get_by_role("button", name="Check now").click()
    result = page.get_by_test_id("preflight-result")
    result.wait_for()
    assert "Ready" in result.inner_text()
    topics = {r[0]: r for r in table_rows(page, "Pre-flight topics")}
    assert set(topics) == {"orders", "events"} and all(r[4] == "QUIET" for r in topics.values())
    (group,) = table_rows(page, "Pre-flight groups")
    assert group[0] == GROUP and "EMPTY" in group[1] and "0 members" in group[1]
    shot(page, "console-cutover-preflight.png")
    assert api.get_json("/kafka-migrations/api/cutovers")["total"] == 0  # read only: no cutover recorded


def test_cutover_from_its_form_shows_its_checklist_and_the_group_sync(
    page: Any, airflow: AirflowServer, cutover: dict[str, str]
) -> None:
    view(page, airflow, "Cutover")
    card = page.locator("section").filter(has_text=f"Cutover {cutover['cutover_id']}")
    card.get_by_text("COMPLETED").wait_for()
    items = card.locator("li").all_inner_texts()
    assert any(i.startswith("☑ Final incremental run verified up to the source end") for i in items), items
    assert any(f"Consumers of group {GROUP} may start on the target" in i for i in items), items
    shot(page, "console-cutover.png")

    view(page, airflow, "Consumer groups")
    section = page.locator("section").filter(has_text="Sync ")
    section.first.wait_for()
    rows = {r[1]: r for r in table_rows(page, page.locator("table").first.get_attribute("aria-label"))}
    assert rows["orders[0]"][0] == GROUP and rows["orders[0]"][2] == "40"
    assert rows["orders[0]"][7] == "same record" and rows["orders[0]"][8] == "SYNCED"
    shot(page, "console-groups.png")


def test_failback_through_the_console_link_with_the_cutover_id_filled_in(
    page: Any, airflow: AirflowServer, api: AirflowClient, cutover: dict[str, str]
) -> None:
    before = {r["dag_run_id"] for r in api.get_json("/api/v2/dags/kafka_failback/dagRuns")["dag_runs"]}
    view(page, airflow, "Cutover")
    card = page.locator("section").filter(has_text=f"Cutover {cutover['cutover_id']}")
    card.get_by_role("button", name="Fail back this cutover…").click()
    dialog = page.get_by_role("dialog")
    field = dialog.get_by_label("Cutover")
    field.wait_for()
    assert field.input_value() == cutover["cutover_id"]
    shot(page, "console-failback-form.png")
    dialog.get_by_role("button", name="Trigger", exact=True).click()
    dialog.get_by_text("Triggered: DAG run").wait_for()
    (dag_run_id,) = {r["dag_run_id"] for r in api.get_json("/api/v2/dags/kafka_failback/dagRuns")["dag_runs"]} - before
    conf = api.dag_run("kafka_failback", dag_run_id)["conf"]
    assert conf["cutover_id"] == cutover["cutover_id"]
    wait_success(airflow, api, "kafka_failback", dag_run_id)
    dialog.get_by_role("button", name="Close").click()
    page.reload()
    mounted(page)
    card = page.locator("section").filter(has_text=f"Cutover {cutover['cutover_id']}")
    card.get_by_text("failback completed").first.wait_for()

    total = api.get_json("/kafka-migrations/api/group-syncs")["total"]
    assert total >= 2  # the cutover's sync and the failback's
    console(page, airflow, "/groups?limit=1")
    page.get_by_test_id("pager").filter(has_text=f"1–1 of {total}").wait_for()
    first = page.locator("table").first.get_attribute("aria-label")
    page.get_by_role("button", name="Next").click()
    page.get_by_test_id("pager").filter(has_text=f"2–2 of {total}").wait_for()
    assert page.locator("table").first.get_attribute("aria-label") not in (first, None)


@pytest.mark.parametrize(
    "bad",
    [{"topics_per_job": 0}, {"rename": "no-placeholder"}, {"start": "yesterday"}, {"include": ""}],
    ids=["topics_per_job", "rename", "start", "include"],
)
def test_trigger_refuses_bad_params(api: AirflowClient, bad: dict[str, object]) -> None:
    # The trigger form and the REST API validate against the same Param schemas; no run is created.
    before = len(api.get_json("/api/v2/dags/kafka_migration/dagRuns")["dag_runs"])
    response = api.request(
        "POST", "/api/v2/dags/kafka_migration/dagRuns", json={"logical_date": None, "conf": bad}, expect=(400, 422)
    )
    assert response.status_code in (400, 422)
    assert len(api.get_json("/api/v2/dags/kafka_migration/dagRuns")["dag_runs"]) == before


def test_overview_says_loudly_when_the_target_lost_verified_records(
    page: Any, airflow: AirflowServer, source_target: tuple[str, str], migration: dict[str, str]
) -> None:
    """Last in the module: it damages the target. An operator's DeleteRecords on the target moves the log start of
    orders[0] past 20 records that runs verified and the source still holds; the overview checks it as it loads."""
    delete_records(source_target[1], {("orders", 0): 20})
    view(page, airflow, "Overview")
    page.get_by_test_id("pair-lost").first.wait_for()
    assert "20 records that earlier runs verified" in page.get_by_test_id("pair-lost").first.inner_text()
    page.get_by_text("The target LOST 20 verified records").first.wait_for()
    # The pair from the source to the target (after the failback the overview also has the way back, with no loss).
    lost = page.locator("section").filter(has=page.get_by_test_id("pair-lost"))
    assert lost.count() == 1
    row = lost.locator('tr[data-topic="orders"]')
    assert [c.strip() for c in row.locator("td").all_inner_texts()][6] == "20 LOST"
    shot(page, "console-overview-lost.png")
