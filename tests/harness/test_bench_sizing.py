"""harness/bench/sizing.py: the sizing guide's figures from a results file, each with its key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.bench import sizing

RESULTS = {
    "created_at": "2026-11-25T20:00:00+00:00",
    "machine": {"cpus_usable": 2, "cpu_model": "test", "broker": "test"},
    "copy": {"records": 1000, "project": {"records_per_second": 100_000.0, "mb_per_second": 20.0,
                                          "median_plan_and_topics_seconds": 0.5, "median_spark_startup_seconds": 2.0,
                                          "samples": [
        {"records": 1000, "partition_seconds_sum": 0.05}, {"records": 1000, "partition_seconds_sum": 0.1},
        {"records": 1000, "partition_seconds_sum": 0.02},
    ]}},
    "large_records": {"verify": {"records_per_second": 4_000.0, "mb_per_second": float("nan")}},
    "scale": {"whole_1000_seconds": 12.5, "whole_topics": 1000},
    "many_topics": {"wall_seconds": 5.0, "topics": 100},
}  # fmt: skip


def test_rates_are_per_core_and_name_their_keys() -> None:
    rows = {prefix: (records, mb) for _, prefix, records, mb in sizing.rates(RESULTS)}
    assert rows["copy.project"] == (50_000.0, 10.0)
    assert rows["large_records.verify"] == (2_000.0, None)  # NaN (no data) is no figure
    assert rows["cluster.archived.copy"] == (None, None)  # the run lacks the scenario
    assert sizing.task_rate(RESULTS) == pytest.approx(20_000.0)  # median of 20k, 10k, 50k per task-second


def test_fixed_costs() -> None:
    fixed = sizing.fixed_costs(RESULTS)
    assert fixed["startup_seconds"] == 2.5  # scenario 1's, as the run lacks scenario 5
    assert fixed["startup_keys"] == sizing.STARTUP_KEYS[1]
    assert fixed["topic_wall_seconds"] == 0.0125
    assert fixed["topic_core_seconds"] == pytest.approx((12.5 - 2.5) * 2 / 1000)
    assert fixed["partition_records_per_second"] is None
    assert fixed["many_topics_seconds_per_topic"] == 0.05
    whole = {**RESULTS, "whole": {"cli": {"median_parts": {"plan": 0.2, "startup": 1.8}}}}
    whole["one_partition"] = {"records": 2_000_000, "cli": {"median_wall_seconds": 20.0}}
    fixed = sizing.fixed_costs(whole)
    assert (fixed["startup_seconds"], fixed["startup_keys"]) == (2.0, sizing.STARTUP_KEYS[0])
    assert fixed["partition_records_per_second"] == 100_000


def test_the_report_and_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(RESULTS).replace("NaN", "null"))
    assert sizing.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "| copy, 200 B records (scenario 1) | 50,000 | 10.00 | `copy.project.records_per_second`" in out
    assert sizing.main([str(tmp_path / "none.json")]) == 2
    assert "run `make bench` first" in capsys.readouterr().err


def test_help_is_help_not_a_file_name(capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as ended:
        sizing.main(["--help"])
    assert ended.value.code == 0 and "usage: python -m harness.bench.sizing" in capsys.readouterr().out
