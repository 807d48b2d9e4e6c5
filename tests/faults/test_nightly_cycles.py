"""kafka_nightly_sync over several cycles while producers keep writing and the target is patched broker by broker.

The DAG (in-process ``dag.test()``, a real Airflow metadata DB, real spark-submit) runs once per target node; in
each cycle that node is restarted (a controlled shutdown and back) while the run copies, as an operator patches a
cluster one broker a night. A producer trickles records into the source throughout. Every cycle must end
verified, and after the producer stops, one more cycle leaves the target identical to the source.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from pathlib import Path

import pytest

from harness.data.read import read_partition, without_offsets
from harness.data.seed import producer, send
from kafka_migration.ledger import Ledger, default_ledger_url
from tests.e2e.conftest import airflow_home  # noqa: F401 - the session's Airflow home, a fixture
from tests.faults.conftest import ReplicatedPair
from tests.faults.test_broker_maintenance import PARTITIONS, create, seed

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

REPO = Path(__file__).resolve().parents[2]


class Trickle:
    """A producer writing a record every 20 ms to the source until stopped; counts what was acknowledged."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.sent = 0
        self._stop = threading.Event()
        self._producer = producer(bootstrap, acks="all")
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        i = 0
        while not self._stop.wait(0.02):
            send(self._producer, self.topic, i % PARTITIONS, f"trickle-{i}".encode(), b"t" * 50)
            self._producer.poll(0)
            i += 1
        self._producer.flush(60)
        self.sent = i

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(90)
        return self.sent


def test_nightly_cycles_ride_through_a_target_broker_restarted_in_each(
    replicated: ReplicatedPair,
    airflow_home: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from airflow.dag_processing.dagbag import DagBag

    source, target = replicated
    for conn_id, cluster in (("KAFKA_SOURCE", source), ("KAFKA_TARGET", target)):
        extra = {"bootstrap.servers": cluster.bootstrap}
        monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id}", json.dumps({"conn_type": "kafka", "extra": extra}))
    bag = DagBag(dag_folder=str(REPO / "dags"))
    assert not bag.import_errors, bag.import_errors
    nightly = bag.get_dag("kafka_nightly_sync")
    topic = f"nightly{uuid.uuid4().hex[:6]}"
    create(source, topic)
    seed(source, topic, PARTITIONS * 500)
    conf = {"include": topic, "sync_groups": False}
    trickle = Trickle(source.bootstrap, topic)
    trickled = 0
    try:
        for node in target.nodes:
            restarter = threading.Thread(target=lambda n=node.node_id: (time.sleep(3), target.restart(n)), daemon=True)
            restarter.start()  # while the run plans and copies
            state = str(nightly.test(run_conf=conf).state)
            restarter.join(120)
            target.wait_in_sync([topic])
            assert state == "success", f"the cycle that restarted node {node.node_id} ended {state}"
    finally:
        trickled = trickle.stop()
    assert str(nightly.test(run_conf=conf).state) == "success"  # the last of the trickle

    for partition in range(PARTITIONS):
        expected = without_offsets(read_partition(source.bootstrap, topic, partition))
        copied = without_offsets(read_partition(target.bootstrap, topic, partition))
        assert copied == expected, f"partition {partition}: {len(copied)} target vs {len(expected)} source"
    ledger = Ledger.open(default_ledger_url(Path(os.environ["KAFKA_MIGRATION_STATE_DIR"])))
    runs = [r for r in ledger.runs() if r.dag_id == "kafka_nightly_sync" and (r.params or {}).get("include") == topic]
    assert len(runs) == len(target.nodes) + 1 and {r.status for r in runs} <= {"verified", "up_to_date"}
    assert sum(r.records for r in runs) == PARTITIONS * 500 + trickled  # each record copied once
