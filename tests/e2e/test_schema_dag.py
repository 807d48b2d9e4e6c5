"""Schema ids through Airflow: Params ``schema_ids`` and ``unknown_schema_ids``, the registries' connections
(``schema_registry_source`` / ``schema_registry_target``), real DAG runs (dag.test, spark-submit) on two brokers
and a real registry per cluster (Apicurio).

The migration DAG translates a topic's Avro values; the nightly DAG, its schema_ids default from airflow.cfg
(``nightly_schema_ids``), then registers the version the source added since and translates its records. The
registries' basic-auth passwords, planted in the connections, are searched for in the task output and logs, the
process arguments sampled while the runs go, the Airflow metadata DB (XCom, rendered fields), the run files and
the ledger: found nowhere. A run naming a registry that does not answer is refused by its plan task, one line,
nothing written.

The census of the records in the plan task, as a Spark application of its own (the budget the plan task reads
itself set to 0, ``KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS``): a key in the middle of a partition naming an id the
source registry does not know refuses the run in the plan task, naming topic, partition and offset, with no topic
created, no subject registered and no run opened (without the census the plan would pass and the copy fail); a
topic whose values are RecordNameStrategy record types has their subjects registered and every value translated.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness.data.read import read_partition
from harness.data.seed import create_topic, producer, send
from tests.conftest import Clusters, Registries
from tests.e2e.test_secrets import ArgsSampler, _files, _tables, dag_run_places
from tests.leaks import leaks

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

REPO = Path(__file__).resolve().parents[2]
TOPICS = {"subject.name.strategy.type": "TOPIC"}  # Apicurio needs it spelled so (tests/harness/test_registry.py)
SECRETS = {"source registry password": "src-reg-pw-4k8q2z", "target registry password": "tgt-reg-pw-7m1x9w"}


def order(unique: str) -> dict[str, Any]:
    """The test's own Order schema: a registry keeps one id per content, so a schema another test registered on the
    shared target registry would come back under its old id, which may equal the source's."""
    fields = [{"name": "id", "type": "long"}]
    return {"type": "record", "name": "Order", "namespace": f"shop.t{unique}", "fields": fields}


def order_v2(unique: str) -> dict[str, Any]:
    v1 = order(unique)
    return {**v1, "fields": [*v1["fields"], {"name": "note", "type": "string", "default": ""}]}


def client(url: str) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": url, "timeout": 20.0})


@pytest.fixture
def registry_connections(registries: Registries, kafka_connections, monkeypatch: pytest.MonkeyPatch) -> Registries:  # type: ignore[no-untyped-def]
    """Both clusters and both registries as Airflow connections, each registry with a basic-auth password (Apicurio
    here checks none)."""
    for role, url in (("source", registries.source), ("target", registries.target)):
        conn = {"conn_type": "http", "host": url, "login": "migrator", "password": SECRETS[f"{role} registry password"]}
        monkeypatch.setenv(f"AIRFLOW_CONN_SCHEMA_REGISTRY_{role.upper()}", json.dumps(conn))
    return registries


def _dag(dag_id: str) -> Any:
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(REPO / "dags"))
    assert not bag.import_errors, bag.import_errors
    return bag.get_dag(dag_id)


def _send(clusters: Clusters, registry: SchemaRegistryClient, topic: str, schema: dict[str, Any], ids: range) -> None:
    conf = {**TOPICS, "auto.register.schemas": False, "use.latest.version": True}
    serialize = AvroSerializer(registry, json.dumps(schema), conf=conf)
    p = producer(clusters.source)
    for i in ids:
        value = {"id": i, "note": "v2"} if len(schema["fields"]) == 2 else {"id": i}
        send(p, topic, i % 2, f"k{i}".encode(), serialize(value, SerializationContext(topic, MessageField.VALUE)))
    p.flush(30)


def _decoded(bootstrap: str, topic: str, url: str) -> list[tuple[bytes, Any]]:
    avro = AvroDeserializer(client(url), conf=TOPICS)
    context = SerializationContext(topic, MessageField.VALUE)
    return [(r["key"], avro(r["value"], context)) for p in (0, 1) for r in read_partition(bootstrap, topic, p)]


