"""harness/bench/scale.py and harness/kafka/metrics.py: scenario 6's sizes, request counts and table, from samples."""

from __future__ import annotations

from typing import Any

import pytest

from harness.bench import scale
from harness.kafka import metrics

RPS = "kafka.network:type=RequestMetrics,name=RequestsPerSec"
TT = "kafka.network:type=RequestMetrics,name=TotalTimeMs"


def test_request_totals_sum_versions_and_leave_out_the_control_plane(monkeypatch: pytest.MonkeyPatch) -> None:
    sample = {
        f"{RPS},request=Metadata,version=12:Count": 3.0,
        f"{RPS},request=Metadata,version=13:Count": 4.0,
        f"{RPS},request=Fetch,version=17:Count": 10.0,
        f"{RPS},request=FetchConsumer,version=17:Count": 10.0,  # the Fetch requests again
        f"{RPS},request=BrokerHeartbeat,version=1:Count": 50.0,  # the broker's own
        f"{TT},request=Metadata:Count": 7.0,
        f"{TT},request=Metadata:Mean": 2.5,
        f"{TT},request=Fetch:Count": 10.0,
        f"{TT},request=Fetch:Mean": 1.0,
    }
    monkeypatch.setattr(metrics, "read", lambda port, names, attributes: sample)
    assert metrics.request_totals(1) == {"Metadata": {"count": 7.0, "ms": 17.5}, "Fetch": {"count": 10.0, "ms": 10.0}}


def test_difference_keeps_what_happened_most_frequent_first() -> None:
    before = {"Metadata": {"count": 5.0, "ms": 10.0}, "Produce": {"count": 1.0, "ms": 1.0}}
    after = {
        "Metadata": {"count": 7.0, "ms": 14.0},
        "Produce": {"count": 1.0, "ms": 1.0},
        "ListOffsets": {"count": 9.0, "ms": 3.0},
    }
    assert metrics.difference(after, before) == {
        "ListOffsets": {"count": 9, "ms": 3.0},
        "Metadata": {"count": 2, "ms": 4.0},
    }


def test_sizes_and_patterns() -> None:
    assert scale.counts(10_000) == (100, 1000, 5000)
    assert scale.whole_counts(10_000) == (1000, 5000, 10_000)
    import re

    names = [scale.name(i) for i in range(10_000)]
    for count in (100, 1000, 5000, 10_000):
        assert sum(1 for n in names if re.fullmatch(scale.include(count), n)) == count


def test_plan_lines_counts_the_printed_plan_only() -> None:
    output = "Spark is starting ...\nPlan cli-1\n  source a\n  target b\n  5 topics\n\nRun files: x\n"
    assert scale._plan_lines(output) == 4


def _whole(topics: int, wall: float) -> dict[str, Any]:
    return {
        "topics": topics,
        "wall_seconds": wall,
        "peak_rss_mib": {"cli": 100.0, "spark_jvm": 300.0, "spark_python": 200.0, "tree": 600.0},
        "parts": {"wall": wall - 1, "plan": wall / 4, "copy": wall / 2, "overlap": 0.0},
        "plan_lines": 9,
        "requests": {
            "source": {"Fetch": {"count": topics, "ms": 1.0}},
            "target": {"Produce": {"count": topics, "ms": 2}},
        },
        "load1_at_start": 1.0,
    }


def test_summary_and_table_show_growth_the_wall_and_requests_per_topic() -> None:
    plan = {"topics": 0, "seconds": 0.0, "requests": {"source": {}, "target": {}}, "load1_at_start": 1.0}
    raw = {
        "planning": {str(n): [{**plan, "topics": n, "seconds": n / 1000}] for n in (100, 1000, 5000)},
        "whole": {"1000": [_whole(1000, 20.0)], "5000": [_whole(5000, 110.0)], "10000": [_whole(10_000, 230.0)]},
        "warm": {"1000": [_whole(1000, 9.0), _whole(1000, 12.0), _whole(1000, 9.5)]},
    }
    summary = scale.summarize(raw, {"scale_topics": 10_000})
    s = summary["scale"]
    assert s["whole_growth"] == 1.1  # 22 ms a topic at 5,000 over 20 at 1,000
    assert s["whole_10000_seconds"] == 230.0
    assert s["whole_topics"] == 1000 and s["whole_1000_seconds"] == 20.0  # the keys docs/sizing.md reads
    assert s["whole_requests_per_topic"]["10000"] == {"source": {"Fetch": 1.0}, "target": {"Produce": 1.0}}
    text = "\n".join(scale.table(summary))
    assert "whole run 10,000 topics: 230.0 s (23.0 ms/topic; plan 57.5, copy 115.0)" in text
    assert "requests per topic to the target: Produce 1" in text
    assert (
        "whole run per-topic growth 1,000->5,000: 1.10x (target <= 1.25); 10,000 topics 230.0 s (target < 120 s)"
        in text
    )
    assert s["whole_warm_1000_seconds"] == 9.5  # the median of the warmed-target runs, beside the fresh one's 20
    assert "whole run 1,000 topics, warmed target: 9.5 s (plan 2.4, copy 4.8; target <= 10 s)" in text
    met = {key: check(s[key.split(".")[1]]) for key, (_, check) in scale.TARGETS.items()}
    assert met == {
        "scale.planning_1000_seconds": True,
        "scale.planning_growth": True,
        "scale.whole_1000_seconds": False,
        "scale.whole_growth": True,
        "scale.whole_10000_seconds": False,
        "scale.whole_warm_1000_seconds": True,
    }
    del raw["warm"]  # a results file from before the warmed run: no figure, no error
    assert scale.summarize(raw, {"scale_topics": 10_000})["scale"]["whole_warm_1000_seconds"] is None
