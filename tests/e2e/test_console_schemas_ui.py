"""The run page's schemas in a real browser: Debian's Chromium (driven by Playwright) against a real Airflow
(``airflow standalone``), reading the ledger real ``kafka-migrate run`` commands wrote from two brokers and a real
registry per cluster (Apicurio).

One run translates a topic's Avro values (two versions of one subject), another copies a topic of raw bytes. A
person signs in, opens the first run from the runs list and reads its Schemas section: the registries and the
counts, each subject version with its source and target ids, each subject's compatibility on both registries, the
id map, and the values translated per partition, each as the ledger recorded it; the second run's page has no
Schemas section.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness.data.seed import create_topic, producer, send
from harness.servers.airflow_server import airflow_standalone
from kafka_migration.ledger import Ledger
from tests.conftest import Clusters, Registries, missing
from tests.e2e.ui_harness import find_chromium

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / ".artifacts"
KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")
UI_TIMEOUT = 180_000  # milliseconds for a page or an element on a loaded 2-core machine
TOPICS = {"subject.name.strategy.type": "TOPIC"}  # Apicurio needs it spelled so (tests/harness/test_registry.py)
ORDER = {"type": "record", "name": "Order", "namespace": "shop", "fields": [{"name": "id", "type": "long"}]}
ORDER_V2 = {**ORDER, "fields": [*ORDER["fields"], {"name": "note", "type": "string", "default": ""}]}


def _run(state: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [KAFKA_MIGRATE, "run", *args, "--state-dir", str(state), "--output", "json"],
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return str(json.loads(done.stdout)["run_id"])


def _seed(clusters: Clusters, registries: Registries, topic: str) -> None:
    create_topic(clusters.source, topic, 2)
    conf = {**TOPICS, "auto.register.schemas": False, "use.latest.version": True}
    p = producer(clusters.source)
    for schema, ids in ((ORDER, range(6)), (ORDER_V2, range(6, 9))):
        registry = SchemaRegistryClient({"url": registries.source, "timeout": 20.0})  # no cached latest version
        registry.register_schema(f"{topic}-value", Schema(json.dumps(schema), "AVRO"))
        serialize = AvroSerializer(registry, json.dumps(schema), conf=conf)
        for i in ids:
            value = serialize(
                {"id": i} if schema is ORDER else {"id": i, "note": "v2"},
                SerializationContext(topic, MessageField.VALUE),
            )
            send(p, topic, i % 2, f"k{i}".encode(), value)
        p.flush(30)


def _outcomes(counts: dict[str, int]) -> str:
    return " / ".join(str(counts[o]) for o in ("translated", "unchanged", "without_header"))


def rows(page: Any, label: str) -> list[list[str]]:
    found = page.locator(f'table[aria-label="{label}"] tbody tr')
    return [[c.strip() for c in row.locator("td").all_inner_texts()] for row in found.all()]


def test_a_person_reads_a_runs_schemas_on_its_page(
    clusters: Clusters, registries: Registries, tmp_path: Path, unique: str
) -> None:
    binary = find_chromium()
    if binary is None:
        missing("Debian's chromium is needed for the console's browser tests: make system-deps (as root)")
    topic, raw = f"uisch{unique}.orders", f"uiraw{unique}.t"
    _seed(clusters, registries, topic)
    SchemaRegistryClient({"url": registries.source, "timeout": 20.0}).set_compatibility(f"{topic}-value", "FULL")
    target_global = SchemaRegistryClient({"url": registries.target, "timeout": 20.0}).get_compatibility()
    create_topic(clusters.source, raw, 1)
    p = producer(clusters.source)
    send(p, raw, 0, b"k", b"raw bytes")
    p.flush(10)
    state = tmp_path / "state"
    base = ["--source", clusters.source, "--target", clusters.target, "--rename", "ui.{topic}"]
    translated = _run(state, *base, "--include", f"uisch{unique}\\..*", "--schema-ids", "translate",
                      "--source-registry", registries.source, "--target-registry", registries.target)  # fmt: skip
    plain = _run(state, *base, "--include", f"uiraw{unique}\\..*")
    ledger = Ledger.open(f"sqlite:///{state / 'ledger.db'}", create=False)
    recorded = ledger.run_schema_ids(translated)
    segments = {s.partition: s.schema_counts for s in ledger.run_segments(translated)}
    ledger.engine.dispose()
    assert recorded is not None and len(recorded.versions) == 2

    home = tmp_path / "airflow-home"
    env = {"KAFKA_MIGRATION_STATE_DIR": str(state), "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False"}
    from playwright.sync_api import sync_playwright

    with airflow_standalone(home, env, timeout=600) as airflow, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=binary,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        context = browser.new_context(viewport={"width": 1280, "height": 1000})
        context.set_default_timeout(UI_TIMEOUT)
        page = context.new_page()
        try:
            page.goto(f"{airflow.base_url}/plugin/kafka-migrations")
            page.get_by_label("Username").fill(airflow.username)
            page.get_by_label("Password").fill(airflow.password)
            page.get_by_role("button", name="Sign in").click()
            page.get_by_test_id("kafka-console").wait_for()

            page.get_by_role("navigation", name="Console views").get_by_role("link", name="Runs", exact=True).click()
            page.locator(f'tr[data-run-id="{translated}"]').get_by_role("link", name=translated).click()
            page.get_by_test_id("run-view").wait_for()
            summary = page.get_by_test_id("schemas-summary")
            summary.wait_for()
            text = summary.inner_text()
            assert f"Schema ids translated from {registries.source} to {registries.target}" in text, text
            assert "1 subject, 2 versions, 2 ids mapped; 0 keys and 9 values translated" in text, text
            versions = rows(page, "Subject versions")
            expected = [
                [f"ui.{topic}-value", str(v.version), f"{topic}-value", "AVRO", str(v.source_id), str(v.target_id),
                 "registered", (v.fingerprint or "")[:19]]
                for v in recorded.versions
            ]  # fmt: skip
            assert versions == expected, versions
            levels = rows(page, "Compatibility")
            assert levels == [[f"ui.{topic}-value", "FULL", f"{target_global} (global)"]], levels
            pairs = [[str(p.source_id), str(p.target_id), "AVRO"] for p in recorded.id_map.pairs]
            assert rows(page, "Id map") == pairs
            per_partition = rows(page, "Translated per partition")
            assert per_partition == [
                [f"{topic}[{q}]", *(_outcomes(segments[q][part]) for part in ("keys", "values"))] for q in (0, 1)
            ], per_partition  # type: ignore[index]
            assert [segments[q]["keys"]["without_header"] for q in (0, 1)] == [5, 4]  # type: ignore[index]  # raw keys
            shot(page, "console-run-schemas.png")

            page.get_by_role("navigation", name="Console views").get_by_role("link", name="Runs", exact=True).click()
            page.locator(f'tr[data-run-id="{plain}"]').get_by_role("link", name=plain).click()
            page.get_by_test_id("run-view").wait_for()
            page.locator('table[aria-label="Partitions"] tbody tr').first.wait_for()
            page.wait_for_load_state("networkidle")
            assert page.get_by_test_id("schemas-summary").count() == 0
            assert page.get_by_role("heading", name="Schemas").count() == 0
        except Exception:
            shot(page, "failed-console-schemas.png")
            raise
        finally:
            browser.close()


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)