@pytest.fixture
def state(airflow_home: Path) -> Iterator[Path]:
    from kafka_migration.airflow.settings import task_state_dir

    yield task_state_dir()


def test_dags_translate_schema_ids_and_keep_the_registries_secrets_out_of_everything(  # type: ignore[no-untyped-def]
    clusters: Clusters,
    registry_connections: Registries,
    state: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    unique: str,
) -> None:
    from kafka_migration.airflow.hooks import LedgerHook
    from kafka_migration.model.schema_runs import VersionAction

    registries = registry_connections
    topic, target_topic = f"schdag{unique}.orders", f"dag.schdag{unique}.orders"
    order_1, order_2 = order(unique), order_v2(unique)
    source = client(registries.source)
    create_topic(clusters.source, topic, 2)
    first_id = source.register_schema(f"{topic}-value", Schema(json.dumps(order_1), "AVRO"))
    target = client(registries.target)
    # The target's ids run ahead of the source's, whatever other tests registered on either registry before this
    # one (the registries are shared): kept ids would name other schemas, and each translated id differs.
    filler, i = 0, 0
    while i < 3 or filler <= first_id:
        schema = Schema(json.dumps({**order_1, "name": f"Filler{i}"}), "AVRO")
        filler = target.register_schema(f"{topic}-filler{i}", schema)
        i += 1
    _send(clusters, source, topic, order_1, range(10))
    conf = {"include": f"schdag{unique}\\..*", "rename": "dag.{topic}", "sync_groups": False}

    with ArgsSampler() as ps:
        first = _dag("kafka_migration").test(run_conf={**conf, "schema_ids": "translate"})
        assert str(first.state) == "success"
        assert _decoded(clusters.target, target_topic, registries.target) == _decoded(
            clusters.source, topic, registries.source
        )
        # The nightly DAG's schema_ids from airflow.cfg: its scheduled runs translate without a run conf.
        monkeypatch.setenv("AIRFLOW__KAFKA_MIGRATION__NIGHTLY_SCHEMA_IDS", "translate")
        nightly = _dag("kafka_nightly_sync")
        assert nightly.params["schema_ids"] == "translate"
        source.register_schema(f"{topic}-value", Schema(json.dumps(order_2), "AVRO"))  # evolved on the source
        _send(clusters, client(registries.source), topic, order_2, range(10, 14))  # a client without its cache
        second = nightly.test(run_conf=conf)
        assert str(second.state) == "success"

    decoded = _decoded(clusters.target, target_topic, registries.target)
    assert decoded == _decoded(clusters.source, topic, registries.source) and len(decoded) == 14
    assert {"id": 13, "note": "v2"} in [v for _, v in decoded]
    ledger = LedgerHook().get_conn()
    runs = {r.dag_run_id: r.run_id for r in ledger.runs(limit=50)}
    recorded = [ledger.run_schema_ids(runs[dag_run.run_id]) for dag_run in (first, second)]
    assert [[(v.version, v.action) for v in r.versions] for r in recorded if r is not None] == [
        [(1, VersionAction.REGISTERED)],
        [(1, VersionAction.PRESENT), (2, VersionAction.REGISTERED)],
    ]
    id_map = recorded[1].id_map  # type: ignore[union-attr]
    headers = {r["value"][1:5] for p in (0, 1) for r in read_partition(clusters.target, target_topic, p)}
    assert headers == {id_map.target(i).to_bytes(4, "big") for i in id_map} and len(id_map) == 2
    assert all(id_map.target(i) != i for i in id_map)  # translated, not kept

    output = capfd.readouterr()
    assert "Schemas (translate ids" in output.out + output.err + caplog.text  # the listing is in the plan's log
    places = dag_run_places(output, caplog.text, ps.text(), unique)
    places.update({f"ledger table {t}": rows for t, rows in _tables(LedgerHook().get_uri()).items()})
    for dag_run in (first, second):
        places.update(_files(state / "runs" / runs[dag_run.run_id]))
    assert any(name.endswith("plan.json") for name in places)
    assert leaks(SECRETS, places) == []


