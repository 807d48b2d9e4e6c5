"""``--output json``: the documents' builders (kafka_migration.cli.output), and the commands that read the
ledger printing one JSON document on stdout and nothing else, on a real SQLite ledger."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kafka_migration.cli import EXIT_BAD_INPUT, EXIT_MISMATCH, EXIT_OK, main
from kafka_migration.cli.output import (
    DRY_RUN,
    SCHEMA,
    CutoverEnd,
    cutover_document,
    emit,
    final_run,
    group_show_document,
    group_sync_document,
    offsets,
    run_document,
)
from kafka_migration.groups.rules import verdict_line
from kafka_migration.ledger import Ledger
from kafka_migration.model.groups import (
    NOT_TRANSLATABLE,
    SAME_RECORD,
    SYNCED,
    WOULD_SYNC,
    WRITE,
    GroupSync,
    GroupSyncResult,
    PartitionSync,
)
from kafka_migration.reports.signoff import ReportFiles
from kafka_migration.reports.summary import TopicSummary
from tests.unit.factories import migration_plan, topic_plan
from tests.unit.ledger.test_ledger import outcomes, plan


def _files(tmp_path: Path) -> ReportFiles:
    return ReportFiles(
        tmp_path, tmp_path / "report.json", tmp_path / "report.html", tmp_path / "report.md", "sha256:ab"
    )


def _summary(topic: str, copied: int, verdict: str = "verified") -> TopicSummary:
    return TopicSummary(topic, f"src.{topic}", 2, copied, copied, copied, copied, verdict, None, 1.23456)


def test_offsets_are_first_and_last_both_included_with_the_count_and_the_notation() -> None:
    assert offsets(0, 1470) == {"first": 0, "last": 1469, "offsets": 1470, "range": "0–1469 (1,470 offsets)"}
    assert offsets(7, 8) == {"first": 7, "last": 7, "offsets": 1, "range": "7 (1 offset)"}
    assert offsets(12, 12) == {"first": None, "last": None, "offsets": 0, "range": "none at 12"}


def test_run_document_gives_the_verdict_report_and_per_topic_figures(tmp_path: Path) -> None:
    p = migration_plan(topic_plan("orders", (10, 0), "src.orders"), topic_plan("empty", (0,), "src.empty"))
    doc = run_document(
        p,
        "verified",
        EXIT_OK,
        rows=[_summary("orders", 10)],
        run_files=tmp_path,
        report=_files(tmp_path),
        timings={"wall": 3.5},
    )
    assert (doc["schema"], doc["command"], doc["run_id"], doc["verdict"], doc["exit_code"]) == (
        SCHEMA,
        "run",
        "run-1",
        "verified",
        0,
    )
    assert doc["report"] == {
        "html": str(tmp_path / "report.html"),
        "json": str(tmp_path / "report.json"),
        "markdown": str(tmp_path / "report.md"),
        "sha256": "sha256:ab",
    }
    orders, empty = doc["topics"]
    assert orders["copied"] == 10 and orders["verdict"] == "verified" and orders["seconds"] == 1.235
    assert [q["range"] for q in orders["partitions"]] == ["0–9 (10 offsets)", "none at 0"]
    assert "verdict" not in empty and empty["planned_offsets"] == 0  # planned, no figures of its own
    assert doc["copied"] == 10 and doc["planned_offsets"] == 10 and doc["dry_run"] is False
    assert json.loads(json.dumps(doc)) == doc  # plain JSON, nothing left to convert


def test_a_dry_run_document_has_the_plan_and_no_report() -> None:
    doc = run_document(migration_plan(topic_plan("orders", (5,))), DRY_RUN, EXIT_OK)
    assert doc["dry_run"] is True and doc["report"] is None and doc["run_files"] is None
    assert doc["schemas"] is None  # --schema-ids off
    assert doc["topics"][0]["partitions"][0] == {
        "partition": 0,
        "first": 0,
        "last": 4,
        "offsets": 5,
        "range": "0–4 (5 offsets)",
        "origin": "earliest",
        "expired": 0,
    }


def _partition(partition: int, outcome: str, target_offset: int | None) -> PartitionSync:
    return PartitionSync(
        group_id="billing",
        source_topic="orders",
        partition=partition,
        source_offset=40,
        metadata=None,
        source_end=100,
        target_topic="src.orders",
        target_offset=target_offset,
        previous_target_offset=None,
        translation="within" if target_offset is not None else None,
        translated_by="run-1",
        action=WRITE,
        outcome=outcome,
        reason=None if target_offset is not None else "beyond the verified copy",
        proof=SAME_RECORD if target_offset is not None else None,
    )


def _result(*partitions: PartitionSync, dry_run: bool = False) -> GroupSyncResult:
    group = GroupSync("billing", "Empty", False, "Empty", False, partitions, ignored_topics=("other",))
    return GroupSyncResult("groups-20260301T020000Z-1a2b3c", None, "src", "tgt", dry_run, False, (group,))


def test_group_sync_document_per_group_and_partition() -> None:
    doc = group_sync_document(_result(_partition(0, SYNCED, 38), _partition(1, NOT_TRANSLATABLE, None)))
    assert (doc["command"], doc["sync_id"], doc["recorded"], doc["verdict"], doc["exit_code"]) == (
        "groups sync",
        "groups-20260301T020000Z-1a2b3c",
        True,
        "incomplete",
        EXIT_MISMATCH,
    )
    assert doc["totals"] == {"groups": 1, "partitions": 2, "not_synced": 1}
    [group] = doc["groups"]
    assert group["group_id"] == "billing" and group["ignored_topics"] == ["other"]
    first, second = group["partitions"]
    assert (first["source_offset"], first["lag"], first["target_offset"], first["ok"]) == (40, 60, 38, True)
    assert (second["outcome"], second["ok"], second["reason"]) == (NOT_TRANSLATABLE, False, "beyond the verified copy")


def test_a_dry_run_sync_names_no_sync_id_it_could_not_show() -> None:
    result = _result(_partition(0, WOULD_SYNC, 38), dry_run=True)
    doc = group_sync_document(result)
    assert doc["sync_id"] is None and doc["recorded"] is False and doc["verdict"] == "would_sync"
    line = verdict_line(result)
    assert result.sync_id not in line
    assert line == "Group sync dry run (not recorded): 1 group, 1 partition would be synced and proven."


def test_group_show_document_has_the_shape_of_a_sync() -> None:
    row = {
        **_partition(0, SYNCED, 38).to_dict(),
        "sync_id": "s1",
        "run_id": None,
        "synced_at": datetime(2026, 3, 1, 2, 0, tzinfo=UTC),  # as the ledger gives every time (UtcDateTime)
        "source_cluster_id": "src",
        "target_cluster_id": "tgt",
    }
    doc = group_show_document("s1", [row], EXIT_OK)
    assert doc["synced_at"] == "2026-03-01T02:00:00+00:00" and doc["verdict"] == "synced"
    synced = group_sync_document(_result(_partition(0, SYNCED, 38)))
    assert doc["groups"] == [{"group_id": "billing", "partitions": synced["groups"][0]["partitions"]}]
    assert doc["totals"] == {"groups": 1, "partitions": 1, "not_synced": 0}


def test_cutover_document_of_a_refusal_keeps_the_report_and_the_exit_code(tmp_path: Path) -> None:
    end = CutoverEnd("refused", EXIT_BAD_INPUT, "Cutover refused (1 problem)", report=tmp_path / "report.html")
    doc = cutover_document("cutover", "cutover-1", end)
    assert doc["status"] == "refused" and doc["exit_code"] == 2 and doc["report"] == str(tmp_path / "report.html")
    assert doc["final_run"] is None and doc["groups"] == []
    assert final_run("run-9", True, None) == {"run_id": "run-9", "verified": True, "report": None}


def test_emit_writes_one_document_and_refuses_what_it_cannot_shape() -> None:
    out = io.StringIO()
    emit({"at": datetime(2026, 3, 1, tzinfo=UTC), "path": Path("/x")}, out)
    assert json.loads(out.getvalue()) == {"at": "2026-03-01T00:00:00+00:00", "path": "/x"}
    with pytest.raises(TypeError, match="set is not JSON"):
        emit({"bad": {1}}, io.StringIO())


# -- the commands, on a real SQLite ledger ----------------------------------------------------------


@pytest.fixture
def ledger_with_a_run(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    ledger = Ledger.open(url)
    first = plan("run-1", 0, 100, 0)
    ledger.start_run(first, trigger="cli")
    ledger.record_topic(first, first.topics[0], *outcomes(first, {0: True, 1: True}))
    return url


def test_history_json_is_the_only_thing_on_stdout(ledger_with_a_run: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "--ledger", ledger_with_a_run, "--output", "json"]) == EXIT_OK
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert doc["schema"] == SCHEMA and doc["command"] == "history"
    assert [r["run_id"] for r in doc["runs"]] == ["run-1"] and doc["group_syncs"] == [] and doc["leases"] == []
    assert doc["runs"][0]["started_at"].endswith("+00:00")
    assert main(["history", "--cutovers", "--ledger", ledger_with_a_run, "--output", "json"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out) == {"schema": SCHEMA, "command": "history", "cutovers": []}


def test_report_json_names_the_files_it_wrote(
    ledger_with_a_run: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["report", "run-1", "--ledger", ledger_with_a_run, "--report-dir", str(tmp_path / "r"), "--output", "json"]
    assert main(argv) == EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    assert Path(doc["report"]["html"]).is_file() and doc["report"]["sha256"].startswith("sha256:")
    verify = ["report", "verify", doc["report"]["json"], "--ledger", ledger_with_a_run, "--output", "json"]
    assert main(verify) == EXIT_OK
    checked = json.loads(capsys.readouterr().out)
    assert checked["command"] == "report verify" and checked["ok"] is True
    Path(doc["report"]["json"]).write_text("{}")
    assert main(verify) == EXIT_MISMATCH
    assert json.loads(capsys.readouterr().out)["ok"] is False


@pytest.mark.parametrize(
    "argv",
    [
        ["groups", "show", "nope"],
        ["report", "run-unknown"],
        ["history", "--limit", "0"],
    ],
)
def test_bad_input_with_json_is_exit_2_one_line_on_stderr_and_nothing_on_stdout(
    argv: list[str], ledger_with_a_run: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = None
    try:
        code = main([*argv, "--ledger", ledger_with_a_run, "--output", "json"])
    except SystemExit as exc:  # a usage error: argparse exits
        code = exc.code
    captured = capsys.readouterr()
    assert code == EXIT_BAD_INPUT
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1 and captured.err.startswith("error: ")


def test_failback_of_a_refused_cutover_is_bad_input_no_document_and_no_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found before the failback's pre-flight records anything: exit 2, one line, nothing written (no report)."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    ledger = Ledger.open(url)
    ledger.start_cutover(
        "cutover-1",
        {
            "trigger": "cli",
            "params": {},
            "source_cluster_id": "src-cluster",
            "source_bootstrap": "127.0.0.1:1",
            "target_cluster_id": "tgt-cluster",
            "target_bootstrap": "127.0.0.1:2",
        },
    )
    ledger.update_cutover("cutover-1", finished=True, status="refused", message="orders is still written to")
    reports = tmp_path / "reports"
    argv = ["failback", "--cutover", "cutover-1", "--ledger", url, "--state-dir", str(tmp_path)]
    assert main([*argv, "--report-dir", str(reports), "--output", "json"]) == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.strip().splitlines()
    assert "has status 'refused'; only a completed cutover can be failed back" in line
    assert not reports.exists()
    assert ledger.cutover("cutover-1")["failback_status"] is None
