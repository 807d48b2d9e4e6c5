"""The bench's MirrorMaker 2 scenario, its pure parts: the topics and tasks it gives MM2, the wait for
MM2's group offsets to settle, the re-read/skip counting of a switched consumer, and the table cells.
No broker, no timing."""

from __future__ import annotations

import re

import pytest

from harness.bench.mirrormaker import positions as gp
from harness.bench.mirrormaker import report, tools

# --- what the scenario gives MM2 ------------------------------------------------------------------


def test_the_scenario_matches_its_topics_with_one_regex_without_commas() -> None:
    both = tools.topics_pattern(True)
    assert "," not in both  # MM2 splits its topics setting at commas
    for name in ("bench.mm2", "bench.mm2.tx", "bench.mm2.compact", "bench.mm2.low"):
        assert re.fullmatch(both, name), name
    for name in ("bench.mm2x", "bench.mm2.txt", "bench.whole"):
        assert not re.fullmatch(both, name), name
    assert re.fullmatch(tools.topics_pattern(False), "bench.mm2")
    assert not re.fullmatch(tools.topics_pattern(False), "bench.mm2.tx")


def test_mm2_runs_as_many_tasks_as_the_projects_local_task_slots() -> None:
    import os

    from kafka_migration.spark.submit import LOCAL_SLOTS_PER_CORE

    props = tools.properties("s:1", "t:2", tools.topics_pattern(True), 1)
    assert props["tasks.max"] == str(LOCAL_SLOTS_PER_CORE * len(os.sched_getaffinity(0)))
    assert props["source->target.groups"] == re.escape(gp.GROUP_PREFIX) + ".*"


def test_settled_once_the_value_held_for_the_quiet_time() -> None:
    assert not tools.settled([], 10.0, 5.0)
    history = [(0.0, "a"), (1.0, "b"), (2.0, "b"), (6.5, "b")]
    assert tools.settled(history, 6.5, 5.0)  # "b" since t=1
    assert not tools.settled(history, 5.5, 5.0)
    assert not tools.settled([*history, (7.0, "c")], 11.0, 5.0)


# --- re-read / skip counting ----------------------------------------------------------------------


def _log(offsets: list[int]) -> gp.SourceLog:
    return gp.SourceLog((o, gp.identity(b"k%d" % o, b"v")) for o in offsets)


def _at(offset: int) -> bytes:
    return gp.identity(b"k%d" % offset, b"v")


def test_exact_when_the_target_leads_to_the_next_source_record() -> None:
    log = _log(list(range(100)))
    assert gp.displacement(log, 40, _at(40)) == 0
    assert gp.displacement(log, 100, None) == 0  # at the end on both sides


def test_rereads_and_skips_are_counted_in_records() -> None:
    log = _log(list(range(100)))
    assert gp.displacement(log, 40, _at(37)) == -3  # re-reads 37, 38, 39
    assert gp.displacement(log, 40, _at(45)) == 5  # skips 40..44
    assert gp.displacement(log, 100, _at(1)) == -99  # a caught-up group sent back to offset 1
    assert gp.displacement(log, 90, None) == 10  # sent past the end: skips the last 10


def test_records_are_counted_not_offsets_across_markers_aborts_and_gaps() -> None:
    # Readable records at 0-3, 10-13 (5-9: aborted, 4 and 14: markers), 15, 30 (16-29 compacted away).
    log = _log([0, 1, 2, 3, 10, 11, 12, 13, 15, 30])
    assert gp.displacement(log, 5, _at(10)) == 0  # inside the aborted range: next readable is 10
    assert gp.displacement(log, 4, _at(10)) == 0  # at the marker
    assert gp.displacement(log, 20, _at(30)) == 0  # inside the compacted gap
    assert gp.displacement(log, 20, _at(13)) == -2  # re-reads 13 and 15, not 17 offsets
    assert gp.displacement(log, 5, _at(30)) == 5  # skips 10, 11, 12, 13, 15
    assert log.next_offset(16) == 30
    assert log.next_offset(31) is None