def test_a_registry_that_does_not_answer_is_refused_by_the_plan_task_before_writing(  # type: ignore[no-untyped-def]
    clusters: Clusters, kafka_connections, state: Path, monkeypatch: pytest.MonkeyPatch, capfd, unique: str
) -> None:
    from kafka_migration.airflow.hooks import LedgerHook

    topic = f"schdown{unique}.t"
    create_topic(clusters.source, topic, 1)
    for role, port in (("source", 9), ("target", 10)):
        conn = {
            "conn_type": "http",
            "host": f"http://127.0.0.1:{port}",
            "login": "u",
            "password": SECRETS[f"{role} registry password"],
        }
        monkeypatch.setenv(f"AIRFLOW_CONN_SCHEMA_REGISTRY_{role.upper()}", json.dumps(conn))
    runs_before = {r.run_id for r in LedgerHook().get_conn().runs(limit=1000)}
    run = _dag("kafka_migration").test(run_conf={"include": topic, "schema_ids": "translate", "sync_groups": False})
    assert str(run.state) == "failed"
    states = {ti.task_id: str(ti.state) for ti in run.get_task_instances()}
    assert [t for t, s in states.items() if s == "failed"] == ["plan"], states
    out = capfd.readouterr().out
    assert "Schema registry http://127.0.0.1:9: list subjects: the registry did not answer" in out, out[-3000:]
    assert leaks(SECRETS, {"task output": out}) == []
    assert {r.run_id for r in LedgerHook().get_conn().runs(limit=1000)} == runs_before
    from confluent_kafka.admin import AdminClient

    assert topic not in AdminClient({"bootstrap.servers": clusters.target}).list_topics(timeout=10).topics


def test_the_failback_dag_translates_back_through_the_recorded_map(  # type: ignore[no-untyped-def]
    clusters: Clusters, registry_connections: Registries, capfd, unique: str
) -> None:
    """kafka_cutover with schema_ids translate, records of a version registered on the target afterwards, then
    kafka_failback: refused by its prepare task without schema_ids (nothing recorded), translated back with it."""
    from kafka_migration.airflow.hooks import LedgerHook

    registries = registry_connections
    topic, target_topic = f"schfb{unique}.orders", f"back.schfb{unique}.orders"
    order_1, order_2 = order(unique), order_v2(unique)
    source = client(registries.source)
    create_topic(clusters.source, topic, 2)
    source.register_schema(f"{topic}-value", Schema(json.dumps(order_1), "AVRO"))
    target = client(registries.target)
    for i in range(2):
        target.register_schema(f"{topic}-filler{i}", Schema(json.dumps({**order_1, "name": f"Filler{i}"}), "AVRO"))
    _send(clusters, source, topic, order_1, range(6))
    conf = {"include": f"schfb{unique}\\..*", "rename": "back.{topic}", "quiet_seconds": 1, "schema_ids": "translate"}
    assert str(_dag("kafka_cutover").test(run_conf=conf).state) == "success"
    ledger = LedgerHook().get_conn()
    cutover = ledger.cutovers(limit=1)[0]

    target.register_schema(f"{target_topic}-value", Schema(json.dumps(order_2), "AVRO"))  # on the target only
    after = {q: len(read_partition(clusters.target, target_topic, q)) for q in (0, 1)}
    on_source = {q: len(read_partition(clusters.source, topic, q)) for q in (0, 1)}
    fresh = client(registries.target)
    conf_v2 = {**TOPICS, "auto.register.schemas": False, "use.latest.version": True}
    serialize = AvroSerializer(fresh, json.dumps(order_2), conf=conf_v2)
    p = producer(clusters.target)
    for i in range(30, 34):
        value = serialize({"id": i, "note": "t"}, SerializationContext(target_topic, MessageField.VALUE))
        send(p, target_topic, i % 2, f"k{i}".encode(), value)
    p.flush(30)

    failback = _dag("kafka_failback")
    refused = failback.test(run_conf={"cutover_id": cutover["cutover_id"], "quiet_seconds": 1})
    assert str(refused.state) == "failed"
    states = {ti.task_id: str(ti.state) for ti in refused.get_task_instances()}
    assert [t for t, s in states.items() if s == "failed"] == ["prepare"], states
    assert "The runs before the cutover translated the schema ids of 1 topic" in capfd.readouterr().out
    assert ledger.cutover(cutover["cutover_id"])["failback_status"] is None  # type: ignore[index]

    back = failback.test(run_conf={"cutover_id": cutover["cutover_id"], "quiet_seconds": 1, "schema_ids": "translate"})
    assert str(back.state) == "success"
    avro_target = AvroDeserializer(client(registries.target), conf=TOPICS)
    avro_source = AvroDeserializer(client(registries.source), conf=TOPICS)
    came = [
        avro_target(r["value"], SerializationContext(target_topic, MessageField.VALUE))
        for q in (0, 1)
        for r in read_partition(clusters.target, target_topic, q, start=after[q])
    ]
    went = [
        avro_source(r["value"], SerializationContext(topic, MessageField.VALUE))
        for q in (0, 1)
        for r in read_partition(clusters.source, topic, q, start=on_source[q])
    ]
    assert went == came and len(went) == 4 and {"id": 33, "note": "t"} in went
    registered = client(registries.source).get_version(f"{topic}-value", 2)
    headers = {
        int.from_bytes(r["value"][1:5], "big")
        for q in (0, 1)
        for r in read_partition(clusters.source, topic, q, start=on_source[q])
    }
    assert headers == {registered.schema_id}


