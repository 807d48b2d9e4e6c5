"""The bench's replicated scenario (9), its pure parts: the order of the tools, the perf tools' output read,
their commands, MM2's replication factor, the medians, ratios and table. No broker, no timing."""

from __future__ import annotations

import math

import pytest

from harness.bench.mirrormaker import tools as mm2_tools
from harness.bench.replicated import report, tools

# kafka-consumer-perf-test 4.2.1 prints its header and one line (the times hold spaces and colons, no commas).
CONSUMER_OUTPUT = """\
start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, \
fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
2026-11-27 15:30:01:123, 2026-11-27 15:30:05:623, 19.0735, 4.2386, 100000, 22222.2222, 3012, 1488, 12.8182, \
67204.3011
"""
PRODUCER_OUTPUT = """\
49105 records sent, 9821.0 records/sec (1.87 MB/sec), 1203.4 ms avg latency, 2041.0 ms max latency.
100000 records sent, 40000.000000 records/sec (7.63 MB/sec), 812.50 ms avg latency, 2041.00 ms max latency, \
700 ms 50th, 1900 ms 95th, 2000 ms 99th, 2041 ms 99.9th.
"""


def test_each_tool_goes_first_in_turn() -> None:
    orders = [tools.rotation(i) for i in range(4)]
    assert [o[0] for o in orders] == ["ours", "mirrormaker", "ceiling", "ours"]
    assert all(sorted(o) == sorted(tools.TOOLS) for o in orders)


def test_the_consumer_perf_tests_result_line_is_read_by_its_header() -> None:
    parsed = tools.parse_consumer_perf("some warning\n" + CONSUMER_OUTPUT)
    assert parsed["data.consumed.in.nMsg"] == 100_000
    assert parsed["fetch.nMsg.sec"] == pytest.approx(67204.3011)
    assert "start.time" not in parsed


def test_the_producer_perf_tests_last_line_counts_not_its_progress_lines() -> None:
    parsed = tools.parse_producer_perf(PRODUCER_OUTPUT)
    assert parsed["records"] == 100_000
    assert parsed["records_per_second"] == 40_000
    assert parsed["seconds"] == 2.5
    assert parsed["avg_latency_ms"] == 812.5


@pytest.mark.parametrize("parse", [tools.parse_consumer_perf, tools.parse_producer_perf])
def test_output_without_a_result_is_an_error(parse) -> None:
    with pytest.raises(ValueError, match="no kafka-"):
        parse("Exception in thread main org.apache.kafka.common.errors.TimeoutException\n")


def test_the_ceilings_producer_writes_as_ours_does_with_acks_all() -> None:
    from kafka_migration.kafka.settings import producer_settings

    command = tools.producer_perf_command("t:1", 1_000, 200)
    properties = dict(arg.split("=", 1) for arg in command[command.index("--command-property") + 1 :])
    ours = producer_settings({}, 1)
    assert properties["acks"] == ours["acks"] == "all"
    assert properties["compression.type"] == ours["compression.type"]
    assert int(properties["linger.ms"]) == ours["linger.ms"]
    assert int(properties["batch.size"]) == ours["batch.size"]
    assert command[command.index("--record-size") + 1] == "200"
    assert command[command.index("--topic") + 1] == tools.PERF_TOPIC


def test_mirrormaker_creates_every_topic_with_the_replication_factor_asked() -> None:
    one = mm2_tools.properties("s:1", "t:2", "x", 1)
    three = mm2_tools.properties("s:1", "t:2", "x", 1, replication_factor=3)
    factors = {k: v for k, v in three.items() if k.endswith("replication.factor")}
    assert len(factors) == 7 and set(factors.values()) == {"3"}
    assert {one[k] for k in factors} == {"1"}


# --- medians, ratios, table -----------------------------------------------------------------------


def _meter(seconds: float, cpu: float, rss: float, load: float = 1.0) -> dict:
    return {"seconds": seconds, "cpu_seconds": cpu, "peak_rss_mib": rss, "load1_at_start": load}


def _replicas(rf: int = 3) -> dict:
    return {"replication_factor_min": rf, "replication_factor_max": rf, "in_sync_min": rf, "min_insync_replicas": 2}


