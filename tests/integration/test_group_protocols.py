"""Consumer groups of both of Apache Kafka 4's protocols through a cutover: the classic one (JoinGroup/SyncGroup)
and KIP-848's (``group.protocol=consumer``: the broker assigns partitions and owns the session).

For each protocol, as a user runs it (``kafka-migrate cutover``, real brokers, real spark-submit): a running
member of the group on the source, then one on the target, each makes the cutover refuse before anything is
written, naming the group and the cluster; with both stopped the cutover moves the group, and a consumer of the
same protocol on the target continues with exactly the record it would have read next on the source (offsets
differ between the clusters: the source has transaction markers).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.data.group_clients import CLASSIC, CONSUMER, active_member, commit, resume_records
from harness.data.read import read_partition
from harness.data.seed import create_topic, producer, send
from kafka_migration.ledger import Ledger
from tests.commands import kafka_migrate

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def _seed(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic, 2)
    tx = producer(bootstrap, **{"transactional.id": f"{topic}-tx"})  # markers: target offsets run behind
    tx.init_transactions(10)
    for t in range(4):
        tx.begin_transaction()
        for i in range(6):
            send(tx, topic, i % 2, f"tx{t}-{i}".encode(), b"in a transaction")
        tx.commit_transaction(10)
    p = producer(bootstrap)
    for i in range(40):
        send(p, topic, i % 2, f"k{i}".encode(), f"v{i}".encode())
    p.flush(10)


def _fields(record: dict) -> dict:  # type: ignore[type-arg]
    return {k: v for k, v in record.items() if k != "offset"}


@pytest.mark.parametrize("protocol", [CLASSIC, CONSUMER])
def test_members_of_either_protocol_stop_the_cutover_and_the_group_moves_exactly(  # type: ignore[no-untyped-def]
    clusters, tmp_path: Path, unique: str, protocol: str
) -> None:
    topic, group = f"proto{protocol}{unique}", f"app-{protocol}{unique}"
    _seed(clusters.source, topic)
    create_topic(clusters.target, topic, 2)  # an empty compatible target topic, for the target's member
    positions = {0: 14, 1: 27}  # partition 0: inside the transactions' records; 1: after them
    commit(clusters.source, group, {(topic, p): o for p, o in positions.items()})
    ledger_url = f"sqlite:///{tmp_path / 'ledger.db'}"
    cutover = [
        "cutover", "--source", clusters.source, "--target", clusters.target, "--ledger", ledger_url,
        "--master", "local[2]", "--include", topic, "--group", group, "--quiet-seconds", "0",
    ]  # fmt: skip

    for side, bootstrap in (("source", clusters.source), ("target", clusters.target)):
        with active_member(bootstrap, group, [topic], protocol=protocol):
            refused = kafka_migrate(*cutover, state_dir=tmp_path)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert f"has active members on the {side} cluster: {group} (" in refused.stderr, refused.stderr
    ledger = Ledger.open(ledger_url)
    assert [c["status"] for c in ledger.cutovers()] == ["refused", "refused"]
    assert ledger.runs() == []  # refused before the final run: nothing copied

    done = kafka_migrate(*cutover, state_dir=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    source_next = {p: read_partition(clusters.source, topic, p, start=o)[0] for p, o in positions.items()}
    on_target = resume_records(clusters.target, group, topic, positions, protocol=protocol)
    assert {p: _fields(r) for p, r in on_target.items()} == {p: _fields(r) for p, r in source_next.items()}
    assert any(on_target[p]["offset"] != source_next[p]["offset"] for p in positions)  # translated, not copied
