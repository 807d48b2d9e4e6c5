"""Scenario 11: what translating schema ids costs a whole verified run (issue 48's bench row).

One 8-partition topic of R Avro-encoded records of about 200 B: a 10-byte key and a value with the registry's
wire header (a zero byte, the 4-byte id of a schema registered on the source registry) and an Avro record of one
string field. The same data is copied by ``kafka-migrate run`` as a user runs it (a subprocess, launch to exit:
plan, topics, copy, verification, ledger, report), ``--schema-ids off`` and ``--schema-ids translate`` (two real
registries: Apicurio Registry, started here like the clusters, the target's ids offset by other subjects so that
every value's id is rewritten), alternating which goes first, each into a fresh target cluster, each run under a
target name of its own (``--rename``), so that every translated run registers its subject and proves its pair as a
first run does. Medians of the repetitions, side by side, and the overhead: translate wall / off wall - 1 (target
at most 10%). A translated run must report every value translated, or the scenario fails.

Opt-in: ``python -m harness.bench --scenarios schemas [--schema-records N]`` (default 1,000,000; --quick 100,000).
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.bench.common import cli_run_command, fmt, load1, median, ratio, say, table_row
from harness.bench.seeding import KEY_BYTES, TIMESTAMP_BASE, create_topics, end_offsets, seeding_producer
from harness.bench.whole.report import median_parts
from harness.bench.whole.runs import child_env, launch, project_sample

if TYPE_CHECKING:
    from harness.bench.session import Session

NAME = "schemas"
TOPIC = "bench.schemas"
WARMUP_TOPIC = "bench.schemas.warmup"
PARTITIONS = 8
RECORD_BYTES = 200  # key + value
SCHEMA = '{"type": "record", "name": "Event", "namespace": "bench", "fields": [{"name": "payload", "type": "string"}]}'
KINDS = ("off", "translate")
TARGETS = {"schemas.overhead_percent": ("<= 10", lambda v: v <= 10)}


def avro_value(schema_id: int, payload: bytes) -> bytes:
    """A value as confluent-kafka's AvroSerializer writes one of SCHEMA: header, then the string's zig-zag varint
    length and its bytes."""
    n, length = len(payload) << 1, bytearray()
    while n >= 0x80:
        length.append((n & 0x7F) | 0x80)
        n >>= 7
    length.append(n)
    return b"\x00" + schema_id.to_bytes(4, "big") + bytes(length) + payload


def payload_bytes(record_bytes: int = RECORD_BYTES) -> int:
    """The string's length that makes key + value ``record_bytes`` (header 5 B, a 2-byte length)."""
    return record_bytes - KEY_BYTES - 5 - 2


def seed_avro(bootstrap: str, topic: str, partitions: int, records: int, schema_id: int, rng_seed: int = 21) -> float:
    """Create ``topic`` and fill it with ``records`` Avro values of ``schema_id`` (keys ``k%09d``, round-robin, explicit
    timestamps), as scenario 1's data; the seconds taken."""
    started = time.monotonic()
    create_topics(bootstrap, {topic: partitions})
    rng = random.Random(rng_seed)
    letters = b"abcdefghijklmnopqrstuvwxyz0123456789"
    pool = [avro_value(schema_id, bytes(rng.choices(letters, k=payload_bytes()))) for _ in range(4096)]
    p = seeding_producer(bootstrap)
    for i in range(records):
        while True:
            try:
                p.produce(topic, pool[i & 4095], b"k%09d" % i, partition=i % partitions, timestamp=TIMESTAMP_BASE + i)
                break
            except BufferError:
                p.poll(0.05)
        if not i & 0xFFFF:
            p.poll(0)
    if p.flush(300):
        raise RuntimeError("seeding: records left unsent after 300 s")
    return time.monotonic() - started


class Registries:
    """The scenario's source and target registries (Apicurio, in memory), started into the session's resources."""

    def __init__(self, session: Session) -> None:
        from harness.registry import dist, fetch
        from harness.registry import server as registry_server

        dist.java()
        fetch.ensure()
        started = session.resources.enter_context(
            registry_server.registries("bench-source", "bench-target", directory=session.work / "registries")
        )
        self.source, self.target = (r.ccompat_url for r in started)

    def register(self, subject: str, url: str, schema: str = SCHEMA) -> int:
        from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

        return SchemaRegistryClient({"url": url, "timeout": 30.0}).register_schema(subject, Schema(schema, "AVRO"))


def seed(session: Session) -> None:
    registries = Registries(session)
    session.clusters[NAME] = registries
    schema_id = registries.register(f"{TOPIC}-value", registries.source)
    warmup_id = registries.register(f"{WARMUP_TOPIC}-value", registries.source)
    for i in range(5):  # the target's ids run ahead of the source's: every value's id is rewritten
        other = SCHEMA.replace('"Event"', f'"Filler{i}"')
        registries.register(f"bench.filler{i}-value", registries.target, other)
    records = session.sizes["schema_records"]
    say(
        f"seeding {TOPIC}: {records:,} Avro records of {RECORD_BYTES} B (schema id {schema_id}) in {PARTITIONS} "
        "partitions"
    )
    session.seeding[TOPIC] = round(seed_avro(session.source, TOPIC, PARTITIONS, records, schema_id), 2)
    say(f"  seeded in {session.seeding[TOPIC]:.1f} s")
    seed_avro(session.source, WARMUP_TOPIC, 2, 1000, warmup_id, rng_seed=22)


