"""``kafka-migrate run --schema-ids translate`` on real brokers and a real registry per cluster (Apicurio).

One topic's keys are JSON Schema and its values Avro with a reference to another subject's named type, in two
versions; among its records a tombstone and records without a header. The module makes one dry run and one run
(Spark starts once), then each test checks one aspect: the listing, the registered and proven subjects, the id
map in the ledger, the counts per partition, and that confluent-kafka's deserializers reading the target with the
target's registry get what they get from the source with the source's. Then the refusals (exit 2, nothing
written), and the per-record proof finding a planted wrong id on the target. Topics of their own test the census of
the records: an id the source registry does not know refused before anything is written (or let through), the
census as an application of its own, and RecordNameStrategy subjects found behind the values' ids.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness.data.read import read_partition
from harness.data.seed import create_topic, producer, send
from kafka_migration.ledger import Ledger
from kafka_migration.model.config import ClusterPair, Endpoint
from kafka_migration.model.plan import MigrationPlan, PartitionSlice
from kafka_migration.model.schema_runs import SchemaRun, VersionAction
from kafka_migration.run.verify import verify_partition
from tests.commands import kafka_migrate_run as kafka_migrate
from tests.conftest import Clusters, Registries
from tests.leaks import leaks

pytestmark = [pytest.mark.integration, pytest.mark.spark]

TOPICS = {"subject.name.strategy.type": "TOPIC"}  # Apicurio needs it spelled so (tests/harness/test_registry.py)
TIMEOUT = 20.0  # seconds per registry request: Apicurio can be slow to answer its first ones
ADDRESS = {"type": "record", "name": "Address", "namespace": "shop", "fields": [{"name": "city", "type": "string"}]}
ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "ship_to", "type": "shop.Address"}],
}
ORDER_V2 = {**ORDER, "fields": [*ORDER["fields"], {"name": "note", "type": "string", "default": ""}]}
KEY = {"type": "object", "properties": {"customer": {"type": "string"}}, "required": ["customer"]}


def client(url: str) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": url, "timeout": TIMEOUT})


@dataclass(frozen=True)
class Moved:
    topic: str  # on the source
    target_topic: str
    address_subject: str
    clusters: Clusters
    registries: Registries
    state_dir: Path
    dry: subprocess.CompletedProcess[str]
    run: subprocess.CompletedProcess[str]
    target_subjects_before: frozenset[str]
    run_id: str
    args: tuple[str, ...]
    after_dry: tuple[frozenset[str], bool]  # the target registry's subjects, and whether the target topic existed

    def plan(self) -> MigrationPlan:
        return MigrationPlan.read(self.state_dir / "runs" / self.run_id / "plan.json")


def _seed(clusters: Clusters, registries: Registries, topic: str, address_subject: str) -> None:
    source = client(registries.source)
    create_topic(clusters.source, topic, 2)
    source.register_schema(address_subject, Schema(json.dumps(ADDRESS), "AVRO"))
    reference = SchemaReference("shop.Address", address_subject, 1)
    source.register_schema(f"{topic}-value", Schema(json.dumps(ORDER), "AVRO", [reference]))
    # The target's ids run ahead of the source's: a copy that kept the source's ids would name other schemas.
    target = client(registries.target)
    for i in range(3):
        target.register_schema(f"{topic}-filler{i}", Schema(json.dumps({**ADDRESS, "name": f"Filler{i}"}), "AVRO"))
    keys = JSONSerializer(json.dumps(KEY), source, conf=TOPICS)
    key_of = SerializationContext(topic, MessageField.KEY)
    value_of = SerializationContext(topic, MessageField.VALUE)
    conf = {**TOPICS, "auto.register.schemas": False, "use.latest.version": True}
    v1 = AvroSerializer(source, source.get_latest_version(f"{topic}-value").schema, conf=conf)
    p = producer(clusters.source)
    for i in range(6):
        order = {"id": i, "ship_to": {"city": f"city-{i}"}}
        send(p, topic, i % 2, keys({"customer": f"c{i}"}, key_of), v1(order, value_of))
    send(p, topic, 1, keys({"customer": "gone"}, key_of), None)  # a tombstone
    send(p, topic, 1, b"raw-key", b"plain bytes, no header")  # a record without a header
    send(p, topic, 0, None, v1({"id": 99, "ship_to": {"city": "keyless"}}, value_of))
    p.flush(30)
    source.register_schema(f"{topic}-value", Schema(json.dumps(ORDER_V2), "AVRO", [reference]))  # evolved
    again = client(registries.source)
    v2 = AvroSerializer(again, again.get_latest_version(f"{topic}-value").schema, conf=conf)
    for i in range(6, 9):
        send(
            p,
            topic,
            0,
            keys({"customer": f"c{i}"}, key_of),
            v2({"id": i, "ship_to": {"city": "x"}, "note": "v2"}, value_of),
        )
    p.flush(30)


@pytest.fixture(scope="module")
def moved(clusters: Clusters, registries: Registries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Moved]:
    import uuid

    u = uuid.uuid4().hex[:8]
    topic, address_subject = f"sch{u}.orders", f"sch{u}-shop.Address"
    _seed(clusters, registries, topic, address_subject)
    state_dir = tmp_path_factory.mktemp("schema-ids")
    before = frozenset(client(registries.target).get_subjects())
    args = (
        "--source", clusters.source, "--target", clusters.target, "--include", f"sch{u}\\..*",
        "--rename", "moved.{topic}", "--schema-ids", "translate",
        "--source-registry", registries.source, "--target-registry", registries.target,
    )  # fmt: skip
    dry = kafka_migrate(*args, "--dry-run", state_dir=state_dir / "dry")
    after_dry = (frozenset(client(registries.target).get_subjects()), f"moved.{topic}" in _topics(clusters.target))
    run = kafka_migrate(*args, state_dir=state_dir)
    (directory,) = [d for d in (state_dir / "runs").iterdir() if (d / "plan.json").exists()]
    yield Moved(
        topic,
        f"moved.{topic}",
        address_subject,
        clusters,
        registries,
        state_dir,
        dry,
        run,
        before,
        directory.name,
        args,
        after_dry,
    )


def test_the_dry_run_lists_the_versions_to_register_and_writes_nothing(moved: Moved) -> None:
    assert moved.dry.returncode == 0, moved.dry.stderr
    out = moved.dry.stdout
    assert "Schemas (translate ids" in out and "4 subject versions (4 to register)" in out, out
    assert moved.after_dry == (moved.target_subjects_before, False)  # no subject registered, no topic created
    lines = [line.split("(")[0].split() for line in out.splitlines() if line.startswith("  to register")]
    assert lines == [
        ["to", "register", f"{moved.target_topic}-key", "v1", "<-", f"{moved.topic}-key"],
        ["to", "register", moved.address_subject, "v1"],
        ["to", "register", f"{moved.target_topic}-value", "v1", "<-", f"{moved.topic}-value"],
        ["to", "register", f"{moved.target_topic}-value", "v2", "<-", f"{moved.topic}-value"],
    ]


def test_the_run_registers_references_first_proves_every_pair_and_records_the_map(moved: Moved) -> None:
    assert moved.run.returncode == 0, moved.run.stdout + moved.run.stderr
    assert "verified" in moved.run.stdout
    ledger = Ledger.open(f"sqlite:///{moved.state_dir / 'ledger.db'}", create=False)
    recorded = ledger.run_schema_ids(moved.run_id)
    ledger.engine.dispose()
    assert recorded is not None and recorded == SchemaRun.from_dict(moved.plan().schemas or {})
    assert [(v.target_subject, v.version, v.action) for v in recorded.versions] == [
        (f"{moved.target_topic}-key", 1, VersionAction.REGISTERED),
        (moved.address_subject, 1, VersionAction.REGISTERED),
        (f"{moved.target_topic}-value", 1, VersionAction.REGISTERED),
        (f"{moved.target_topic}-value", 2, VersionAction.REGISTERED),
    ]
    source, target = client(moved.registries.source), client(moved.registries.target)
    for v in recorded.versions:
        assert source.get_version(v.source_subject, v.version).schema_id == v.source_id
        held = target.get_version(v.target_subject, v.target_version)
        assert held.schema_id == v.target_id and v.fingerprint and v.fingerprint.startswith("sha256:")
    assert any(v.source_id != v.target_id for v in recorded.versions)  # a translation, not the same ids
    refs = target.get_version(f"{moved.target_topic}-value", 1).schema.references
    assert [(r.name, r.subject, r.version) for r in refs] == [("shop.Address", moved.address_subject, 1)]
    assert "secret" not in json.dumps(moved.plan().schemas)
    registered = {v.target_subject for v in recorded.versions}
    new = set(target.get_subjects()) - moved.target_subjects_before
    assert registered <= new and all(s in registered or s.startswith("clash") for s in new)  # clash: a test below
    topic = moved.plan().topic(moved.topic)
    own = {v.source_id for v in recorded.versions if v.target_subject.startswith(moved.target_topic)}
    assert topic.id_map is not None and set(topic.id_map) == own  # the reference's id is in no record's header
    assert all(topic.id_map.get(i) == recorded.id_map.get(i) for i in own) and len(recorded.id_map) == 4


def _verify_rows(moved: Moved) -> list[dict[str, Any]]:
    rows = []
    for path in (moved.state_dir / "runs" / moved.run_id).glob("*.json"):
        data = json.loads(path.read_text())
        if data.get("step") == "verify":
            rows += [p for t in data["topics"].values() for p in t["partitions"]]
    return rows


def test_the_verification_counts_translated_keys_and_values_per_partition(moved: Moved) -> None:
    assert moved.run.returncode == 0, moved.run.stderr
    counts = {r["partition"]: r["schema_counts"] for r in _verify_rows(moved)}
    assert counts == {
        0: {
            "topic": moved.topic,
            "partition": 0,
            "keys": {"translated": 6, "unchanged": 0, "without_header": 1},
            "values": {"translated": 7, "unchanged": 0, "without_header": 0},
        },
        1: {
            "topic": moved.topic,
            "partition": 1,
            "keys": {"translated": 4, "unchanged": 0, "without_header": 1},
            "values": {"translated": 3, "unchanged": 0, "without_header": 2},
        },
    }
    assert all(r["match"] and r["source_checksum"] == r["target_checksum"] for r in _verify_rows(moved))
    (report,) = (moved.state_dir / "reports").glob(f"{moved.run_id}/*.json")  # from the ledger: segments and plan
    both = {"translated": 10, "unchanged": 0, "without_header": 2}
    assert json.loads(report.read_text())["schemas"]["totals"] == {"keys": both, "values": both}


def test_confluent_deserializers_read_the_target_with_its_registry_as_the_source_with_its_own(moved: Moved) -> None:
    assert moved.run.returncode == 0, moved.run.stderr

    def decoded(bootstrap: str, topic: str, url: str) -> list[tuple[Any, Any, bytes | None, bytes | None]]:
        registry = client(url)
        avro = AvroDeserializer(registry, conf=TOPICS)
        keys = JSONDeserializer(None, schema_registry_client=registry, conf=TOPICS)
        out = []
        for partition in (0, 1):
            for r in read_partition(bootstrap, topic, partition):
                key, value = r["key"], r["value"]
                framed_key = key is not None and key[:1] == b"\x00"
                framed_value = value is not None and value[:1] == b"\x00"
                out.append(
                    (
                        keys(key, SerializationContext(topic, MessageField.KEY)) if framed_key else key,
                        avro(value, SerializationContext(topic, MessageField.VALUE)) if framed_value else value,
                        None if not framed_key else key[1:5],
                        None if not framed_value else value[1:5],
                    )
                )
        return out

    source = decoded(moved.clusters.source, moved.topic, moved.registries.source)
    target = decoded(moved.clusters.target, moved.target_topic, moved.registries.target)
    assert [(k, v) for k, v, _, _ in target] == [(k, v) for k, v, _, _ in source]
    assert len(source) >= 12 and ({"customer": "gone"}, None, source[-2][2], None) in source
    assert {"id": 6, "ship_to": {"city": "x"}, "note": "v2"} in [v for _, v, _, _ in target]
    assert [ids[2:] for ids in target] != [ids[2:] for ids in source]  # the headers name the target's ids


def test_a_planted_wrong_id_on_the_target_is_found_naming_topic_partition_and_offset(moved: Moved) -> None:
    """The target partition copied again by hand, one value's id replaced by a valid id of another schema (the
    value's first version instead of its second): the verification's proof must refuse it."""
    assert moved.run.returncode == 0, moved.run.stderr
    plan = moved.plan()
    topic = plan.topic(moved.topic)
    recorded = SchemaRun.from_dict(plan.schemas or {})
    value_ids = {v.version: v.target_id for v in recorded.versions if v.target_subject.endswith("-value")}
    planted = f"{moved.target_topic}.planted"
    create_topic(moved.clusters.target, planted, 1)
    records = read_partition(moved.clusters.target, moved.target_topic, 0)
    wrong_at = next(i for i, r in enumerate(records) if r["value"][1:5] == value_ids[2].to_bytes(4, "big"))
    p = producer(moved.clusters.target)
    for i, r in enumerate(records):
        value = r["value"]
        if i == wrong_at:
            value = value[:1] + value_ids[1].to_bytes(4, "big") + value[5:]
        send(p, planted, 0, r["key"], value, headers=r["headers"] or None, timestamp=r["timestamp"])
    p.flush(30)
    (partition,) = [p for p in topic.partitions if p.partition == 0]
    piece = PartitionSlice(moved.topic, planted, 0, partition.start, partition.end, 0, id_map=topic.id_map)
    pair = ClusterPair(
        Endpoint("source", {"bootstrap.servers": moved.clusters.source}),
        Endpoint("target", {"bootstrap.servers": moved.clusters.target}),
    )
    found = verify_partition(piece, pair)
    assert not found.match and found.source_checksum != found.target_checksum
    assert found.first_target_offset == wrong_at and found.first_source_offset == records[wrong_at]["offset"]
    assert found.first_difference == (
        f"value: the target's schema id is not the mapped one (source id "
        f"{next(v.source_id for v in recorded.versions if v.target_id == value_ids[2])}, expected {value_ids[2]}, "
        f"target id {value_ids[1]})"
    )
    honest = PartitionSlice(moved.topic, moved.target_topic, 0, partition.start, partition.end, 0, id_map=topic.id_map)
    assert verify_partition(honest, pair).match  # the same check passes the real copy


def _refused(moved: Moved, tmp_path: Path, rename: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return kafka_migrate(
        "--source", moved.clusters.source, "--target", moved.clusters.target,
        "--include", f"{moved.topic.split('.')[0]}\\..*", "--rename", rename,
        "--source-registry", moved.registries.source, "--target-registry", moved.registries.target,
        *extra, state_dir=tmp_path,
    )  # fmt: skip


def test_a_subject_conflict_is_refused_before_anything_is_written(moved: Moved, tmp_path: Path) -> None:
    target = client(moved.registries.target)
    rename = f"clash{moved.topic.split('.')[0]}.{{topic}}"
    clash = f"clash{moved.topic.split('.')[0]}.{moved.topic}-value"
    target.register_schema(clash, Schema(json.dumps({**ADDRESS, "name": "Other"}), "AVRO"))
    subjects = set(target.get_subjects())
    done = _refused(moved, tmp_path, rename, "--schema-ids", "translate")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"subject '{clash}' version 1: the target holds another schema" in done.stderr
    assert "nothing was written" in done.stderr and "--rename" in done.stderr
    assert set(target.get_subjects()) == subjects
    assert rename.format(topic=moved.topic) not in _target_topics(moved)


def test_keep_mode_is_refused_against_a_registry_that_cannot_keep_ids(moved: Moved, tmp_path: Path) -> None:
    target = client(moved.registries.target)
    subjects = set(target.get_subjects())
    rename = f"kept{moved.topic.split('.')[0]}.{{topic}}"
    done = _refused(moved, tmp_path, rename, "--schema-ids", "keep")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--schema-ids keep: the target registry" in done.stderr and "admin/export" in done.stderr
    assert f"subject '{moved.address_subject}' version 1: source id" in done.stderr
    assert set(target.get_subjects()) == subjects
    assert rename.format(topic=moved.topic) not in _target_topics(moved)


def _target_topics(moved: Moved) -> set[str]:
    return _topics(moved.clusters.target)


def _topics(bootstrap: str) -> set[str]:
    from confluent_kafka.admin import AdminClient

    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


def _http(method: str, url: str, body: bytes | None = None) -> tuple[int, bytes]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=body, method=method, headers={"Content-Type": "application/zip"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_keep_mode_proves_a_registry_moved_with_its_ids_and_copies_bytes(
    moved: Moved,
    registry_factory,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    """The source registry moved whole with Apicurio's export and import (the ids kept): keep mode registers
    nothing, proves every version the topic needs is there under the source's id, and copies the bytes."""
    (empty,) = registry_factory("kept-ids")
    root = moved.registries.source.removesuffix("/apis/ccompat/v7")
    status, archive = _http("GET", f"{root}/apis/registry/v3/admin/export")
    assert status == 200
    assert _http("POST", f"{empty.url}/apis/registry/v3/admin/import", archive)[0] == 204
    subjects = set(client(empty.ccompat_url).get_subjects())

    def keep(*rename: str) -> subprocess.CompletedProcess[str]:
        return kafka_migrate(
            "--source", moved.clusters.source, "--target", moved.clusters.target,
            "--include", f"{moved.topic.split('.')[0]}\\..*", *rename, "--schema-ids", "keep",
            "--source-registry", moved.registries.source, "--target-registry", empty.ccompat_url,
            state_dir=tmp_path,
        )  # fmt: skip

    renamed = keep("--rename", "kept.{topic}")  # renamed subjects: the moved registry has them under the old names
    assert renamed.returncode == 2, renamed.stdout + renamed.stderr
    assert f"subject 'kept.{moved.topic}-key' version 1: source id" in renamed.stderr
    assert "not on the target" in renamed.stderr
    assert f"kept.{moved.topic}" not in _target_topics(moved)

    done = keep()
    assert done.returncode == 0, done.stdout + done.stderr
    listed = re.search(r"(\d+) subject versions \((\d+) present\)", done.stdout)
    assert listed and listed[1] == listed[2] and int(listed[1]) >= 4 and "verified" in done.stdout, done.stdout
    assert set(client(empty.ccompat_url).get_subjects()) == subjects  # nothing registered
    for partition in (0, 1):
        source = read_partition(moved.clusters.source, moved.topic, partition)
        target = read_partition(moved.clusters.target, moved.topic, partition)
        assert [(r["key"], r["value"]) for r in target] == [(r["key"], r["value"]) for r in source]
    avro = AvroDeserializer(client(empty.ccompat_url), conf=TOPICS)
    last = read_partition(moved.clusters.target, moved.topic, 0)[-1]["value"]
    assert avro(last, SerializationContext(moved.topic, MessageField.VALUE)) == {
        "id": 8,
        "ship_to": {"city": "x"},
        "note": "v2",
    }


