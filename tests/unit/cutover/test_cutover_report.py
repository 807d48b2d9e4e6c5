"""The cutover report of a refused, failed and failed-back cutover, as the operator reads it (HTML and Markdown)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kafka_migration.cutover.preflight import active_group_reasons, quiet_reasons
from kafka_migration.cutover.refusal import FAILBACK_REFUSAL, REFUSAL, Reason, grouped, reasons_of, way_out
from kafka_migration.cutover.report import generate_cutover_report
from kafka_migration.exceptions import CutoverRefusedError
from kafka_migration.ledger import Ledger
from kafka_migration.reports.html import CSS
from kafka_migration.reports.signoff import verify_report

CLUSTERS = {
    "source_cluster_id": "src-cluster",
    "source_bootstrap": "s:9092",
    "target_cluster_id": "tgt-cluster",
    "target_bootstrap": "t:9092",
}


def _refusal() -> list[Reason]:
    """What the pre-flight saw: two topics written to (one also in a transaction), groups busy on both sides."""
    reasons = quiet_reasons({"payments": [(0, 1, 2)], "orders": [(0, 5, 9), (1, 2, 3)]}, {"orders": [2]}, 30, "source")
    return reasons + active_group_reasons(
        {"source": {"billing": ("STABLE", 2), "idle": ("EMPTY", 0)}, "target": {"audit": ("STABLE", 1)}}
    )


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")


def _refused(ledger: Ledger, trigger: str = "cli", **extra: Any) -> None:
    params = {"include": "orders|payments", "groups": None, "quiet_seconds": 30}
    ledger.start_cutover("cutover-1", {"trigger": trigger, "params": params, **CLUSTERS, **extra})
    error = CutoverRefusedError(_refusal())
    ledger.update_cutover(
        "cutover-1",
        finished=True,
        status="refused",
        message=str(error),
        params={**params, REFUSAL: reasons_of(error.reasons)},
    )


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_a_refused_cutover_reads_as_what_happened_and_the_safe_way_out(ledger: Ledger, tmp_path: Path) -> None:
    _refused(ledger)
    files = generate_cutover_report(ledger, "cutover-1", tmp_path / "reports")
    page = files.html.read_text()
    markdown = files.markdown.read_text()
    report = json.loads(files.json.read_text())
    assert verify_report(files.json, ledger.cutover("cutover-1")["report_sha256"])[0]

    # the look of every other report: the same stylesheet, a verdict badge, the clusters as a table
    assert CSS in page and "<span class='verdict bad'>CUTOVER REFUSED</span>" in page
    assert "<th>source</th><td><code>src-cluster</code></td>" in page

    # one item per problem, under the topic (in name order) or the consumer groups it names
    assert [g["about"] for g in report["refusal"]["problems"]] == [
        "source topic orders",
        "source topic payments",
        "consumer group billing on the source cluster",
        "consumer group audit on the target cluster",
    ]
    assert [len(g["problems"]) for g in report["refusal"]["problems"]] == [2, 1, 1, 1]
    reasons = page[page.index("<ul class='reasons'>") : page.index("</ul><h2>The safe way out")]
    assert reasons.count("<li><b>") == 4 and reasons.count("<li>") == 5 + 4
    assert "<li><b>source topic orders</b><ul><li>source topic orders is still written to: 5 new offsets" in reasons
    assert "open transaction in partition 2" in reasons
    assert "<li><b>consumer group billing on the source cluster</b>" in reasons and "idle" not in reasons
    assert "- **source topic orders**\n  - source topic orders is still written to" in markdown
    assert "  - 1 consumer group has active members on the target cluster: audit (STABLE, 1 member)." in markdown

    # the safe way out: stop what was named, run the cutover again; never a failback of what switched nothing
    assert report["refusal"]["way_out"] == [
        "Stop the producers of topics orders, payments on the source cluster (a transactional producer: commit or "
        "abort, or let transaction.timeout.ms end its transaction).",
        "Stop every consumer (all instances) of consumer group billing on the source cluster.",
        "Stop every consumer (all instances) of consumer group audit on the target cluster.",
        "Run the cutover again: kafka-migrate cutover with the same options.",
    ]
    assert "<ol class='way-out'><li>Stop the producers of topics orders, payments" in page
    assert "1. Stop the producers of topics orders, payments on the source cluster" in markdown
    for text in (_text(page), markdown):
        assert "kafka-migrate failback" not in text and "kafka_failback" not in text
        assert "None" not in text and "run None" not in text
        assert "no consumer group selected" not in text
        assert "nothing was switched and nothing was written" in text
    assert "No final run (the pre-flight refused the cutover before it)." in _text(page)
    assert "no final run (the pre-flight refused the cutover before it)" in markdown

    # the checklist names what blocked each step
    items = {i["step"]: i for i in report["checklist"]}
    producers = items["Producers stopped on the source"]
    assert producers["done"] is False and producers["detail"] == "still written to: source topics orders, payments"
    groups = items["Consumer groups idle on both clusters, offsets translated and proven"]
    assert groups["detail"] == "active members in billing on the source cluster; audit on the target cluster"
    final = items["Final incremental run verified up to the source end"]
    assert final["done"] is False and final["detail"] == "no final run: the pre-flight refused the cutover"
    assert not any("fail" in i["step"].lower() for i in report["checklist"])
    assert "refusal" not in report["cutover"]["params"]  # kept once, as the refusal section


def test_a_refused_airflow_cutover_says_to_trigger_its_dag_again(ledger: Ledger, tmp_path: Path) -> None:
    _refused(ledger, trigger="airflow", dag_id="kafka_cutover", dag_run_id="manual__1")
    files = generate_cutover_report(ledger, "cutover-1", tmp_path / "reports")
    report = json.loads(files.json.read_text())
    assert report["refusal"]["way_out"][-1] == "Run the cutover again: trigger DAG kafka_cutover with the same Params."
    assert "DAG kafka_cutover run manual__1" in files.html.read_text()


def test_a_refusal_that_names_only_groups_says_the_topics_were_quiet(ledger: Ledger, tmp_path: Path) -> None:
    params = {"include": "orders", "groups": "billing", "quiet_seconds": 5}
    ledger.start_cutover("cutover-1", {"trigger": "cli", "params": params, **CLUSTERS})
    reasons = active_group_reasons({"source": {"billing": ("STABLE", 1)}, "target": {}})
    ledger.update_cutover(
        "cutover-1",
        finished=True,
        status="refused",
        message=str(CutoverRefusedError(reasons)),
        params={**params, REFUSAL: reasons_of(reasons)},
    )
    report = json.loads(generate_cutover_report(ledger, "cutover-1", tmp_path / "r").json.read_text())
    producers, _, groups, *_ = report["checklist"]
    assert producers == {
        "step": "Producers stopped on the source",
        "done": True,
        "detail": "no source topic moved for 5 s",
    }
    assert groups["detail"] == "active members in billing on the source cluster"
    assert report["refusal"]["way_out"] == [
        "Stop every consumer (all instances) of consumer group billing on the source cluster.",
        "Run the cutover again: kafka-migrate cutover with the same options.",
    ]


def test_a_refusal_of_plain_text_is_one_item_and_still_no_failback(ledger: Ledger, tmp_path: Path) -> None:
    """An error that names no topic or group (a group pattern that matches nothing) is listed as it is."""
    params = {"include": "orders", "groups": "nobody", "quiet_seconds": 5}
    ledger.start_cutover("cutover-1", {"trigger": "cli", "params": params, **CLUSTERS})
    message = "No consumer group on the source cluster matches 'nobody' ..."
    ledger.update_cutover(
        "cutover-1", finished=True, status="refused", message=message, params={**params, REFUSAL: reasons_of([message])}
    )
    files = generate_cutover_report(ledger, "cutover-1", tmp_path / "r")
    report = json.loads(files.json.read_text())
    assert report["refusal"]["problems"] == [{"about": "Other", "problems": [message]}]
    assert report["refusal"]["way_out"] == [
        "Fix what the problems above name.",
        "Run the cutover again: kafka-migrate cutover with the same options.",
    ]
    groups = report["checklist"][2]
    assert groups["detail"] == "not translated: the cutover was refused before the groups were moved"
    assert "failback" not in files.markdown.read_text()


def test_a_failed_cutover_offers_no_failback_and_names_no_missing_run(ledger: Ledger, tmp_path: Path) -> None:
    ledger.start_cutover("cutover-1", {"trigger": "cli", "params": {"quiet_seconds": 5}, **CLUSTERS})
    ledger.update_cutover("cutover-1", finished=True, status="failed", message="the plan task of the final run failed")
    files = generate_cutover_report(ledger, "cutover-1", tmp_path / "r")
    report = json.loads(files.json.read_text())
    assert report["refusal"] is None
    last = report["checklist"][-1]
    assert last["step"] == "Keep producers and consumers on the source cluster, then run the cutover again"
    assert "there is nothing to fail back" in last["detail"]
    assert report["checklist"][1]["detail"] == "no final run"
    text = files.markdown.read_text()
    assert "kafka-migrate failback" not in text and "None" not in text and "no final run." in text


def test_a_refused_failback_lists_its_reasons_and_keeps_everyone_on_the_target(ledger: Ledger, tmp_path: Path) -> None:
    params = {"include": "orders", "quiet_seconds": 5}
    ledger.start_cutover("cutover-1", {"trigger": "cli", "params": params, **CLUSTERS})
    ledger.update_cutover("cutover-1", finished=True, status="completed", run_id=None, groups=["billing"])
    reasons = quiet_reasons({"copy.orders": [(0, 7, 8)]}, {}, 5, "target", "failback")
    reasons += active_group_reasons({"target": {"billing": ("STABLE", 1)}}, "failback")
    error = CutoverRefusedError(reasons, "Failback")
    ledger.update_cutover(
        "cutover-1",
        failback_status="refused",
        failback_message=str(error),
        params={**params, FAILBACK_REFUSAL: reasons_of(error.reasons)},
    )
    files = generate_cutover_report(ledger, "cutover-1", tmp_path / "r")
    report = json.loads(files.json.read_text())
    failback = report["failback"]
    assert [g["about"] for g in failback["refusal"]["problems"]] == [
        "target topic copy.orders",
        "consumer group billing on the target cluster",
    ]
    assert failback["refusal"]["way_out"][-1] == "Run the failback again: kafka-migrate failback --cutover cutover-1."
    assert "then run the failback again" in failback["refusal"]["problems"][0]["problems"][0]
    page = _text(files.html.read_text())
    assert "Failback: REFUSED" in page and "Run None" not in page and "None" not in page
    assert "The pre-flight refused the failback (2 problems): nothing was copied back and nothing was written. " in page
    assert "Producers and consumers stay on the target cluster." in page
    assert "Stop the producers of topic copy.orders on the target cluster" in files.markdown.read_text()


def test_grouping_keeps_each_topic_together_whatever_the_order_of_the_problems() -> None:
    reasons = [
        Reason("b moved", "source", topic="b"),
        Reason("a moved", "source", topic="a"),
        Reason("groups busy", "target", groups=("g1", "g2")),
        Reason("b in a transaction", "source", topic="b"),
    ]
    assert grouped(reasons) == [
        ("source topic a", ["a moved"]),
        ("source topic b", ["b moved", "b in a transaction"]),
        ("consumer groups g1, g2 on the target cluster", ["groups busy"]),
    ]
    assert way_out(reasons, "cutover", "again")[0].startswith("Stop the producers of topics a, b on the source cluster")
    assert Reason.from_dict(Reason("x", "source", groups=("g",)).to_dict()) == Reason("x", "source", groups=("g",))
