"""``--output json`` as a script reads it: the real ``kafka-migrate`` in a subprocess on Apache Kafka, its
stdout parsed whole by ``json.loads`` (so nothing else may be on it), its progress on stderr.

ONE small migration (two topics, 24 records, one spark-submit) and one state directory (its SQLite
ledger) serve every test: run, history, report, groups sync (dry run and real) and show, and a
cutover refused while a consumer runs.
"""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.data.group_clients import active_member, commit
from harness.data.seed import create_topic, producer, send
from tests.commands import kafka_migrate

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def document(done: subprocess.CompletedProcess[str], code: int = 0) -> dict[str, Any]:
    """stdout as one JSON document (json.loads of all of it), after checking the exit code."""
    assert done.returncode == code, f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    doc = json.loads(done.stdout)
    assert doc["schema"] == 1, doc
    return doc


@dataclass(frozen=True)
class Migrated:
    source: str
    target: str
    prefix: str
    state_dir: Path
    dry: dict[str, Any]
    run: dict[str, Any]
    stderr: str

    def topic(self, name: str) -> str:
        return f"{self.prefix}.{name}"

    def clusters(self) -> list[str]:
        return ["--source", self.source, "--target", self.target]


@pytest.fixture(scope="module")
def migrated(clusters, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Migrated]:  # type: ignore[no-untyped-def]
    prefix = f"js{uuid.uuid4().hex[:6]}"
    create_topic(clusters.source, f"{prefix}.orders", 2)
    create_topic(clusters.source, f"{prefix}.empty", 1)
    p = producer(clusters.source)
    for i in range(24):
        send(p, f"{prefix}.orders", i % 2, f"k{i}".encode(), f"order {i}".encode())
    p.flush(10)
    state_dir = tmp_path_factory.mktemp("cli-json")
    argv = ["run", "--source", clusters.source, "--target", clusters.target, "--include", f"{prefix}\\..*"]
    argv += ["--rename", "src.{topic}", "--master", "local[2]", "--output", "json"]
    dry = document(kafka_migrate(*argv, "--dry-run", state_dir=state_dir))
    done = kafka_migrate(*argv, state_dir=state_dir)
    yield Migrated(clusters.source, clusters.target, prefix, state_dir, dry, document(done), done.stderr)


def test_run_prints_one_document_with_the_verdict_report_and_per_topic_figures(migrated: Migrated) -> None:
    m, doc = migrated, migrated.run
    assert (doc["command"], doc["verdict"], doc["exit_code"], doc["dry_run"]) == ("run", "verified", 0, False)
    assert doc["run_id"].startswith("cli-") and doc["copied"] == 24 and doc["planned_offsets"] == 24
    assert Path(doc["report"]["html"]).is_file() and Path(doc["run_files"]).is_dir()
    assert doc["report"]["sha256"].startswith("sha256:") and doc["timings"]["wall"] > 0
    topics = {t["source_topic"]: t for t in doc["topics"]}
    orders, empty = topics[m.topic("orders")], topics[m.topic("empty")]
    assert (orders["target_topic"], orders["copied"], orders["verdict"]) == (f"src.{m.topic('orders')}", 24, "verified")
    assert [(q["partition"], q["first"], q["last"], q["offsets"]) for q in orders["partitions"]] == [
        (0, 0, 11, 12),
        (1, 0, 11, 12),
    ]
    assert orders["partitions"][0]["range"] == "0–11 (12 offsets)"
    assert empty["copied"] == 0 and empty["partitions"][0]["range"] == "none at 0"
    # What a person reads went to stderr: the plan, the table, the verdict.
    assert f"Plan {doc['run_id']}" in m.stderr and f"Migration {doc['run_id']} verified" in m.stderr


def test_a_dry_run_prints_the_plan_as_json_and_writes_no_report(migrated: Migrated) -> None:
    doc = migrated.dry
    assert (doc["verdict"], doc["dry_run"], doc["report"], doc["planned_offsets"]) == ("dry_run", True, None, 24)
    assert doc["run_id"] != migrated.run["run_id"]


def test_history_and_report(migrated: Migrated) -> None:
    m, run_id = migrated, migrated.run["run_id"]
    history = document(kafka_migrate("history", "--output", "json", state_dir=m.state_dir))
    [run] = [r for r in history["runs"] if r["run_id"] == run_id]
    assert (run["status"], run["records"], run["topics"], run["trigger"]) == ("verified", 24, 2, "cli")
    assert run["report_sha256"] == m.run["report"]["sha256"]

    report = document(kafka_migrate("report", run_id, "--output", "json", state_dir=m.state_dir))
    assert report["run_id"] == run_id and Path(report["report"]["json"]).is_file()
    checked = document(kafka_migrate("report", "verify", report["report"]["json"], "--output", "json",
                                     state_dir=m.state_dir))  # fmt: skip
    assert checked["ok"] is True and report["report"]["sha256"] in checked["message"]


