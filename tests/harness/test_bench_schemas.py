"""harness/bench/schemas.py (scenario 11): its values are what confluent-kafka's AvroSerializer writes, 200 B with
the key; the two runs differ by the schema options only; the summary puts their medians side by side."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import fastavro

from harness.bench import schemas
from harness.bench.seeding import KEY_BYTES


def test_a_value_is_the_wire_header_and_an_avro_record_of_200_bytes_with_its_key() -> None:
    payload = b"x" * schemas.payload_bytes()
    value = schemas.avro_value(70000, payload)
    assert len(value) + KEY_BYTES == schemas.RECORD_BYTES
    assert value[:5] == b"\x00" + (70000).to_bytes(4, "big")
    parsed = fastavro.parse_schema(json.loads(schemas.SCHEMA))
    assert fastavro.schemaless_reader(io.BytesIO(value[5:]), parsed) == {"payload": payload.decode()}
    assert schemas.avro_value(1, b"ab") == b"\x00\x00\x00\x00\x01\x04ab"  # length 2, zig-zag: 4


def test_the_runs_differ_by_the_schema_options_only(tmp_path: Path) -> None:
    registries = SimpleNamespace(source="http://src:1/apis/ccompat/v7", target="http://dst:2/apis/ccompat/v7")
    off = schemas.command("off", "s:9092", "t:9092", "bench.schemas", tmp_path, "r0.{topic}", registries)
    translate = schemas.command("translate", "s:9092", "t:9092", "bench.schemas", tmp_path, "r0.{topic}", registries)
    assert translate[: len(off)] == off and "--schema-ids" not in off
    assert translate[len(off) :] == [
        "--schema-ids", "translate", "--source-registry", registries.source, "--target-registry", registries.target,
    ]  # fmt: skip
    assert off[off.index("--include") + 1] == r"bench\.schemas" and off[off.index("--rename") + 1] == "r0.{topic}"


def _sample(wall: float, copy: float) -> dict[str, object]:
    return {"records": 1000, "wall_seconds": wall, "timings": {"wall": wall, "copy": copy, "verify": 1.0}}


def test_the_summary_sets_the_medians_side_by_side_with_the_overhead() -> None:
    raw = {"off": [_sample(10.0, 4.0), _sample(12.0, 5.0), _sample(11.0, 4.5)], "translate": [_sample(12.1, 5.0)]}
    summary = schemas.summarize(raw, {})
    entry = summary["schemas"]
    assert (entry["off"]["median_wall_seconds"], entry["translate"]["median_wall_seconds"]) == (11.0, 12.1)
    assert (entry["ratio"], entry["overhead_percent"]) == (1.1, 10.0)
    assert entry["off"]["median_parts"]["copy"] == 4.5
    assert schemas.TARGETS["schemas.overhead_percent"][1](entry["overhead_percent"])
    rows = schemas.table(summary)
    assert [r.split()[5:9] for r in rows] == [
        ["CLI", "--schema-ids", "off", "1,000"],
        ["CLI", "--schema-ids", "translate", "1,000"],
    ]
    assert "translate 12.10 s vs off 11.00 s (medians), ratio 1.1, overhead 10.0%" in "\n".join(schemas.notes(summary))
    assert schemas.summarize({"off": [], "translate": []}, {}) == {}