UNKNOWN_ID = 987_654  # an id no test registers: the source registry does not know it


def _translate(clusters: Clusters, registries: Registries, prefix: str, rename: str, state_dir: Path, *extra: str):  # type: ignore[no-untyped-def]
    return kafka_migrate(
        "--source", clusters.source, "--target", clusters.target, "--include", f"{prefix}\\..*",
        "--rename", rename, "--schema-ids", "translate",
        "--source-registry", registries.source, "--target-registry", registries.target,
        *extra, state_dir=state_dir,
    )  # fmt: skip


def _verify_rows_in(state_dir: Path) -> list[dict[str, Any]]:
    return [
        p
        for path in (state_dir / "runs").glob("*/*.json")
        if json.loads(path.read_text()).get("step") == "verify"
        for t in json.loads(path.read_text())["topics"].values()
        for p in t["partitions"]
    ]


def test_a_record_naming_an_id_the_source_registry_does_not_know_is_refused_before_anything_is_written(
    clusters: Clusters, registries: Registries, tmp_path: Path, unique: str
) -> None:
    """A key in the middle of a partition names an id the source registry does not know: the census finds it
    before anything is written (exit 2, naming topic, partition, offset and the way out; no subject registered,
    no topic created, no run opened), in the dry run too. With --unknown-schema-ids pass the record is copied
    unchanged and counted, the others translated. A census that skipped keys would let the run start and the copy
    refuse the record half way (exit 3)."""
    topic = f"unk{unique}.events"
    source = client(registries.source)
    create_topic(clusters.source, topic, 2)
    own = source.register_schema(f"{topic}-value", Schema(json.dumps(ADDRESS), "AVRO"))
    p = producer(clusters.source)
    for i in range(7):
        key = b"\x00" + UNKNOWN_ID.to_bytes(4, "big") + b"k" if i == 3 else f"k{i}".encode()
        send(p, topic, 0, key, b"\x00" + own.to_bytes(4, "big") + b"\x06abc")
    send(p, topic, 1, None, b"\x00" + own.to_bytes(4, "big") + b"\x06def")
    p.flush(30)
    target = client(registries.target)
    subjects = set(target.get_subjects())
    where = f"Source {topic}[0] offset 3: its key names schema id {UNKNOWN_ID}, which the source registry"
    dry = _translate(clusters, registries, f"unk{unique}", "moved.{topic}", tmp_path / "dry", "--dry-run")
    assert dry.returncode == 2 and where in dry.stderr, dry.stdout + dry.stderr
    done = _translate(clusters, registries, f"unk{unique}", "moved.{topic}", tmp_path / "refused")
    assert done.returncode == 2, done.stdout + done.stderr
    assert where in done.stderr and "nothing was written" in done.stderr, done.stderr
    assert (
        f"  - id {UNKNOWN_ID}: unknown to the source registry; 1 key or value, the first the key of {topic}[0] "
        "at offset 3" in done.stderr
    )
    assert "--unknown-schema-ids pass" in done.stderr
    assert f"moved.{topic}" not in _topics(clusters.target)  # no topic created, so no record written
    assert set(target.get_subjects()) == subjects  # no subject registered
    assert not list((tmp_path / "refused").glob("runs/*/plan.json"))  # no run opened
    assert not list((tmp_path / "refused").glob("runs/*/census*.json"))  # the census's files cleaned up

    passed = _translate(
        clusters, registries, f"unk{unique}", "passed.{topic}", tmp_path / "passed", "--unknown-schema-ids", "pass"
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert (
        f"unknown schema id {UNKNOWN_ID} passed unchanged (--unknown-schema-ids pass): 1 key or value, first the key "
        f"of {topic}[0] at offset 3" in passed.stdout
    ), passed.stdout
    rows = {r["partition"]: r["schema_counts"] for r in _verify_rows_in(tmp_path / "passed")}
    assert rows[0]["keys"] == {"translated": 0, "unchanged": 1, "without_header": 6}
    assert rows[0]["values"] == {"translated": 7, "unchanged": 0, "without_header": 0}
    assert rows[1]["values"] == {"translated": 1, "unchanged": 0, "without_header": 0}
    copied = read_partition(clusters.target, f"passed.{topic}", 0)
    assert copied[3]["key"] == b"\x00" + UNKNOWN_ID.to_bytes(4, "big") + b"k"  # as it was
    (plan,) = (tmp_path / "passed" / "runs").glob("*/plan.json")
    mapped = MigrationPlan.read(plan).topic(topic).id_map
    assert mapped is not None and set(mapped) == {own}
    assert {r["value"][:5] for r in copied} == {b"\x00" + mapped.target(own).to_bytes(4, "big")}  # translated


def test_a_census_application_of_its_own_finds_the_ids_of_keys_and_values(
    clusters: Clusters, registries: Registries, tmp_path: Path, unique: str
) -> None:
    """The census as a driver that cannot wait for its plan gets it (step census, spark_jobs/census_topics.py): a
    Spark application of its own reads the planned ranges and answers ids and first offsets."""
    from kafka_migration.model.config import ClusterConfig
    from kafka_migration.model.schemas import RecordPart
    from kafka_migration.spark.submit import SparkLauncher, SparkSettings

    topic = f"cen{unique}.events"
    create_topic(clusters.source, topic, 2)
    p = producer(clusters.source)
    for i in range(5):
        send(p, topic, 0, b"\x00" + (40 + i % 2).to_bytes(4, "big") + b"k", b"\x00" + (50).to_bytes(4, "big"))
    send(p, topic, 1, b"raw", None)
    p.flush(30)
    dry = kafka_migrate(
        "--source", clusters.source, "--target", clusters.target, "--include", f"cen{unique}\\..*", "--dry-run",
        state_dir=tmp_path,
    )  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    (planned,) = (tmp_path / "runs").glob("*/plan.json")
    directory = tmp_path / "census"
    directory.mkdir()
    found = SparkLauncher(SparkSettings(master="local[2]")).census(
        directory,
        MigrationPlan.read(planned),
        ClusterConfig.build("source", clusters.source),
        ClusterConfig.build("target", clusters.target),
    )
    assert [(s.partition, s.part, s.schema_id, s.offset, s.records) for s in found.sightings] == [
        (0, RecordPart.KEY, 40, 0, 3),
        (0, RecordPart.VALUE, 50, 0, 5),
        (0, RecordPart.KEY, 41, 1, 2),
    ]
    assert (found.records, found.complete) == (6, True) and list(directory.iterdir()) == []


EVENT_NS = "ev"  # the namespace prefix of the RecordNameStrategy records below
RECORDS = {"subject.name.strategy.type": "RECORD"}  # RecordNameStrategy: a record's subject is its full name


def test_record_name_strategy_subjects_are_listed_registered_translated_and_proven(
    clusters: Clusters, registries: Registries, tmp_path: Path, unique: str
) -> None:
    """A topic without any subject of its own whose values are two record types under RecordNameStrategy (one with a
    reference to a third subject): the dry run lists their subjects, the run registers them (the reference first),
    rewrites every value's id and proves each record, and confluent-kafka's deserializers read the target with its
    registry as the source with its own. A census that skipped values would find no subject, and the values would
    reach the target with the source's ids."""
    ns = f"{EVENT_NS}{unique}"
    place = {"type": "record", "name": "Place", "namespace": ns, "fields": [{"name": "city", "type": "string"}]}
    event = {
        "type": "record",
        "name": "Event",
        "namespace": ns,
        "fields": [{"name": "id", "type": "long"}, {"name": "where", "type": f"{ns}.Place"}],
    }
    ping = {"type": "record", "name": "Ping", "namespace": ns, "fields": [{"name": "n", "type": "int"}]}
    topic = f"rns{unique}.events"
    source = client(registries.source)
    create_topic(clusters.source, topic, 2)
    source.register_schema(f"{ns}.Place", Schema(json.dumps(place), "AVRO"))
    reference = SchemaReference(f"{ns}.Place", f"{ns}.Place", 1)
    source.register_schema(f"{ns}.Event", Schema(json.dumps(event), "AVRO", [reference]))
    source.register_schema(f"{ns}.Ping", Schema(json.dumps(ping), "AVRO"))
    conf = {"auto.register.schemas": False, "use.latest.version": True, **RECORDS}
    as_event = AvroSerializer(source, source.get_latest_version(f"{ns}.Event").schema, conf=conf)
    as_ping = AvroSerializer(source, json.dumps(ping), conf=conf)
    context = SerializationContext(topic, MessageField.VALUE)
    p = producer(clusters.source)
    for i in range(6):
        value = as_event({"id": i, "where": {"city": f"c{i}"}}, context) if i % 3 else as_ping({"n": i}, context)
        send(p, topic, i % 2, f"k{i}".encode(), value)
    p.flush(30)
    target = client(registries.target)
    for i in range(2):  # the target's ids run ahead of the source's
        target.register_schema(f"{ns}-filler{i}", Schema(json.dumps({**ping, "name": f"Filler{i}"}), "AVRO"))

    dry = _translate(clusters, registries, f"rns{unique}", "moved.{topic}", tmp_path / "dry", "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    listed = [line.split("(")[0].split() for line in dry.stdout.splitlines() if line.startswith("  to register")]
    assert listed == [
        ["to", "register", f"{ns}.Place", "v1"],
        ["to", "register", f"{ns}.Event", "v1"],
        ["to", "register", f"{ns}.Ping", "v1"],
    ], dry.stdout
    assert f"{ns}.Event v1 (AVRO" in dry.stdout and dry.stdout.count("found in the records") == 2
    assert f"subjects found behind ids in the records: {ns}.Event, {ns}.Ping" in dry.stdout
    assert f"{ns}.Event" not in target.get_subjects()

    done = _translate(clusters, registries, f"rns{unique}", "moved.{topic}", tmp_path / "run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified" in done.stdout
    assert {f"{ns}.Place", f"{ns}.Event", f"{ns}.Ping"} <= set(target.get_subjects())
    refs = target.get_version(f"{ns}.Event", 1).schema.references
    assert [(r.name, r.subject, r.version) for r in refs] == [(f"{ns}.Place", f"{ns}.Place", 1)]
    rows = {r["partition"]: r["schema_counts"]["values"] for r in _verify_rows_in(tmp_path / "run")}
    assert rows == {p: {"translated": 3, "unchanged": 0, "without_header": 0} for p in (0, 1)}
    assert all(r["match"] for r in _verify_rows_in(tmp_path / "run"))

    def decoded(bootstrap: str, name: str, url: str) -> list[tuple[Any, bytes]]:
        avro = AvroDeserializer(client(url), conf=RECORDS)
        return [
            (avro(r["value"], SerializationContext(name, MessageField.VALUE)), r["value"][1:5])
            for partition in (0, 1)
            for r in read_partition(bootstrap, name, partition)
        ]

    mine = decoded(clusters.source, topic, registries.source)
    theirs = decoded(clusters.target, f"moved.{topic}", registries.target)
    assert [v for v, _ in theirs] == [v for v, _ in mine] and len(mine) == 6
    assert all(a != b for (_, a), (_, b) in zip(mine, theirs, strict=True))  # every value names the target's id


ORDER_V3 = {**ORDER_V2, "fields": [*ORDER_V2["fields"], {"name": "gift", "type": "boolean", "default": False}]}


def test_a_nightly_run_registers_the_version_added_since_and_copies_its_records(moved: Moved, tmp_path: Path) -> None:
    """The value schema evolves on the source after the first run, and records use the new version; the next run
    finds the earlier versions present, registers the new one before copying those records, and translates
    them. Its registries' credentials (basic auth, in the settings files) appear nowhere it writes."""
    assert moved.run.returncode == 0, moved.run.stderr
    source = client(moved.registries.source)
    reference = SchemaReference("shop.Address", moved.address_subject, 1)
    source.register_schema(f"{moved.topic}-value", Schema(json.dumps(ORDER_V3), "AVRO", [reference]))
    conf = {**TOPICS, "auto.register.schemas": False, "use.latest.version": True}
    v3 = AvroSerializer(source, source.get_latest_version(f"{moved.topic}-value").schema, conf=conf)
    p = producer(moved.clusters.source)
    for i in (100, 101):
        order = {"id": i, "ship_to": {"city": "y"}, "note": "", "gift": True}
        send(p, moved.topic, 1, None, v3(order, SerializationContext(moved.topic, MessageField.VALUE)))
    p.flush(30)
    secrets = {"source": "src-pw-8f3k2", "target": "tgt-pw-x9q7w"}
    for role, secret in secrets.items():
        (tmp_path / f"{role}.json").write_text(json.dumps({"basic.auth.user.info": f"migrator:{secret}"}))
    done = kafka_migrate(
        *moved.args,
        "--source-registry-config", str(tmp_path / "source.json"),
        "--target-registry-config", str(tmp_path / "target.json"),
        state_dir=moved.state_dir,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 subject versions (4 present, 1 registered)" in done.stdout, done.stdout
    run_id = next(d.name for d in (moved.state_dir / "runs").iterdir() if d.name != moved.run_id)
    ledger = Ledger.open(f"sqlite:///{moved.state_dir / 'ledger.db'}", create=False)
    recorded = ledger.run_schema_ids(run_id)
    ledger.engine.dispose()
    assert recorded is not None
    assert [(v.target_subject, v.version) for v in recorded.versions if v.action is VersionAction.REGISTERED] == [
        (f"{moved.target_topic}-value", 3)
    ]
    target = read_partition(moved.clusters.target, moved.target_topic, 1)[-2:]
    avro = AvroDeserializer(client(moved.registries.target), conf=TOPICS)
    context = SerializationContext(moved.target_topic, MessageField.VALUE)
    assert [avro(r["value"], context)["id"] for r in target] == [100, 101]
    new = next(v for v in recorded.versions if v.version == 3)
    assert {r["value"][1:5] for r in target} == {new.target_id.to_bytes(4, "big")}  # type: ignore[union-attr]
    written = {str(f): f.read_bytes() for f in moved.state_dir.rglob("*") if f.is_file()}
    assert leaks(secrets, {"stdout": done.stdout, "stderr": done.stderr, **written}) == []


def test_a_run_without_schema_ids_after_translated_runs_is_refused(moved: Moved) -> None:
    """The same topics, the same ledger, but --schema-ids forgotten: the target would get the source's ids after
    translated ones. Refused before anything is written."""
    assert moved.run.returncode == 0, moved.run.stderr
    args = [a for a in moved.args if a not in ("--schema-ids", "translate")]
    args = [a for i, a in enumerate(args) if not (a.endswith("-registry") or args[i - 1].endswith("-registry"))]
    runs = set((moved.state_dir / "runs").iterdir())
    done = kafka_migrate(*args, state_dir=moved.state_dir)
    assert done.returncode == 2, done.stdout + done.stderr
    line = f"{moved.topic} -> {moved.target_topic}: run "  # the first run, or the nightly one if it ran before
    assert line in done.stderr and "translated its schema ids" in done.stderr, done.stderr
    assert "(--schema-ids off) would write the source's ids after them" in done.stderr
    assert set((moved.state_dir / "runs").iterdir()) == runs  # no plan written


def test_the_dry_run_lists_each_subjects_compatibility_on_both_registries(
    clusters: Clusters, registries: Registries, tmp_path: Path, unique: str
) -> None:
    """The source subject has a level of its own, the target subject another; the reference's subject has none on
    either side (the registries' global levels apply). Read from both registries, listed per subject; the plan
    file keeps them."""
    topic, address = f"compat{unique}.orders", f"compat{unique}-shop.Address"
    source, target = client(registries.source), client(registries.target)
    create_topic(clusters.source, topic, 1)
    source.register_schema(address, Schema(json.dumps(ADDRESS), "AVRO"))
    reference = SchemaReference("shop.Address", address, 1)
    source.register_schema(f"{topic}-value", Schema(json.dumps(ORDER), "AVRO", [reference]))
    source.set_compatibility(f"{topic}-value", "FULL")
    target.set_compatibility(f"c.{topic}-value", "NONE")  # set before the subject exists there
    done = kafka_migrate(
        "--source", clusters.source, "--target", clusters.target, "--include", f"compat{unique}\\..*",
        "--rename", "c.{topic}", "--schema-ids", "translate", "--dry-run",
        "--source-registry", registries.source, "--target-registry", registries.target,
        state_dir=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    source_global, target_global = source.get_compatibility(), target.get_compatibility()
    listed = done.stdout.split("Compatibility of each subject:\n", 1)[1].splitlines()[:2]
    width = len(f"c.{topic}-value")
    # The reference's subject has no level of its own: a subject the target lacks gets the global one (404 on
    # the subject, marked so); for one it holds, Apicurio answers the level in force without saying whence.
    assert listed[0].startswith(f"  {address:<{width}}  source {source_global}"), done.stdout
    assert listed[0].endswith(f"target {target_global} (global)"), done.stdout
    assert listed[1] == (
        f"  c.{topic}-value  source FULL, target NONE: they differ, the target may refuse a version the source took"
    ), done.stdout
    (plan,) = (tmp_path / "runs").glob("*/plan.json")
    levels = SchemaRun.from_dict(MigrationPlan.read(plan).schemas or {}).compatibility
    assert [(c.target_subject, c.source, c.target) for c in levels] == [
        (address, source_global, target_global),
        (f"c.{topic}-value", "FULL", "NONE"),
    ]