UNKNOWN_ID = 987_654  # an id no test registers: the source registry does not know it
RECORDS = {"subject.name.strategy.type": "RECORD"}  # RecordNameStrategy: a record's subject is its full name


@pytest.fixture
def census_by_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan task reads no offset itself: every census is a Spark application of its own."""
    monkeypatch.setenv("KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS", "0")


def _by_spark(text: str) -> bool:
    """Whether a task's output shows the census submitted as a Spark application and answered."""
    return "--name kafka-migration-census" in text and "kafka_migration.spark: census written" in text


@pytest.mark.usefixtures("census_by_spark")
def test_the_plan_tasks_census_refuses_an_unknown_id_before_anything_is_written(  # type: ignore[no-untyped-def]
    clusters: Clusters, registry_connections: Registries, state: Path, capfd, caplog, unique: str
) -> None:
    from confluent_kafka.admin import AdminClient

    from kafka_migration.airflow.hooks import LedgerHook

    registries = registry_connections
    topic = f"schunk{unique}.events"
    source = client(registries.source)
    create_topic(clusters.source, topic, 2)
    own = source.register_schema(f"{topic}-value", Schema(json.dumps(order(unique)), "AVRO"))
    p = producer(clusters.source)
    for i in range(6):
        key = b"\x00" + UNKNOWN_ID.to_bytes(4, "big") + b"k" if i == 3 else f"k{i}".encode()
        send(p, topic, 0, key, b"\x00" + own.to_bytes(4, "big") + b"\x02")
    send(p, topic, 1, b"k", b"\x00" + own.to_bytes(4, "big") + b"\x04")
    p.flush(30)
    subjects = set(client(registries.target).get_subjects())
    runs_before = {r.run_id for r in LedgerHook().get_conn().runs(limit=1000)}

    run = _dag("kafka_migration").test(run_conf={"include": topic, "schema_ids": "translate", "sync_groups": False})
    assert str(run.state) == "failed"
    states = {ti.task_id: str(ti.state) for ti in run.get_task_instances()}
    assert [t for t, s in states.items() if s == "failed"] == ["plan"], states
    output = capfd.readouterr()
    text = output.out + output.err + caplog.text
    line = f"Source {topic}[0] offset 3: its key names schema id {UNKNOWN_ID}, which the source registry"
    assert line in text and "nothing was written" in text, text[-3000:]
    assert _by_spark(text), text[-3000:]
    assert topic not in AdminClient({"bootstrap.servers": clusters.target}).list_topics(timeout=10).topics
    assert set(client(registries.target).get_subjects()) == subjects  # no subject registered
    assert {r.run_id for r in LedgerHook().get_conn().runs(limit=1000)} == runs_before  # no run opened
    assert not list(state.glob("runs/*/census*.json"))  # the census's files removed