def _ceiling(consumer: float, producer: float) -> dict:
    return {
        "seconds": max(consumer, producer),
        "load1_at_start": 1.5,
        "consumer": {**_meter(consumer, 3.0, 300.0), "tool": {"nMsg.sec": 50_000.0, "fetch.nMsg.sec": 90_000.0}},
        "producer": {
            **_meter(producer, 5.0, 400.0),
            "tool": {"records_per_second": 40_000.0, "avg_latency_ms": 300.0},
        },
        "replicas": _replicas(),
    }


def _raw(**changes) -> dict:
    raw = {
        "ends": {str(p): 12_500 for p in range(8)},
        "source_replicas": _replicas(),
        "samples": {
            "ours": [
                {**_meter(s, 20.0, 1_100.0), "records": 100_000, "timings": None, "replicas": _replicas()}
                for s in (10.0, 12.0, 11.0)
            ],
            "mirrormaker": [
                {**_meter(s, 40.0, 600.0), "first_commit_seconds": s / 3, "replicas": _replicas()}
                for s in (30.0, 33.0, 31.0)
            ],
            "ceiling": [_ceiling(4.0, 5.0), _ceiling(6.0, 5.5), _ceiling(4.5, 5.0)],
        },
        "failures": [],
        "cleanup_seconds": [1.0, 2.0, 3.0],
        "ours_producer": {"acks": "all", "enable.idempotence": True, "linger.ms": 20, "compression.type": "lz4"},
        "warmup_replication_factor": {"source": 2, "target": 2},
        "cluster_start_seconds": 20.0,
        "load_at_start": [1.0, 1.0, 1.0],
        "heap_mb": 384,
    }
    raw.update(changes)
    return raw


def test_medians_and_the_ratios_as_throughput_ratios() -> None:
    s = report.summarize(_raw(), {})[report.NAME]
    assert s["records"] == 100_000
    assert s["ours"]["median_seconds"] == 11.0
    assert s["mirrormaker"]["median_seconds"] == 31.0
    assert s["mirrormaker"]["median_first_commit_seconds"] == pytest.approx(31 / 3)
    assert len(s["ours"]["samples"]) == 3  # each run's figures kept in results.json
    assert s["ceiling"]["median_seconds"] == 5.0  # per repetition the slower of consumer and producer: 5, 6, 5
    assert s["ceiling"]["consumer"]["median_seconds"] == 4.5
    assert s["ceiling"]["median_cpu_seconds"] == 8.0
    assert s["ceiling"]["median_peak_rss_mib"] == 400.0
    assert s["mm2_ratio"] == pytest.approx(31 / 11, abs=1e-3)
    assert s["ceiling_ratio"] == pytest.approx(5 / 11, abs=1e-3)
    assert s["ours"]["records_per_second"] == pytest.approx(100_000 / 11, abs=0.1)
    assert s["ours_replication_factor"] == 3
    assert s["median_cleanup_seconds"] == 2.0


def test_the_least_replication_factor_of_any_run_is_reported() -> None:
    raw = _raw()
    raw["samples"]["ours"][1]["replicas"] = _replicas(1)
    s = report.summarize(raw, {})[report.NAME]
    assert s["ours_replication_factor"] == 1
    assert not report.summarize({"ends": {}}, {})


def test_a_failed_mirrormaker_leaves_its_figures_empty_not_the_table() -> None:
    failure = {"repetition": 1, "error": "a MirrorMaker 2 task died"}
    raw = _raw(failures=[failure])
    raw["samples"]["mirrormaker"] = []
    s = report.summarize(raw, {})
    assert math.isnan(s[report.NAME]["mm2_ratio"])
    lines = report.table(s)
    assert any("MM2 FAILED (repetition 1" in line for line in lines)
    assert any("ours vs MM2 -x" in line for line in lines)


def test_the_table_the_notes_and_the_docs_table() -> None:
    s = report.summarize(_raw(), {})
    lines = report.table(s)
    assert lines[0].startswith("9 replicated RF3 100,000")
    assert any("ceiling: slower of the two" in line for line in lines)
    assert any("ours vs MM2 2.82x" in line and "ours vs ceiling 0.46x" in line for line in lines)
    assert any("a source topic of RF 2 got RF 2 from ours; our producer acks=all" in line for line in lines)
    assert "source topic's replication factor" in " ".join(report.notes(s))
    assert report.table({}) == [] and report.notes({}) == []
    rows = report.markdown([s, s])
    assert rows[2].startswith("| kafka-migrate run, launch → verified exit | 11.00 / 11.00 s |")
    assert "2.82× / 2.82×" in rows[-1]