def test_a_target_record_the_source_does_not_hold_is_an_error() -> None:
    with pytest.raises(ValueError, match="not a record of the source"):
        gp.displacement(_log([0, 1]), 0, gp.identity(b"other", b"v"))


def test_identity_tells_null_from_empty_and_key_from_value() -> None:
    assert gp.identity(None, b"v") != gp.identity(b"", b"v")
    assert gp.identity(b"ab", b"c") != gp.identity(b"a", b"bc")
    assert gp.identity(b"k", None) != gp.identity(b"k", b"")
    with pytest.raises(ValueError, match="unique"):
        gp.SourceLog([(0, gp.identity(b"k", b"v")), (1, gp.identity(b"k", b"v"))])


def test_outcome_without_a_target_offset_says_what_the_reset_policy_would_do() -> None:
    log = _log(list(range(30)))
    position = gp.Position("low-behind", "low-traffic topic, 10 behind", "t", 0, 20)
    missing = gp.outcome(log, position, None, None)
    assert missing == {
        "target_offset": None,
        "rereads": None,
        "skips": None,
        "rereads_if_earliest": 20,
        "skips_if_latest": 10,
    }
    assert gp.describe(missing) == "no offset (earliest: re-reads 20; latest: skips 10)"
    assert gp.outcome(log, position, 7, _at(1)) == {"target_offset": 7, "rereads": 19, "skips": 0}
    assert gp.describe(gp.outcome(log, position, 7, _at(1))) == "re-reads 19"
    assert gp.describe(gp.outcome(log, position, 25, _at(25))) == "skips 5"
    assert gp.describe(gp.outcome(log, position, 20, _at(20))) == "exact"
    assert position.group == "bench.mm2.g.low-behind"


def test_compacted_gap_is_the_widest_run_of_missing_offsets() -> None:
    assert gp.compacted_gap([0, 1, 2, 3]) is None
    assert gp.compacted_gap([0, 1, 5, 6, 20, 21]) == (7, 19)


# --- the table's cells ----------------------------------------------------------------------------


def _result(target: int | None, moved: int = 0) -> dict[str, object]:
    if target is None:
        return {"target_offset": None, "rereads_if_earliest": 3, "skips_if_latest": 4}
    return {"target_offset": target, "rereads": max(0, -moved), "skips": max(0, moved)}


def test_cell_shows_the_median_outcome_its_offset_and_the_range() -> None:
    assert report.position_cell([_result(40), _result(40), _result(40)]) == "exact @40"
    cell = report.position_cell([_result(30, -10), _result(38, -2), _result(35, -5)])
    assert cell == "re-reads 5 @35 [-10..-2]"
    assert report.position_cell([_result(41, 1)]) == "skips 1 @41"
    assert report.position_cell([_result(None), _result(40)]) == "exact @40, no offset in 1/2"
    assert report.position_cell([_result(None)]) == "no offset (earliest: re-reads 3; latest: skips 4)"
    assert report.position_cell([]) == "-"
    assert report.signed(_result(30, -10)) == -10
    assert report.signed(_result(None)) is None


def test_the_order_of_the_tools_alternates() -> None:
    assert [tools.rotation(i) for i in range(3)] == [
        ("mirrormaker", "ours"),
        ("ours", "mirrormaker"),
        ("mirrormaker", "ours"),
    ]


