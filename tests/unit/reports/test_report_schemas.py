"""The report's "Schemas" section: only for runs that moved schemas, from the ledger alone (the plan's schemas and
the segments' counts), in every format."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from kafka_migration.ledger import Ledger
from kafka_migration.model.schema_runs import SchemaRun, SyncedVersion, VersionAction, id_map_of
from kafka_migration.model.schemas import SchemaFormat, SchemaMode
from kafka_migration.reports.signoff import generate_report
from tests.unit.ledger.test_ledger import outcomes, plan

AVRO, REGISTERED, PRESENT = SchemaFormat.AVRO, VersionAction.REGISTERED, VersionAction.PRESENT
VERSIONS = (
    SyncedVersion("shop.<Address>", 1, "shop.<Address>", AVRO, 4, 1, REGISTERED, 1, "sha256:a"),
    SyncedVersion("copy.orders-value", 1, "orders-value", AVRO, 9, 3, PRESENT, 1, "sha256:b"),
)
COUNTS = {"translated": 90, "unchanged": 0, "without_header": 10}


def test_schemas_section_in_every_format(tmp_path: Path) -> None:
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    bare = plan("run-bare", 0, 100, 0)
    ledger.start_run(bare, trigger="cli")
    assert "schemas" not in generate_report(ledger, "run-bare", tmp_path / "bare").json.read_text()

    run = SchemaRun(SchemaMode.TRANSLATE, "http://src:8081", "http://dst:8081", VERSIONS, id_map_of(VERSIONS))
    p = dataclasses.replace(plan("run-1", 0, 100, 0), schemas=run.to_dict())
    ledger.start_run(p, trigger="cli")
    copy, verify = outcomes(p, {0: True, 1: True})
    verify.partitions[0]["schema_counts"] = {"topic": "orders", "partition": 0, "keys": COUNTS, "values": COUNTS}
    ledger.record_topic(p, p.topics[0], copy, verify)
    ledger.finish_run("run-1", "verified", 200)
    files = generate_report(ledger, "run-1", tmp_path / "reports")

    section = json.loads(files.json.read_text())["schemas"]
    assert (section["mode"], section["target_registry"]) == ("translate", "http://dst:8081")
    assert [(v["target_subject"], v["action"]) for v in section["versions"]] == [
        ("shop.<Address>", "registered"),
        ("copy.orders-value", "present"),
    ]
    assert section["id_map"] == [
        {"source": 4, "target": 1, "format": "AVRO"},
        {"source": 9, "target": 3, "format": "AVRO"},
    ]
    assert section["partitions"] == [{"source_topic": "orders", "partition": 0, "keys": COUNTS, "values": COUNTS}]
    assert section["totals"]["values"] == COUNTS
    markdown = files.markdown.read_text()
    assert "## Schemas" in markdown and "90 keys and 90 values translated and proven" in markdown
    assert "| `copy.orders-value` | 1 | `orders-value` | AVRO | 9 | 3 | present | `sha256:b` |" in markdown
    assert "| `orders` | 0 | 90 / 0 / 10 | 90 / 0 / 10 |" in markdown
    page = files.html.read_text()
    assert "Schemas</h2>" in page and "shop.&lt;Address&gt;" in page and "shop.<Address>" not in page
    assert generate_report(ledger, "run-1", tmp_path / "again").json.read_bytes() == files.json.read_bytes()
    ledger.engine.dispose()