@pytest.mark.usefixtures("census_by_spark")
def test_the_plan_tasks_census_syncs_record_name_strategy_subjects_and_the_copy_translates(  # type: ignore[no-untyped-def]
    clusters: Clusters, registry_connections: Registries, capfd, caplog, unique: str
) -> None:
    registries = registry_connections
    ns = f"ev{unique}"
    place = {"type": "record", "name": "Place", "namespace": ns, "fields": [{"name": "city", "type": "string"}]}
    event = {
        "type": "record",
        "name": "Event",
        "namespace": ns,
        "fields": [{"name": "id", "type": "long"}, {"name": "where", "type": f"{ns}.Place"}],
    }
    ping = {"type": "record", "name": "Ping", "namespace": ns, "fields": [{"name": "n", "type": "int"}]}
    topic, target_topic = f"schrns{unique}.events", f"dag.schrns{unique}.events"
    source = client(registries.source)
    create_topic(clusters.source, topic, 2)
    source.register_schema(f"{ns}.Place", Schema(json.dumps(place), "AVRO"))
    reference = SchemaReference(f"{ns}.Place", f"{ns}.Place", 1)
    event_id = source.register_schema(f"{ns}.Event", Schema(json.dumps(event), "AVRO", [reference]))
    target = client(registries.target)
    filler, i = 0, 0
    while i < 2 or filler <= event_id:  # the target's ids run ahead of the source's
        filler = target.register_schema(f"{ns}-filler{i}", Schema(json.dumps({**ping, "name": f"F{i}"}), "AVRO"))
        i += 1
    conf = {"auto.register.schemas": False, "use.latest.version": True, **RECORDS}
    as_event = AvroSerializer(source, source.get_latest_version(f"{ns}.Event").schema, conf=conf)
    source.register_schema(f"{ns}.Ping", Schema(json.dumps(ping), "AVRO"))
    as_ping = AvroSerializer(source, json.dumps(ping), conf=conf)
    context = SerializationContext(topic, MessageField.VALUE)
    p = producer(clusters.source)
    for i in range(6):
        value = as_event({"id": i, "where": {"city": f"c{i}"}}, context) if i % 3 else as_ping({"n": i}, context)
        send(p, topic, i % 2, f"k{i}".encode(), value)
    p.flush(30)

    with ArgsSampler() as ps:
        run = _dag("kafka_migration").test(
            run_conf={"include": topic, "rename": "dag.{topic}", "schema_ids": "translate", "sync_groups": False}
        )
    output = capfd.readouterr()
    text = output.out + output.err + caplog.text
    assert str(run.state) == "success", text[-3000:]
    assert _by_spark(text) and f"subjects found behind ids in the records: {ns}.Event, {ns}.Ping" in text
    assert {f"{ns}.Place", f"{ns}.Event", f"{ns}.Ping"} <= set(target.get_subjects())
    refs = target.get_version(f"{ns}.Event", 1).schema.references
    assert [(r.name, r.subject, r.version) for r in refs] == [(f"{ns}.Place", f"{ns}.Place", 1)]

    def decoded(bootstrap: str, name: str, url: str) -> list[tuple[Any, bytes]]:
        avro = AvroDeserializer(client(url), conf=RECORDS)
        return [
            (avro(r["value"], SerializationContext(name, MessageField.VALUE)), r["value"][1:5])
            for partition in (0, 1)
            for r in read_partition(bootstrap, name, partition)
        ]

    mine = decoded(clusters.source, topic, registries.source)
    theirs = decoded(clusters.target, target_topic, registries.target)
    assert [v for v, _ in theirs] == [v for v, _ in mine] and len(mine) == 6
    assert all(a != b for (_, a), (_, b) in zip(mine, theirs, strict=True))  # every value names the target's id
    assert leaks(SECRETS, {"ps": ps.text(), "task output": text}) == []  # the census's submit holds no registry secret