def test_groups_sync_dry_run_then_sync_and_show(migrated: Migrated) -> None:
    m = migrated
    group = f"{m.prefix}-billing"
    commit(m.source, group, {(m.topic("orders"), 0): 5, (m.topic("orders"), 1): 12})
    sync = ["groups", "sync", *m.clusters(), "--group", group]

    dry = document(kafka_migrate(*sync, "--dry-run", "--output", "json", state_dir=m.state_dir))
    assert (dry["sync_id"], dry["recorded"], dry["verdict"]) == (None, False, "would_sync")
    as_text = kafka_migrate(*sync, "--dry-run", state_dir=m.state_dir)
    assert as_text.returncode == 0, as_text.stdout + as_text.stderr
    assert "groups-" not in as_text.stdout and "there is no sync id to show" in as_text.stdout  # no id to reject

    done = document(kafka_migrate(*sync, "--output", "json", state_dir=m.state_dir))
    assert (done["recorded"], done["verdict"], done["totals"]) == (
        True,
        "synced",
        {"groups": 1, "partitions": 2, "not_synced": 0},
    )
    [synced] = done["groups"]
    by_partition = {q["partition"]: q for q in synced["partitions"]}
    assert {q: (r["source_offset"], r["target_offset"], r["lag"]) for q, r in by_partition.items()} == {
        0: (5, 5, 7),
        1: (12, 12, 0),
    }
    assert {r["outcome"] for r in by_partition.values()} == {"synced"}

    shown = document(kafka_migrate("groups", "show", done["sync_id"], "--output", "json", state_dir=m.state_dir))
    assert shown["groups"] == [{"group_id": group, "partitions": synced["partitions"]}]
    again = kafka_migrate(*sync, state_dir=m.state_dir)  # as text: the id it prints is one groups show shows
    assert again.returncode == 0, again.stdout + again.stderr
    sync_id = again.stdout.split("kafka-migrate groups show ")[1].split()[0]
    listed = kafka_migrate("groups", "show", sync_id, state_dir=m.state_dir)
    assert listed.returncode == 0 and f"Group sync {sync_id}" in listed.stdout, listed.stdout + listed.stderr


def test_a_refused_cutover_prints_its_document_and_report_and_exits_2(migrated: Migrated) -> None:
    m = migrated
    group = f"{m.prefix}-live"
    commit(m.source, group, {(m.topic("orders"), 0): 1})
    cutover = ["cutover", *m.clusters(), "--include", f"{m.prefix}\\..*", "--rename", "src.{topic}"]
    with active_member(m.source, group, [m.topic("orders")]):
        refused = kafka_migrate(*cutover, "--group", group, "--quiet-seconds", "0", "--output", "json",
                                state_dir=m.state_dir)  # fmt: skip
    doc = document(refused, code=2)
    assert (doc["command"], doc["status"], doc["exit_code"]) == ("cutover", "refused", 2)
    assert doc["cutover_id"].startswith("cutover-") and doc["final_run"] is None
    assert Path(doc["report"]).is_file() and doc["cutover_id"] in doc["report"]
    assert "active members on the source cluster" in refused.stderr and group in doc["message"]
    with active_member(m.source, group, [m.topic("orders")]):  # as text: the report's path on stdout
        as_text = kafka_migrate(*cutover, "--group", group, "--quiet-seconds", "0", state_dir=m.state_dir)
    assert as_text.returncode == 2, as_text.stdout + as_text.stderr
    # The refusal's error names the report it wrote (the pre-flight writes it), on stderr with the error.
    named = re.search(r"Report: (\S+\.html)", as_text.stderr)
    assert named is not None, as_text.stderr
    assert Path(named.group(1)).is_file() and named.group(1) != doc["report"]


def test_bad_input_with_json_is_one_line_on_stderr_and_nothing_on_stdout(migrated: Migrated) -> None:
    bad = kafka_migrate("run", *migrated.clusters(), "--include", "orders(", "--output", "json",
                        state_dir=migrated.state_dir)  # fmt: skip
    assert bad.returncode == 2 and bad.stdout == ""
    [line] = bad.stderr.strip().splitlines()
    assert line.startswith("error: ") and "include pattern 'orders(' is not a valid regular expression" in line


def test_a_cutover_and_its_failback_print_their_documents(migrated: Migrated) -> None:
    """Last in the module: after it, the target is the topics' home. Nothing new on either side, so the
    final runs copy nothing; the documents still name the runs, the groups moved and the cutover report."""
    m = migrated
    group = f"{m.prefix}-move"
    commit(m.source, group, {(m.topic("orders"), 0): 3, (m.topic("orders"), 1): 4})
    cutover = ["cutover", *m.clusters(), "--include", f"{m.prefix}\\..*", "--rename", "src.{topic}"]
    done = document(kafka_migrate(*cutover, "--group", group, "--quiet-seconds", "1", "--output", "json",
                                  state_dir=m.state_dir))  # fmt: skip
    cutover_id = done["cutover_id"]
    assert (done["command"], done["status"], done["groups"]) == ("cutover", "completed", [group])
    assert done["final_run"]["verified"] is True and Path(done["final_run"]["report"]).is_file()
    assert Path(done["report"]).is_file() and done["next_step"] == f"kafka-migrate failback --cutover {cutover_id}"

    back = document(kafka_migrate("failback", "--cutover", cutover_id, "--quiet-seconds", "1", "--output", "json",
                                  state_dir=m.state_dir))  # fmt: skip
    assert (back["command"], back["cutover_id"], back["status"], back["groups"]) == (
        "failback",
        cutover_id,
        "completed",
        [group],
    )
    assert back["final_run"]["run_id"] != done["final_run"]["run_id"] and Path(back["report"]).is_file()
    history = document(kafka_migrate("history", "--cutovers", "--output", "json", state_dir=m.state_dir))
    [row] = [c for c in history["cutovers"] if c["cutover_id"] == cutover_id]
    assert (row["status"], row["failback_status"]) == ("completed", "completed")
