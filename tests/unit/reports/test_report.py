"""The sign-off report: complete, deterministic, self-contained, and checkable against the ledger."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kafka_migration.ledger import Ledger
from kafka_migration.reports.signoff import build_report, generate_report, verify_report
from tests.unit.ledger.test_ledger import outcomes, plan


def _ledger_with_run(tmp_path: Path, match: dict[int, bool]) -> Ledger:
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    p = plan("run-<1>", 0, 100, 0)
    ledger.start_run(p, trigger="cli")
    ledger.record_topic(p, p.topics[0], *outcomes(p, match))
    ledger.finish_run(p.run_id, "verified" if all(match.values()) else "mismatch", 200)
    return ledger


def test_report_contents_and_verdicts(tmp_path: Path) -> None:
    ledger = _ledger_with_run(tmp_path, {0: True, 1: False})
    report = build_report(ledger.run("run-<1>"), ledger.run_segments("run-<1>"))
    assert report["verdict"] == "NOT VERIFIED"
    assert report["scope"]["source"] == {"cluster_id": "src-cluster", "bootstrap": "s:9092"}
    (topic,) = report["topics"]
    assert topic["verdict"] == "mismatch" and topic["records_copied"] == 200
    assert [p["status"] for p in topic["partition_details"]] == ["verified", "mismatch"]
    (difference,) = report["differences"]
    assert difference["partition"] == 1 and difference["first_source_offset"] == 0
    assert report["totals"]["partitions_not_verified"] == 1


def test_regenerated_report_is_byte_identical_and_tampering_is_caught(tmp_path: Path) -> None:
    ledger = _ledger_with_run(tmp_path, {0: True, 1: True})
    first = generate_report(ledger, "run-<1>", tmp_path / "reports")
    original = first.json.read_bytes()
    second = generate_report(ledger, "run-<1>", tmp_path / "again")
    assert second.json.read_bytes() == original and second.sha256 == first.sha256
    recorded = ledger.run("run-<1>").report_sha256  # type: ignore[union-attr]
    assert verify_report(first.json, recorded)[0]

    tampered = json.loads(original)
    tampered["topics"][0]["partition_details"][0]["target_records"] += 1
    first.json.write_text(json.dumps(tampered, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    ok, message = verify_report(first.json, recorded)
    assert not ok and "NOT the recorded report" in message


def test_html_is_self_contained_and_escapes_names(tmp_path: Path) -> None:
    ledger = _ledger_with_run(tmp_path, {0: True, 1: True})
    files = generate_report(ledger, "run-<1>", tmp_path / "reports")
    page = files.html.read_text()
    assert "run-&lt;1&gt;" in page and "run-<1>" not in page
    assert "<svg" in page and "<style>" in page
    assert not re.search(r"""(src|href)=['"]?(https?:)?//""", page)  # no external assets
    assert "<script" not in page
    markdown = files.markdown.read_text()
    assert markdown.startswith("# Kafka migration report: VERIFIED")
    assert "| `orders` | `copy.orders` | verified |" in markdown


def test_cli_report_regenerates_and_verify_catches_tampering(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from kafka_migration.cli import main

    _ledger_with_run(tmp_path, {0: True, 1: True})
    common = ["--ledger", f"sqlite:///{tmp_path / 'ledger.db'}", "--report-dir", str(tmp_path / "reports")]
    assert main(["report", "run-<1>", *common]) == 0
    path = tmp_path / "reports" / "run-<1>" / "report.json"
    assert main(["report", "verify", str(path), *common[:2]]) == 0
    assert "is the report the ledger recorded" in capsys.readouterr().out

    path.write_text(path.read_text().replace('"verdict": "VERIFIED"', '"verdict": "VERIFIED "'))
    assert main(["report", "verify", str(path), *common[:2]]) == 1
    assert "is NOT the recorded report" in capsys.readouterr().out
    assert main(["report", "no-such-run", *common]) == 2


def test_a_verification_that_could_not_read_is_could_not_verify(tmp_path: Path) -> None:
    """The ledger and the report keep "could not verify" apart from a mismatch, and a rerun picks it up."""
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    p = plan("run-1", 0, 100, 0)
    ledger.start_run(p, trigger="cli")
    copy, verify = outcomes(p, {0: True, 1: True})
    verify.partitions[1] = {
        **verify.partitions[1],
        "match": False,
        "error": "The source cluster s:9092 sent nothing for 5s",
        "first_difference": "verification could not read: The source cluster s:9092 sent nothing for 5s",
        "source_records": 0,
        "target_records": 0,
    }
    verify.status = "unverified"
    ledger.record_topic(p, p.topics[0], copy, verify)
    ledger.finish_run(p.run_id, "unverified", 200)
    report = build_report(ledger.run("run-1"), ledger.run_segments("run-1"))
    assert report["verdict"] == "COULD NOT VERIFY"
    (topic,) = report["topics"]
    assert topic["verdict"] == "could not verify"
    assert [x["status"] for x in topic["partition_details"]] == ["verified", "unverified"]
    assert report["totals"]["partitions_not_verified"] == 1
    assert "sent nothing" in report["differences"][0]["first_difference"]
    # The partition that could not be verified has no checkpoint: the next run starts it again.
    assert set(ledger.pending_segments("src-cluster", "tgt-cluster")) == {("orders", 1, "copy.orders")}
