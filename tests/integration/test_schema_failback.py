"""A failback after translated runs: the records the target received after the cutover go back to the source with
the source's ids, through the map the forward runs recorded (schema_sync/back.py). Real brokers, a real registry
per cluster (Apicurio), ``kafka-migrate run``, ``cutover`` and ``failback`` as subprocesses.

A topic's Avro values reference another subject's named type. Forward: a translated run, then a translated cutover.
On the target after the cutover: records of the schema the map knows, then a second version registered on the
target only (referencing the moved type) and records of it. A failback without ``--schema-ids`` is refused before
anything is recorded; with it, the second version is registered on the source (its reference pointed at the
source's own subject), every record goes back with the source's ids, proven record by record, and confluent-kafka's
deserializer reads on the source what it read on the target. The per-record proof of the failback's run finds a
planted wrong id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness.data.read import read_partition
from harness.data.seed import create_topic, producer, send
from kafka_migration.ledger import Ledger
from kafka_migration.model.config import ClusterPair, Endpoint
from kafka_migration.model.plan import MigrationPlan, PartitionSlice
from kafka_migration.model.schema_runs import VersionAction
from kafka_migration.run.verify import verify_partition
from tests.commands import kafka_migrate
from tests.conftest import Clusters, Registries

pytestmark = [pytest.mark.integration, pytest.mark.spark]

TOPICS = {"subject.name.strategy.type": "TOPIC"}  # Apicurio needs it spelled so (tests/harness/test_registry.py)
ADDRESS = {"type": "record", "name": "Address", "namespace": "shop", "fields": [{"name": "city", "type": "string"}]}
ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "ship_to", "type": "shop.Address"}],
}
ORDER_V2 = {**ORDER, "fields": [*ORDER["fields"], {"name": "note", "type": "string", "default": ""}]}


def client(url: str) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": url, "timeout": 20.0})


def _produce(bootstrap: str, registry: SchemaRegistryClient, topic: str, schema: Schema, orders: list[dict]) -> None:  # type: ignore[type-arg]
    conf = {**TOPICS, "auto.register.schemas": False, "use.latest.version": True}
    serialize = AvroSerializer(registry, schema, conf=conf)
    p = producer(bootstrap)
    for order in orders:
        value = serialize(order, SerializationContext(topic, MessageField.VALUE))
        send(p, topic, order["id"] % 2, f"k{order['id']}".encode(), value)
    p.flush(30)


def _decoded(bootstrap: str, topic: str, url: str, starts: dict[int, int]) -> list[tuple[bytes, Any]]:
    avro = AvroDeserializer(client(url), conf=TOPICS)
    context = SerializationContext(topic, MessageField.VALUE)
    return [
        (r["key"], avro(r["value"], context))
        for q, start in sorted(starts.items())
        for r in read_partition(bootstrap, topic, q, start=start)
    ]


def test_a_failback_translates_back_through_the_recorded_map_and_registers_what_is_new(
    clusters: Clusters, registries: Registries, tmp_path: Path, unique: str
) -> None:
    topic, target_topic, address = f"fb{unique}.orders", f"moved.fb{unique}.orders", f"fb{unique}-shop.Address"
    source, target = client(registries.source), client(registries.target)
    create_topic(clusters.source, topic, 2)
    source.register_schema(address, Schema(json.dumps(ADDRESS), "AVRO"))
    reference = SchemaReference("shop.Address", address, 1)
    source.register_schema(f"{topic}-value", Schema(json.dumps(ORDER), "AVRO", [reference]))
    for i in range(4):  # the target's ids run ahead of the source's: kept ids would name other schemas
        target.register_schema(f"{topic}-filler{i}", Schema(json.dumps({**ADDRESS, "name": f"Filler{i}"}), "AVRO"))
    v1 = source.get_latest_version(f"{topic}-value").schema
    _produce(clusters.source, source, topic, v1, [{"id": i, "ship_to": {"city": f"c{i}"}} for i in range(8)])

    ledger_url = f"sqlite:///{tmp_path / 'ledger.db'}"
    clusters_args = ["--source", clusters.source, "--target", clusters.target, "--ledger", ledger_url]
    registry_args = ["--source-registry", registries.source, "--target-registry", registries.target]
    selection = ["--include", f"fb{unique}\\..*", "--rename", "moved.{topic}"]
    forward = kafka_migrate("run", *clusters_args, *selection, "--schema-ids", "translate", *registry_args,
                            state_dir=tmp_path)  # fmt: skip
    assert forward.returncode == 0, forward.stdout + forward.stderr
    cutover = kafka_migrate("cutover", *clusters_args, *selection, "--quiet-seconds", "1", "--schema-ids",
                            "translate", *registry_args, state_dir=tmp_path)  # fmt: skip
    assert cutover.returncode == 0, cutover.stdout + cutover.stderr
    ledger = Ledger.open(ledger_url, create=False)
    (row,) = ledger.cutovers()
    cutover_id = row["cutover_id"]
    report = json.loads((tmp_path / "reports" / cutover_id / "report.json").read_text())
    ends = {p["partition"]: p for p in report["ends_at_cutover"][0]["partitions"]}

    # Life on the target: records of the schema the map knows, then of a version only the target registry has.
    moved_value = f"{target_topic}-value"
    known = target.get_latest_version(moved_value)
    _produce(
        clusters.target, target, target_topic, known.schema, [{"id": i, "ship_to": {"city": "t"}} for i in (20, 21)]
    )
    moved_reference = SchemaReference("shop.Address", address, 1)  # the reference's subject kept its name
    target.register_schema(moved_value, Schema(json.dumps(ORDER_V2), "AVRO", [moved_reference]))
    again = client(registries.target)  # a client without the cached latest version
    new = again.get_latest_version(moved_value)
    orders = [{"id": i, "ship_to": {"city": "n"}, "note": "after"} for i in (22, 23, 24)]
    _produce(clusters.target, again, target_topic, new.schema, orders)

    back = ["failback", "--cutover", cutover_id, *clusters_args, "--quiet-seconds", "1"]
    refused = kafka_migrate(*back, state_dir=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "The runs before the cutover translated the schema ids of 1 topic" in refused.stderr
    assert "Fail back with --schema-ids translate" in refused.stderr
    assert ledger.cutover(cutover_id)["failback_status"] is None  # type: ignore[index]  # nothing recorded
    assert len(source.get_versions(f"{topic}-value")) == 1

    done = kafka_migrate(*back, "--schema-ids", "translate", *registry_args, state_dir=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Failback of cutover {cutover_id} COMPLETED" in done.stdout
    assert "1 registered" in done.stdout and "present" in done.stdout, done.stdout

    # On the source: the target's new records, each with the source's id, read back as they were on the target.
    after = {q: ends[q]["target_end"] for q in (0, 1)}
    appended = {q: ends[q]["source_end"] for q in (0, 1)}
    on_target = _decoded(clusters.target, target_topic, registries.target, after)
    assert _decoded(clusters.source, topic, registries.source, appended) == on_target and len(on_target) == 5
    registered = client(registries.source).get_version(f"{topic}-value", 2)
    assert [(r.name, r.subject, r.version) for r in registered.schema.references] == [("shop.Address", address, 1)]
    headers = {
        r["key"]: int.from_bytes(r["value"][1:5], "big")
        for q in (0, 1)
        for r in read_partition(clusters.source, topic, q, start=appended[q])
    }
    v1_id = source.get_version(f"{topic}-value", 1).schema_id
    assert headers == {b"k20": v1_id, b"k21": v1_id, b"k22": registered.schema_id, b"k23": registered.schema_id,
                       b"k24": registered.schema_id}  # fmt: skip

    run_id = ledger.cutover(cutover_id)["failback_run_id"]  # type: ignore[index]
    recorded = ledger.run_schema_ids(run_id)
    assert recorded is not None
    assert sorted((v.source_subject, v.version, v.action, v.target_id) for v in recorded.versions) == sorted(
        [
            (address, 1, VersionAction.PRESENT, source.get_version(address, 1).schema_id),
            (moved_value, 1, VersionAction.PRESENT, v1_id),
            (moved_value, 2, VersionAction.REGISTERED, registered.schema_id),
        ]
    )
    assert recorded.id_map.target(new.schema_id) == registered.schema_id
    assert recorded.id_map.target(known.schema_id) == v1_id
    counts = [
        p["schema_counts"]["values"]
        for path in (tmp_path / "runs" / run_id).glob("*.json")
        if json.loads(path.read_text()).get("step") == "verify"
        for t in json.loads(path.read_text())["topics"].values()
        for p in t["partitions"]
    ]
    assert sum(c["translated"] for c in counts) == 5 and all(c["unchanged"] == 0 for c in counts)

    # The failback's per-record proof: the same records on the source with one id swapped for another valid one.
    plan = MigrationPlan.read(tmp_path / "runs" / run_id / "plan.json")
    moved = plan.topic(target_topic)
    (partition,) = [p for p in moved.partitions if p.partition == 0]
    copied = read_partition(clusters.source, topic, 0, start=appended[0])
    planted = f"{topic}.planted"
    create_topic(clusters.source, planted, 1)
    p = producer(clusters.source)
    wrong_at = next(i for i, r in enumerate(copied) if int.from_bytes(r["value"][1:5], "big") == registered.schema_id)
    for i, r in enumerate(copied):
        value = r["value"] if i != wrong_at else r["value"][:1] + v1_id.to_bytes(4, "big") + r["value"][5:]
        send(p, planted, 0, r["key"], value, timestamp=r["timestamp"])
    p.flush(30)
    pair = ClusterPair(
        Endpoint("source", {"bootstrap.servers": clusters.target}),
        Endpoint("target", {"bootstrap.servers": clusters.source}),
    )
    piece = PartitionSlice(target_topic, planted, 0, partition.start, partition.end, 0, id_map=moved.id_map)
    found = verify_partition(piece, pair)
    assert not found.match and found.first_target_offset == wrong_at
    assert "the target's schema id is not the mapped one" in (found.first_difference or "")
    honest = PartitionSlice(target_topic, topic, 0, partition.start, partition.end, appended[0], id_map=moved.id_map)
    assert verify_partition(honest, pair).match
    ledger.engine.dispose()


def test_a_failback_after_kept_ids_refuses_a_version_the_source_lacks_and_translates_it_when_asked(
    clusters: Clusters,
    registries: Registries,
    registry_factory,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    unique: str,
) -> None:
    """A cutover with --schema-ids keep (the source registry moved whole to the target's, ids kept); on the target
    afterwards records of the moved version and of a version registered on the target only. A failback without
    --schema-ids is refused (nothing recorded); with keep, its census finds the new version's id, which the source
    registry does not hold: refused, one line naming subject, version and id, nothing written to the source. With
    translate (the way out), the new version is registered on the source and its records rewritten, proven; the
    records of the moved version go back with their own id."""
    from harness.registry.whole import move_whole

    topic, address = f"kb{unique}.orders", f"kb{unique}-shop.Address"
    source = client(registries.source)
    create_topic(clusters.source, topic, 2)
    source.register_schema(address, Schema(json.dumps(ADDRESS), "AVRO"))
    reference = SchemaReference("shop.Address", address, 1)
    source.register_schema(f"{topic}-value", Schema(json.dumps(ORDER), "AVRO", [reference]))
    v1 = source.get_latest_version(f"{topic}-value")
    _produce(clusters.source, source, topic, v1.schema, [{"id": i, "ship_to": {"city": f"c{i}"}} for i in range(6)])
    (moved,) = registry_factory("kept-ids")
    move_whole(registries.source, moved.ccompat_url)

    ledger_url = f"sqlite:///{tmp_path / 'ledger.db'}"
    clusters_args = ["--source", clusters.source, "--target", clusters.target, "--ledger", ledger_url]
    registry_args = ["--source-registry", registries.source, "--target-registry", moved.ccompat_url]
    cutover = kafka_migrate("cutover", *clusters_args, "--include", f"kb{unique}\\..*", "--quiet-seconds", "1",
                            "--schema-ids", "keep", *registry_args, state_dir=tmp_path)  # fmt: skip
    assert cutover.returncode == 0, cutover.stdout + cutover.stderr
    ledger = Ledger.open(ledger_url, create=False)
    (row,) = ledger.cutovers()
    cutover_id = row["cutover_id"]
    report = json.loads((tmp_path / "reports" / cutover_id / "report.json").read_text())
    ends = {p["partition"]: p for p in report["ends_at_cutover"][0]["partitions"]}

    # Life on the target: records of the moved version, then of one the target registry alone gives an id.
    target = client(moved.ccompat_url)
    _produce(clusters.target, target, topic, v1.schema, [{"id": i, "ship_to": {"city": "t"}} for i in (20, 21)])
    target.register_schema(f"{topic}-value", Schema(json.dumps(ORDER_V2), "AVRO", [reference]))
    again = client(moved.ccompat_url)
    new = again.get_latest_version(f"{topic}-value")
    orders = [{"id": i, "ship_to": {"city": "n"}, "note": "after"} for i in (22, 23, 24)]
    _produce(clusters.target, again, topic, new.schema, orders)
    appended = {q: ends[q]["source_end"] for q in (0, 1)}

    def source_unchanged() -> None:
        assert all(read_partition(clusters.source, topic, q, start=appended[q]) == [] for q in (0, 1))
        assert client(registries.source).get_versions(f"{topic}-value") == [1]

    back = ["failback", "--cutover", cutover_id, *clusters_args, "--quiet-seconds", "1"]
    unproven = kafka_migrate(*back, state_dir=tmp_path)
    assert unproven.returncode == 2, unproven.stdout + unproven.stderr
    assert "The runs before the cutover kept the schema ids of 1 topic" in unproven.stderr
    assert "Fail back with --schema-ids keep" in unproven.stderr
    assert ledger.cutover(cutover_id)["failback_status"] is None  # type: ignore[index]  # nothing recorded

    kept = kafka_migrate(*back, "--schema-ids", "keep", *registry_args, state_dir=tmp_path)
    assert kept.returncode == 2, kept.stdout + kept.stderr
    (line,) = [x for x in kept.stderr.splitlines() if x.startswith("error:")]
    assert line.startswith(
        f"error: Failback with --schema-ids keep: schema id {new.schema_id}, subject '{topic}-value' version 2 on the "
        f"target registry {moved.ccompat_url} (3 keys and values to bring back name it, the first the value of "
        f"{topic}["
    )
    assert f"is not on the source registry {registries.source};" in line
    assert "or fail back with --schema-ids translate" in line
    source_unchanged()
    # Meanwhile the source registry numbers on: its next id (the one the target gave the new version, as both
    # number on from the ids the import moved) goes to another schema.
    source.register_schema(f"kb{unique}.other-value", Schema(json.dumps({**ADDRESS, "name": "Other"}), "AVRO"))

    done = kafka_migrate(*back, "--schema-ids", "translate", *registry_args, state_dir=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Failback of cutover {cutover_id} COMPLETED" in done.stdout
    after = {q: ends[q]["target_end"] for q in (0, 1)}
    on_target = _decoded(clusters.target, topic, moved.ccompat_url, after)
    assert _decoded(clusters.source, topic, registries.source, appended) == on_target and len(on_target) == 5
    registered = client(registries.source).get_version(f"{topic}-value", 2)
    assert registered.schema_id != new.schema_id  # the source registry's own id for the new version
    headers = {
        r["key"]: int.from_bytes(r["value"][1:5], "big")
        for q in (0, 1)
        for r in read_partition(clusters.source, topic, q, start=appended[q])
    }
    assert headers == {b"k20": v1.schema_id, b"k21": v1.schema_id, b"k22": registered.schema_id,
                       b"k23": registered.schema_id, b"k24": registered.schema_id}  # fmt: skip
    recorded = ledger.run_schema_ids(ledger.cutover(cutover_id)["failback_run_id"])  # type: ignore[index]
    assert recorded is not None and recorded.id_map.target(v1.schema_id) == v1.schema_id
    assert recorded.id_map.target(new.schema_id) == registered.schema_id
    ledger.engine.dispose()
