"""Cutover decisions on plain data: quiet topics, idle groups, the recorded ends, failback's way back."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kafka_migration.cutover.point import (
    Cutover,
    CutoverTopic,
    PartitionEnds,
    combine_segments,
    cutover_topics,
    invert,
)
from kafka_migration.cutover.preflight import (
    Preflight,
    active_group_problems,
    groups_on_topics,
    is_active,
    moved_partitions,
    open_transactions,
    quiet_problems,
)
from kafka_migration.cutover.report import build_cutover_report, checklist, generate_cutover_report
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.ledger import Ledger
from kafka_migration.model.checkpoints import Checkpoint
from kafka_migration.model.config import MigrationOptions
from kafka_migration.model.offsets import MappedSegment, translate_position
from kafka_migration.reports.signoff import verify_report
from tests.unit.ledger.test_ledger import outcomes, plan


def test_moved_partitions_and_open_transactions_name_topics_partitions_and_offsets() -> None:
    before = {("orders", 0): (10, 10), ("orders", 1): (5, 5), ("quiet", 0): (3, 3)}
    after = {("orders", 0): (12, 12), ("orders", 1): (5, 5), ("quiet", 0): (3, 3), ("new", 0): (1, 1)}
    moved = moved_partitions(before, after)
    assert moved == {"orders": [(0, 10, 12)], "new": [(0, 0, 1)]}
    assert open_transactions({("pay", 1): (9, 4), ("pay", 0): (3, 3)}) == {"pay": [1]}
    problems = quiet_problems(moved, {"pay": [1]}, 5, "source")
    assert problems[0].startswith("source topic new is still written to: 1 new offset within 5 s in partition 0 ")
    assert "orders" in problems[1] and "[0] 10 -> 12" in problems[1] and "stop its producers" in problems[1]
    assert "open transaction in partition 1:" in problems[2]
    assert quiet_problems({}, {}, 5, "source") == []


def test_groups_are_active_by_state_whatever_the_member_list_says() -> None:
    assert is_active("STABLE", 0)  # the state decides, even for an answer that lists no member
    assert is_active("PREPARING_REBALANCE", 0) and is_active("EMPTY", 1)
    assert not is_active("EMPTY", 0) and not is_active("dead", 0)
    problems = active_group_problems(
        {"source": {"billing": ("STABLE", 0), "idle": ("EMPTY", 0)}, "target": {"audit": ("COMPLETING_REBALANCE", 2)}}
    )
    assert len(problems) == 2
    assert "1 consumer group has active members on the source cluster: billing (STABLE, 0 members)" in problems[0]
    assert "audit" in problems[1] and "target cluster" in problems[1] and "Stop these consumers" in problems[1]


def test_groups_are_selected_by_pattern_and_by_offsets_on_the_topics() -> None:
    offsets = {"a": {("orders", 0): 1}, "b": {("other", 0): 1}, "c.x": {("orders", 1): 4}, "d": {}}
    assert groups_on_topics(offsets, offsets.__getitem__, ["orders"], None, None) == ("a", "c.x")
    assert groups_on_topics(offsets, offsets.__getitem__, ["orders"], "c.*", None) == ("c.x",)
    assert groups_on_topics(offsets, offsets.__getitem__, ["orders"], ".*", "a") == ("c.x",)
    with pytest.raises(ConfigurationError, match="not a valid regular expression"):
        groups_on_topics(offsets, offsets.__getitem__, ["orders"], "(", None)


def test_preflight_round_trips_through_xcom_json() -> None:
    checked = Preflight("source", ("orders",), {("orders", 0): 7}, ("g",), {"source": {"g": "EMPTY"}})
    assert Preflight.from_dict(checked.to_dict()) == checked


def test_cutover_ends_come_from_the_checkpoints_and_must_reach_the_quiet_end() -> None:
    cps = {("orders", 0, "copy.orders"): Checkpoint(10, 8, "r"), ("orders", 1, "copy.orders"): Checkpoint(4, 4, "r")}
    topics, problems = cutover_topics([("orders", "copy.orders", [0, 1])], cps, {("orders", 0): 10, ("orders", 1): 4})
    assert problems == []
    assert topics == (CutoverTopic("orders", "copy.orders", (PartitionEnds(0, 10, 8), PartitionEnds(1, 4, 4))),)
    _, problems = cutover_topics([("orders", "copy.orders", [0, 1, 2])], cps, {("orders", 0): 11})
    assert problems == [
        "orders has no verified checkpoint to copy.orders in partition 2: the final run did not verify them. Look at "
        "the run's report, fix the cause and run the cutover again.",
        "orders is not verified up to its end in partition 0 ([0] verified below offset 10, end offset 11): the "
        "final run did not reach the source end. Run the cutover again.",
    ]


def _cutover(status: str = "completed") -> Cutover:
    return Cutover(
        cutover_id="cutover-1",
        source_cluster_id="src-cluster",
        source_bootstrap="s:9092",
        target_cluster_id="tgt-cluster",
        target_bootstrap="t:9092",
        status=status,
        run_id="run-1",
        topics=(CutoverTopic("orders", "copy.orders", (PartitionEnds(0, 100, 99), PartitionEnds(1, 100, 100))),),
        groups=("billing",),
    )


def test_failback_continues_in_reverse_exactly_at_the_cutover_point() -> None:
    cutover = _cutover()
    assert cutover.reverse_checkpoints() == {
        ("copy.orders", 0, "orders"): Checkpoint(99, 100, "cutover-1"),
        ("copy.orders", 1, "orders"): Checkpoint(100, 100, "cutover-1"),
    }
    options = MigrationOptions.from_mapping(cutover.failback_options())
    assert options.target_name("copy.orders") == "orders"  # a template cannot strip the prefix; the map can
    assert options.include == r"copy\.orders"
    assert cutover.written_since({("orders", 0): 100, ("orders", 1): 99}) == []
    (problem,) = cutover.written_since({("orders", 0): 103})
    assert problem.startswith(
        "source topic orders received 3 offsets after the cutover, in partition 0 (end offset at the cutover -> now: "
        "[0] 100 -> 103). Someone still writes to the original cluster: stop them."
    )
    assert "delete" not in problem.lower() and "remove" not in problem.lower()  # the original cluster keeps its data
    assert "kafka-migrate run --source t:9092 --target s:9092 --include 'copy\\.orders'" in problem
    retried = replace(cutover, failback_status="failed")  # a failback that may have copied part of the way
    assert retried.written_since({("orders", 0): 103}) == []
    with pytest.raises(ConfigurationError, match="only a completed cutover"):
        _cutover("refused").ready_for_failback()
    with pytest.raises(ConfigurationError, match="two topics to one target"):
        MigrationOptions(topic_map={"a": "x", "b": "x"})
    with pytest.raises(ConfigurationError, match="not a legal Kafka topic name"):
        MigrationOptions(topic_map={"a": "bad name"})


def test_inverted_forward_segments_translate_target_positions_back_exactly() -> None:
    # forward: source 0..49 -> target 0..49, marker at 50, source 51..100 -> target 50..99 (run-1);
    # then source 101..110 -> target 100..109 (run-2); the cutover is at source 111 / target 110.
    forward = {
        ("orders", 0, "copy.orders"): [
            MappedSegment("run-1", 0, 101, 0, 100, ((0, 0), (51, 50))),
            MappedSegment("run-2", 101, 111, 100, 110, ((101, 100),)),
        ]
    }
    cutover = Cutover(
        "c",
        "src",
        "s",
        "tgt",
        "t",
        "completed",
        "run-2",
        (CutoverTopic("orders", "copy.orders", (PartitionEnds(0, 111, 110),)),),
    )
    # failback: target 110..119 -> source 111..120
    reverse = {("copy.orders", 0, "orders"): [MappedSegment("fb", 110, 120, 111, 121, ((110, 111),))]}
    combined = combine_segments(reverse, forward, cutover)
    segments = combined["copy.orders", 0, "orders"]
    assert invert(forward["orders", 0, "copy.orders"][0]).points == ((0, 0), (50, 51))
    cases = {0: 0, 49: 49, 50: 51, 99: 100, 100: 101, 109: 110, 110: 111, 115: 116, 120: 121}
    for target_offset, source_offset in cases.items():
        found = translate_position(segments, target_offset)
        assert found.target_offset == source_offset, (target_offset, found)
    assert translate_position(segments, 121).kind == "beyond"


def test_checklist_lists_each_group_start_and_the_way_back() -> None:
    cutover = {
        "cutover_id": "cutover-1",
        "status": "completed",
        "params": {"quiet_seconds": 30},
        "run_id": "run-1",
        "groups": ["billing"],
        "target_bootstrap": "t:9092",
        "topics": [_cutover().topics[0].to_dict()],
    }
    rows = [
        {"group_id": "billing", "target_topic": "copy.orders", "partition": 0, "target_offset": 42, "outcome": "synced"}
    ]
    items = checklist(cutover, rows)
    steps = [i["step"] for i in items]
    assert steps[3] == "Switch producers to the target cluster (t:9092)"
    assert items[4] == {
        "step": "Consumers of group billing may start on the target",
        "done": None,
        "detail": "starts from copy.orders[0] at 42",
    }
    assert "kafka-migrate failback --cutover cutover-1" in items[-1]["detail"]
    assert "orders[0] 100 -> copy.orders[0] 99" in items[1]["detail"]
    back = [{"group_id": "billing", "target_topic": "orders", "partition": 0, "target_offset": 7, "outcome": "synced"}]
    failed_back = checklist(
        {**cutover, "failback_status": "completed", "failback_run_id": "fb", "source_bootstrap": "s:9092"}, rows, back
    )
    assert failed_back[5]["done"] is True and "failback completed, run fb" in failed_back[5]["detail"]
    assert failed_back[6]["step"] == "Switch producers back to the source cluster (s:9092)"
    assert failed_back[7]["detail"] == "starts from orders[0] at 7"
    refused = checklist({**cutover, "status": "refused", "topics": []}, [])
    assert refused[0]["done"] is None and "do NOT switch" in refused[3]["detail"]  # reasons not recorded: unknown
    assert refused[0]["detail"] == "not known: the cutover was refused"


def test_cutover_record_and_report_in_the_ledger(ledger_url: str, tmp_path: Path) -> None:
    ledger = Ledger.open(ledger_url)
    p = plan("run-1", 0, 100, 0)
    ledger.start_run(p, trigger="cli")
    ledger.record_topic(p, p.topics[0], *outcomes(p, {0: True, 1: True}))
    ledger.finish_run("run-1", "verified", 200)
    values = {
        "trigger": "cli",
        "params": {"include": "orders", "quiet_seconds": 5},
        "source_cluster_id": "src-cluster",
        "source_bootstrap": "s:9092",
        "target_cluster_id": "tgt-cluster",
        "target_bootstrap": "t:9092",
    }
    ledger.start_cutover("cutover-1", values)
    ledger.start_cutover("cutover-1", values)  # a retried task keeps one row
    cutover = _cutover()
    ledger.update_cutover(
        "cutover-1",
        finished=True,
        status="completed",
        run_id="run-1",
        groups=["billing"],
        topics=[t.to_dict() for t in cutover.topics],
    )
    (row,) = ledger.cutovers()
    assert Cutover.from_row(row).topics == cutover.topics and row["ended_at"] is not None

    seeded = ledger.seed_checkpoints("tgt-cluster", "src-cluster", cutover.reverse_checkpoints())
    assert seeded["copy.orders", 0, "orders"] == Checkpoint(99, 100, "cutover-1")
    later = {("copy.orders", 0, "orders"): Checkpoint(120, 121, "fb-run")}
    ledger.seed_checkpoints("tgt-cluster", "src-cluster", later)  # progress of a failback run
    again = ledger.seed_checkpoints("tgt-cluster", "src-cluster", cutover.reverse_checkpoints())
    assert again["copy.orders", 0, "orders"] == later["copy.orders", 0, "orders"]  # never moved back
    assert ledger.checkpoints("src-cluster", "tgt-cluster")["orders", 0, "copy.orders"].source_offset == 100

    files = generate_cutover_report(ledger, "cutover-1", tmp_path / "reports")
    report = build_cutover_report(ledger.cutover("cutover-1"), None, [])
    assert report["verdict"] == "CUTOVER COMPLETED" and report["cutover"]["run_id"] == "run-1"
    assert verify_report(files.json, ledger.cutover("cutover-1")["report_sha256"])[0]
    markdown = files.markdown.read_text()
    assert "# Kafka cutover report: CUTOVER COMPLETED" in markdown and "### Kafka migration report" in markdown
    assert "| `orders[0]` | 100 | `copy.orders[0]` | 99 |" in markdown
    assert "<h2>Final run</h2>" in files.html.read_text()


def test_a_failback_refusal_is_one_line_per_topic_with_its_partition_count() -> None:
    """Eleven partitions written after the cutover used to be eleven near-identical paragraphs."""
    many = replace(
        _cutover(),
        topics=(
            CutoverTopic("orders", "copy.orders", tuple(PartitionEnds(p, 100, 100) for p in range(11))),
            CutoverTopic("payments", "copy.payments", (PartitionEnds(0, 5, 5),)),
        ),
    )
    problems = many.written_since({**{("orders", p): 101 for p in range(11)}, ("payments", 0): 7})
    assert len(problems) == 2
    assert "received 11 offsets after the cutover, in partitions 0–10 (11 partitions)" in problems[0]
    assert "[0] 100 -> 101; [1] 100 -> 101; [2] 100 -> 101; [3] 100 -> 101; [4] 100 -> 101; and 6 more" in problems[0]
    assert "source topic payments received 2 offsets after the cutover, in partition 0 " in problems[1]
