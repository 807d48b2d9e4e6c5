"""The schema ids a run moved, recorded with the run on both backends and read back exactly, in registration
order; a retried start replaces them, a dry run records none."""

from __future__ import annotations

import dataclasses

from kafka_migration.ledger import Ledger
from kafka_migration.model.schema_runs import SchemaRun, SyncedVersion, VersionAction
from kafka_migration.model.schemas import IdMap, IdPair, SchemaFormat, SchemaMode
from tests.unit.factories import migration_plan, topic_plan

ADDRESS = SyncedVersion(
    "shop.Address", 1, "shop.Address", SchemaFormat.AVRO, 4, 1, VersionAction.REGISTERED, 1, "sha256:" + "a" * 64
)
ORDERS = SyncedVersion(
    "dst.orders-value", 2, "orders-value", SchemaFormat.AVRO, 9, 2_000_000_000, VersionAction.PRESENT, 2, "sha256:b"
)
RUN = SchemaRun(
    SchemaMode.TRANSLATE,
    "http://src:8081",
    "http://dst:8081",
    (ADDRESS, ORDERS),
    IdMap((IdPair(4, 1, SchemaFormat.AVRO), IdPair(9, 2_000_000_000, SchemaFormat.AVRO))),
)


def test_a_runs_schema_ids_are_recorded_with_it_and_read_back(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    plan = dataclasses.replace(migration_plan(topic_plan("orders")), schemas=RUN.to_dict())
    ledger.start_run(plan, trigger="cli")
    assert ledger.run_schema_ids(plan.run_id) == RUN
    assert ledger.run_schema_ids("another-run") is None

    fewer = dataclasses.replace(RUN, versions=(ORDERS,), id_map=IdMap((IdPair(9, 2_000_000_000, SchemaFormat.AVRO),)))
    ledger.start_run(dataclasses.replace(plan, schemas=fewer.to_dict()), trigger="cli")  # a retried start
    assert ledger.run_schema_ids(plan.run_id) == fewer

    dry = dataclasses.replace(plan, run_id="dry-1", options={**plan.options, "dry_run": True}, schemas=RUN.to_dict())
    ledger.start_run(dry, trigger="cli")
    assert ledger.run_schema_ids("dry-1") is None
    ledger.engine.dispose()


def test_a_run_without_schemas_records_none(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    plan = migration_plan(topic_plan("orders"))
    ledger.start_run(plan, trigger="cli")
    assert ledger.run_schema_ids(plan.run_id) is None
    ledger.engine.dispose()


def test_the_translated_counts_of_each_partition_are_stored_on_its_segment(ledger_url: str) -> None:
    from tests.unit.ledger.test_ledger import outcomes, plan

    ledger = Ledger.open(ledger_url)
    run = plan("run-1", 0, 100, 0)
    ledger.start_run(run, trigger="cli")
    copy, verify = outcomes(run, {0: True, 1: True})
    counts = {"topic": "orders", "partition": 0, "keys": {"translated": 90, "unchanged": 0, "without_header": 10}}
    verify.partitions[0]["schema_counts"] = {
        **counts,
        "values": {"translated": 100, "unchanged": 0, "without_header": 0},
    }
    ledger.record_topic(run, run.topics[0], copy, verify)
    stored = {s.partition: s.schema_counts for s in ledger.run_segments("run-1")}
    assert stored == {0: verify.partitions[0]["schema_counts"], 1: None}  # partition 1 was compared as bytes
    ledger.engine.dispose()


def test_the_ledger_says_which_continuing_topics_had_their_ids_translated(ledger_url: str) -> None:
    from tests.unit.ledger.test_ledger import SOURCE, TARGET, outcomes, plan

    ledger = Ledger.open(ledger_url)
    assert ledger.checkpointed_translation(SOURCE.cluster_id, TARGET.cluster_id) == {}
    raw = plan("run-raw", 0, 100, 0)
    ledger.start_run(raw, trigger="cli")
    ledger.record_topic(raw, raw.topics[0], *outcomes(raw, {0: True, 1: True}))
    assert ledger.checkpointed_translation(SOURCE.cluster_id, TARGET.cluster_id) == {("orders", "copy.orders"): None}

    translated = plan("run-tr", 100, 150, 100)
    topic = dataclasses.replace(translated.topics[0], schema_ids=IdMap((IdPair(9, 3, SchemaFormat.AVRO),)).to_dict())
    translated = dataclasses.replace(translated, topics=(topic,), schemas=RUN.to_dict())
    ledger.start_run(translated, trigger="cli")
    ledger.record_topic(translated, topic, *outcomes(translated, {0: True, 1: False}))  # partition 0 moves on
    assert ledger.checkpointed_translation(SOURCE.cluster_id, TARGET.cluster_id) == {
        ("orders", "copy.orders"): "run-tr"
    }
    assert ledger.checkpointed_translation(SOURCE.cluster_id, "elsewhere") == {}
    ledger.engine.dispose()


def test_checkpoints_a_failback_seeded_are_left_out_when_asked(ledger_url: str) -> None:
    """A failback seeds the reverse direction's checkpoints at the cutover point (their run: the cutover's id):
    they copied nothing, so they say nothing of how earlier runs treated the ids."""
    from kafka_migration.model.checkpoints import Checkpoint
    from tests.unit.ledger.test_ledger import SOURCE, TARGET

    ledger = Ledger.open(ledger_url)
    seeds = {("copy.orders", p, "orders"): Checkpoint(10, 20, "cutover-1") for p in (0, 1)}
    ledger.seed_checkpoints(TARGET.cluster_id, SOURCE.cluster_id, seeds)
    assert ledger.checkpointed_translation(TARGET.cluster_id, SOURCE.cluster_id) == {("copy.orders", "orders"): None}
    assert ledger.checkpointed_translation(TARGET.cluster_id, SOURCE.cluster_id, seeded_by="cutover-1") == {}
    assert ledger.checkpointed_translation(TARGET.cluster_id, SOURCE.cluster_id, seeded_by="cutover-2") == {
        ("copy.orders", "orders"): None
    }
    ledger.engine.dispose()


def test_the_ledger_says_which_continuing_topics_had_their_ids_kept(ledger_url: str) -> None:
    """A topic whose checkpoint a keep run advanced is kept (the run recorded the versions it proved); a run without
    --schema-ids, a translating one, or another pair of clusters says nothing of it."""
    from tests.unit.ledger.test_ledger import SOURCE, TARGET, outcomes, plan

    ledger = Ledger.open(ledger_url)
    raw = plan("run-raw", 0, 100, 0)
    ledger.start_run(raw, trigger="cli")
    ledger.record_topic(raw, raw.topics[0], *outcomes(raw, {0: True, 1: True}))
    assert ledger.checkpointed_kept(SOURCE.cluster_id, TARGET.cluster_id) == {}

    kept_run = dataclasses.replace(RUN, mode=SchemaMode.KEEP)
    kept = dataclasses.replace(plan("run-keep", 100, 150, 100), schemas=kept_run.to_dict())
    ledger.start_run(kept, trigger="cli")
    ledger.record_topic(kept, kept.topics[0], *outcomes(kept, {0: True, 1: False}))  # partition 0 moves on
    assert ledger.checkpointed_kept(SOURCE.cluster_id, TARGET.cluster_id) == {("orders", "copy.orders"): "run-keep"}
    assert ledger.checkpointed_translation(SOURCE.cluster_id, TARGET.cluster_id) == {("orders", "copy.orders"): None}
    assert ledger.checkpointed_kept(SOURCE.cluster_id, "elsewhere") == {}
    assert ledger.checkpointed_kept(TARGET.cluster_id, SOURCE.cluster_id) == {}

    translated = dataclasses.replace(plan("run-tr", 150, 160, 150), schemas=RUN.to_dict())
    ledger.start_run(translated, trigger="cli")
    ledger.record_topic(translated, translated.topics[0], *outcomes(translated, {0: True, 1: True}))
    assert ledger.checkpointed_kept(SOURCE.cluster_id, TARGET.cluster_id) == {}  # no checkpoint of it left
    ledger.engine.dispose()
