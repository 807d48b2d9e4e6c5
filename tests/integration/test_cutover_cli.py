"""``kafka-migrate cutover`` and ``failback`` as a user runs them: subprocesses, real brokers, real spark-submit.

One round trip (two migrations, four spark-submits): refusals while a producer writes and
while a consumer runs, the cutover with a renamed topic and transaction markers, a consumer
continuing on the target exactly; records produced on the target after the cutover go back
to the source verified, and the group continues on the source exactly, also in a partition
where it had not caught up with the cutover point.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from harness.data.group_clients import active_member, busy_producer, commit, resume_records
from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic, producer, send
from kafka_migration.ledger import Ledger
from tests.commands import kafka_migrate

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def _fields(record: dict) -> dict:  # type: ignore[type-arg]
    return {k: v for k, v in record.items() if k != "offset"}


def _seed(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic, 2)
    p = producer(bootstrap)
    for i in range(120):
        send(p, topic, i % 2, f"k{i}".encode(), f"before-{i}".encode(), headers=[("n", str(i).encode())])
    p.flush(10)
    tx = producer(bootstrap, **{"transactional.id": f"{topic}-tx"})  # commit markers: source and target offsets differ
    tx.init_transactions(10)
    for t in range(3):
        tx.begin_transaction()
        for i in range(6):
            send(tx, topic, i % 2, f"tx{t}-{i}".encode(), b"in a transaction")
        tx.commit_transaction(10)
    p = producer(bootstrap)
    for i in range(20):
        send(p, topic, i % 2, f"after-tx-{i}".encode(), b"after the transactions")
    p.flush(10)


def test_cli_cutover_refuses_then_switches_and_fails_back_exactly(clusters, tmp_path: Path, unique: str) -> None:  # type: ignore[no-untyped-def]
    topic, target_topic, group = f"cut{unique}", f"copy.cut{unique}", f"billing{unique}"
    _seed(clusters.source, topic)
    commit(clusters.source, group, {(topic, 0): 20, (topic, 1): 70})  # partition 1: after the transactions
    ledger_url = f"sqlite:///{tmp_path / 'ledger.db'}"
    common = ["--source", clusters.source, "--target", clusters.target, "--ledger", ledger_url, "--master", "local[2]"]
    cutover = [
        "cutover",
        *common,
        "--include",
        topic,
        "--rename",
        "copy.{topic}",
        "--group",
        "billing.*",
        "--quiet-seconds",
        "2",
    ]

    with busy_producer(clusters.source, topic, 2):
        refused = kafka_migrate(*cutover, state_dir=tmp_path)
    assert refused.returncode == 2, refused.stderr
    assert f"source topic {topic} is still written to" in refused.stderr and "nothing was written" in refused.stderr

    # Consumers are checked before the quiet window: a refusal for one comes at once, not after 60 s of watching.
    with active_member(clusters.source, group, [topic]):
        started = time.monotonic()
        refused = kafka_migrate(*cutover[:-1], "60", state_dir=tmp_path)
        waited = time.monotonic() - started
    assert refused.returncode == 2, refused.stderr
    assert f"1 consumer group has active members on the source cluster: {group} (" in refused.stderr
    assert f"members {group}: rdkafka on 127.0.0.1" in refused.stderr  # librdkafka's default client id
    assert "stays a member until its session timeout passes (session.timeout.ms, 45 s by default" in refused.stderr
    assert waited < 60, f"refused after {waited:.0f} s: the 60 s quiet window ran before the consumer check"

    ledger = Ledger.open(ledger_url)
    assert [c["status"] for c in ledger.cutovers()] == ["refused", "refused"]
    # The refusal's report is written and named; it lists the blocking group and the way out, not a failback.
    refused_id = ledger.cutovers()[0]["cutover_id"]
    html_path = tmp_path / "reports" / refused_id / "report.html"
    assert f"Report: {html_path}" in refused.stderr
    page = html_path.read_text()
    assert f"<li><b>consumer group {group} on the source cluster</b>" in page and "<style>" in page
    assert "kafka-migrate failback" not in page and "run None" not in page and "no consumer group selected" not in page
    assert f"Stop every consumer (all instances) of consumer group {group} on the source cluster." in page
    assert ledger.runs() == []  # refused before the run: nothing copied

    done = kafka_migrate(*cutover, state_dir=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    cutover_id = next(c["cutover_id"] for c in ledger.cutovers() if c["status"] == "completed")
    assert f"Cutover {cutover_id} COMPLETED" in done.stdout

    # A consumer of the group on the target continues with the record it would have read next on the source.
    source_next = {p: read_partition(clusters.source, topic, p, start=o)[0] for p, o in ((0, 20), (1, 70))}
    on_target = resume_records(clusters.target, group, target_topic, [0, 1])
    assert {p: _fields(r) for p, r in on_target.items()} == {p: _fields(r) for p, r in source_next.items()}

    report = json.loads((tmp_path / "reports" / cutover_id / "report.json").read_text())
    assert report["verdict"] == "CUTOVER COMPLETED" and report["run_report"]["verdict"] == "VERIFIED"
    starts = {(r["partition"], r["target_offset"]) for r in report["groups"] if r["group_id"] == group}
    assert starts == {(p, r["offset"]) for p, r in on_target.items()}
    checked = kafka_migrate("report", "verify", str(tmp_path / "reports" / cutover_id / "report.json"),
                            "--ledger", ledger_url, state_dir=tmp_path)  # fmt: skip
    assert checked.returncode == 0, checked.stdout

    # Life on the target: new records; the group reads partition 0 past the cutover point, partition 1 one record.
    ends = {p["partition"]: p for p in report["ends_at_cutover"][0]["partitions"]}
    p = producer(clusters.target)
    for i in range(30):
        send(p, target_topic, i % 2, f"new-{i}".encode(), b"written on the target after the cutover")
    p.flush(10)
    positions = {0: ends[0]["target_end"] + 4, 1: on_target[1]["offset"] + 1}
    commit(clusters.target, group, {(target_topic, q): o for q, o in positions.items()})

    failback = ["failback", "--cutover", cutover_id, *common, "--quiet-seconds", "1"]
    with busy_producer(clusters.target, target_topic, 2):  # producers on the target not stopped yet
        refused = kafka_migrate(*failback, state_dir=tmp_path)
    assert refused.returncode == 2, refused.stderr
    assert "Failback refused" in refused.stderr and f"target topic {target_topic} is still written to" in refused.stderr
    assert ledger.cutover(cutover_id)["failback_status"] == "refused"
    refusal = json.loads((tmp_path / "reports" / cutover_id / "report.json").read_text())["failback"]["refusal"]
    assert refusal["problems"][0]["about"] == f"target topic {target_topic}"
    assert f"Report: {tmp_path / 'reports' / cutover_id / 'report.html'}" in refused.stderr

    back = kafka_migrate(*failback, state_dir=tmp_path)
    assert back.returncode == 0, back.stdout + back.stderr
    assert f"Failback of cutover {cutover_id} COMPLETED" in back.stdout

    for q in range(2):  # the target's new records were appended to the source, in order
        after_cutover = read_partition(clusters.target, target_topic, q, start=ends[q]["target_end"])
        appended = read_partition(clusters.source, topic, q, start=ends[q]["source_end"])
        assert without_offsets(appended) == without_offsets(after_cutover) and len(appended) > 15
    expected = {q: read_partition(clusters.target, target_topic, q, start=o)[0] for q, o in positions.items()}
    on_source = resume_records(clusters.source, group, topic, [0, 1])
    assert {q: _fields(r) for q, r in on_source.items()} == {q: _fields(r) for q, r in expected.items()}
    row = ledger.cutover(cutover_id)
    assert row["failback_status"] == "completed" and ledger.run(row["failback_run_id"]).status == "verified"  # type: ignore[union-attr]
    listed = kafka_migrate("history", "--cutovers", "--ledger", ledger_url, state_dir=tmp_path)
    assert f"{cutover_id}  " in listed.stdout and f"completed ({row['failback_run_id']})" in listed.stdout