def _raw() -> dict[str, object]:
    positions = [
        {
            "name": "busy-middle",
            "what": "middle of a busy partition",
            "topic": "bench.mm2",
            "partition": 0,
            "offset": 50,
        },
        {
            "name": "low-end",
            "what": "low-traffic topic, caught up",
            "topic": "bench.mm2.low",
            "partition": 0,
            "offset": 30,
        },
    ]
    mm2_run = {"seconds": 20.0, "cpu_seconds": 30.0, "peak_rss_mib": 400.0, "first_commit_seconds": 9.0}
    ours_run = {"seconds": 10.0, "cpu_seconds": 20.0, "peak_rss_mib": 900.0, "timings": {"wall": 9.5, "copy": 4.0}}
    exact = {"target_offset": 50, "rereads": 0, "skips": 0}
    reread = {"target_offset": 41, "rereads": 9, "skips": 0}
    missing = {"target_offset": None, "rereads": None, "skips": None, "rereads_if_earliest": 30, "skips_if_latest": 0}
    return {
        "bulk_ends": {0: 100, 1: 100},
        "positions": positions,
        "mirrormaker_properties": {"tasks.max": "4"},
        "move": {
            "mirrormaker": [{**mm2_run, "markers_on_target": 400, "counts_equal": True}] * 3,
            "ours": [ours_run] * 3,
        },
        "groups": {
            "mirrormaker": [
                {"positions": {"busy-middle": reread, "low-end": missing}, "groups_last_change_seconds": 25.0}
            ]
            * 3,
            "ours": [
                {
                    "positions": {"busy-middle": exact, "low-end": {**exact, "target_offset": 30}},
                    "seconds": 11.0,
                    "groups_sync_seconds": 2.0,
                }
            ]
            * 3,
        },
    }


def test_summary_and_table_from_the_raw_samples() -> None:
    summary = report.summarize(_raw(), {})
    s = summary["mm2"]
    assert s["ratio"] == 2.0  # MM2 s / ours s
    assert s["ours_not_exact"] == 0
    assert s["records"] == 200
    assert s["mirrormaker"]["median_first_commit_seconds"] == 9.0
    assert s["ours"]["median_groups_run_and_sync_seconds"] == 13.0
    assert s["groups"]["busy-middle"]["mirrormaker"]["cell"] == "re-reads 9 @41"
    assert s["groups"]["low-end"]["ours"]["cell"] == "exact @30"
    text = "\n".join(report.table(summary) + report.notes(summary))
    assert "MM2 s / ours s: 2.00x" in text
    assert "no offset (earliest: re-reads 30; latest: skips 0)" in text
    assert report.summarize({"move": {}}, {}) == {}
    assert report.table({}) == []


def test_failed_mirrormaker_runs_are_reported_and_left_out() -> None:
    raw = _raw()
    raw["move"]["mirrormaker"] = raw["move"]["mirrormaker"][:1]  # type: ignore[index]
    raw["failures"] = [
        {"phase": "move", "repetition": 2, "error": "a MirrorMaker 2 task died; its log's first error: X"}
    ]
    summary = report.summarize(raw, {})
    assert summary["mm2"]["mirrormaker"]["median_seconds"] == 20.0
    text = "\n".join(report.table(summary))
    assert "MM2 FAILED (move, repetition 2; left out): a MirrorMaker 2 task died" in text
    raw["move"]["mirrormaker"] = []  # type: ignore[index]
    text = "\n".join(report.table(report.summarize(raw, {})))
    assert "MirrorMaker 2 caught up" in text and "counts equal to the source -" in text


def test_markdown_of_two_runs_puts_them_side_by_side() -> None:
    first = report.summarize(_raw(), {})
    second_raw = _raw()
    second_raw["move"]["ours"] = [{**second_raw["move"]["ours"][0], "seconds": 8.0}] * 3  # type: ignore[index]
    second = report.summarize(second_raw, {})
    lines = report.markdown([first, second])
    assert lines[0] == "| what | MirrorMaker 2 | kafka-migrate | MM2 / ours | target |"
    assert "| 20.00 / 20.00 s | 10.00 / 8.00 s | 2.00× / 2.50× | ≥ 1.0× |" in lines[2]
    assert (
        "| middle of a busy partition | `bench.mm2[0]` @50 | exact @50 / exact @50 | re-reads 9 @41 / re-reads 9 @41 |"
        in lines
    )
    assert report.markdown([{}]) == []