def command(
    kind: str, source: str, target: str, topic: str, state_dir: Path, rename: str, registries: Any
) -> list[str]:
    """``kafka-migrate run`` of ``topic`` under the name ``rename``, with or without translating its ids."""
    cmd = [*cli_run_command(source, target, re.escape(topic), state_dir), "--rename", rename]
    if kind == "translate":
        cmd += ["--schema-ids", "translate", "--source-registry", registries.source]
        cmd += ["--target-registry", registries.target]
    return cmd


def one_run(session: Session, kind: str, topic: str, rename: str) -> dict[str, Any]:
    """One whole verified run into a fresh target; its sample (scenario 5's) and, translated, the values translated
    as its report counts them."""
    registries = session.clusters[NAME]
    target = session.target.fresh()
    state_dir = session.work / f"{NAME}-{kind}-state"
    log = session.run_dir() / f"{kind}.log"
    load = load1()
    code, wall, output = launch(
        command(kind, session.source, target, topic, state_dir, rename, registries), log, child_env()
    )
    if code != 0:
        raise RuntimeError(f"kafka-migrate run --schema-ids {kind} exited {code}:\n{output[-3000:]}")
    sample = project_sample(state_dir, wall, load)
    expected = sum(end_offsets(session.source, {topic: PARTITIONS if topic == TOPIC else 2}).values())
    if sample["records"] != expected:
        raise RuntimeError(f"{kind}: {sample['records']} records verified, expected {expected}")
    translated = _translated(state_dir, sample["run_id"])
    if (kind == "translate") != (translated == expected):
        raise RuntimeError(f"{kind}: {translated} values translated of {expected} records")
    sample["values_translated"] = translated
    return sample


def _translated(state_dir: Path, run_id: str) -> int:
    import json

    report = json.loads((state_dir / "reports" / run_id / "report.json").read_text())
    return int(((report.get("schemas") or {}).get("totals") or {}).get("values", {}).get("translated", 0))


def run(session: Session, repeat: int) -> None:
    raw = session.raw.setdefault(NAME, {k: [] for k in KINDS})
    say("scenario 11: warm-up, not measured: one run of each kind on a small topic (ledgers created)")
    for kind in KINDS:
        one_run(session, kind, WARMUP_TOPIC, f"warm.{kind}.{{topic}}")
    for i in range(repeat):
        say(f"scenario 11 (schema ids, {PARTITIONS} partitions), repetition {i + 1}/{repeat}")
        for kind in KINDS[i % 2 :] + KINDS[: i % 2]:  # each kind goes first in turn
            sample = one_run(session, kind, TOPIC, f"r{i}.{kind}.{{topic}}")
            parts = " ".join(f"{k} {v:.1f}" for k, v in (sample.get("timings") or {}).items() if k != "wall")
            say(f"    {kind}: {sample['records']:,} records, wall {sample['wall_seconds']:.1f} s, {parts}")
            raw[kind].append(sample)


def summarize(raw: dict[str, list[dict[str, Any]]], sizes: dict[str, int]) -> dict[str, Any]:
    if not raw.get("off") or not raw.get("translate"):
        return {}
    walls = {k: median([s["wall_seconds"] for s in raw[k]]) for k in KINDS}
    out: dict[str, Any] = {"records": raw["off"][0]["records"], "record_bytes": RECORD_BYTES, "partitions": PARTITIONS}
    for kind in KINDS:
        out[kind] = {"median_wall_seconds": walls[kind], "median_parts": median_parts(raw[kind]), "samples": raw[kind]}
    out["ratio"] = ratio(walls["translate"], walls["off"])
    out["overhead_percent"] = round((out["ratio"] - 1) * 100, 1)
    return {NAME: out}


def table(summary: dict[str, Any]) -> list[str]:
    entry = summary.get(NAME)
    if not entry:
        return []
    rows = []
    for kind in KINDS:
        wall = entry[kind]["median_wall_seconds"]
        rows.append(table_row("11. schema ids, whole run", f"CLI --schema-ids {kind}", entry["records"], wall, wall))
    return rows


def notes(summary: dict[str, Any]) -> list[str]:
    entry = summary.get(NAME)
    if not entry:
        return []

    def parts(kind: str) -> str:
        shown = entry[kind]["median_parts"]
        return ", ".join(
            f"{k} {shown[k]:.1f}" for k in ("plan", "startup", "copy", "verify", "bookkeeping") if k in shown
        )

    return [
        "",
        f"Scenario 11 (schema ids): {entry['records']:,} Avro records of {RECORD_BYTES} B in {PARTITIONS} partitions, "
        f"whole verified CLI runs: translate {fmt(entry['translate']['median_wall_seconds'], 2)} s vs off "
        f"{fmt(entry['off']['median_wall_seconds'], 2)} s (medians), ratio {entry['ratio']}, overhead "
        f"{entry['overhead_percent']}% (target <= 10%).",
        f"  parts off (median s): {parts('off')}",
        f"  parts translate (median s): {parts('translate')}",
    ]