@pytest.mark.usefixtures("kafka_connections", "airflow_home")
def test_the_failback_dag_keeps_the_ids_once_each_is_proven_on_the_source_registry(  # type: ignore[no-untyped-def]
    clusters: Clusters,
    registries: Registries,
    registry_factory,
    monkeypatch: pytest.MonkeyPatch,
    capfd,
    unique: str,
) -> None:
    """kafka_cutover with schema_ids keep, the target's registry the source's moved whole (its ids kept); records of
    the moved version written on the target afterwards; then kafka_failback: refused by its prepare task without
    schema_ids (the ids would go back unproven), and with keep its plan task takes the census of the records to
    bring back, proves the id they name on both registries, and they go back byte for byte."""
    from harness.registry.whole import move_whole
    from kafka_migration.airflow.hooks import LedgerHook
    from kafka_migration.model.schema_runs import VersionAction
    from kafka_migration.model.schemas import SchemaMode

    topic = f"schkb{unique}.orders"
    source = client(registries.source)
    create_topic(clusters.source, topic, 2)
    moved_id = source.register_schema(f"{topic}-value", Schema(json.dumps(order(unique)), "AVRO"))
    _send(clusters, source, topic, order(unique), range(6))
    (moved,) = registry_factory("dag-kept-ids")
    move_whole(registries.source, moved.ccompat_url)
    for role, url in (("source", registries.source), ("target", moved.ccompat_url)):
        monkeypatch.setenv(
            f"AIRFLOW_CONN_SCHEMA_REGISTRY_{role.upper()}", json.dumps({"conn_type": "http", "host": url})
        )
    conf = {"include": f"schkb{unique}\\..*", "quiet_seconds": 1, "schema_ids": "keep"}
    assert str(_dag("kafka_cutover").test(run_conf=conf).state) == "success"
    ledger = LedgerHook().get_conn()
    cutover = ledger.cutovers(limit=1)[0]

    after = {q: len(read_partition(clusters.target, topic, q)) for q in (0, 1)}
    on_source = {q: len(read_partition(clusters.source, topic, q)) for q in (0, 1)}
    serialize = AvroSerializer(
        client(moved.ccompat_url),
        json.dumps(order(unique)),
        conf={**TOPICS, "auto.register.schemas": False, "use.latest.version": True},
    )
    p = producer(clusters.target)
    for i in range(40, 44):
        send(p, topic, i % 2, f"k{i}".encode(), serialize({"id": i}, SerializationContext(topic, MessageField.VALUE)))
    p.flush(30)

    failback = _dag("kafka_failback")
    refused = failback.test(run_conf={"cutover_id": cutover["cutover_id"], "quiet_seconds": 1})
    assert str(refused.state) == "failed"
    states = {ti.task_id: str(ti.state) for ti in refused.get_task_instances()}
    assert [t for t, s in states.items() if s == "failed"] == ["prepare"], states
    assert "The runs before the cutover kept the schema ids of 1 topic" in capfd.readouterr().out
    assert ledger.cutover(cutover["cutover_id"])["failback_status"] is None  # type: ignore[index]

    back = failback.test(run_conf={"cutover_id": cutover["cutover_id"], "quiet_seconds": 1, "schema_ids": "keep"})
    assert str(back.state) == "success"
    came = [(r["key"], r["value"]) for q in (0, 1) for r in read_partition(clusters.target, topic, q, start=after[q])]
    went = [
        (r["key"], r["value"]) for q in (0, 1) for r in read_partition(clusters.source, topic, q, start=on_source[q])
    ]
    assert went == came and len(went) == 4
    assert {int.from_bytes(value[1:5], "big") for _, value in went} == {moved_id}
    avro = AvroDeserializer(client(registries.source), conf=TOPICS)
    assert {avro(value, SerializationContext(topic, MessageField.VALUE))["id"] for _, value in went} == set(
        range(40, 44)
    )
    recorded = ledger.run_schema_ids(ledger.cutover(cutover["cutover_id"])["failback_run_id"])  # type: ignore[index]
    assert recorded is not None and recorded.mode is SchemaMode.KEEP
    assert [(v.source_id, v.target_id, v.action) for v in recorded.versions] == [
        (moved_id, moved_id, VersionAction.PRESENT)
    ]
