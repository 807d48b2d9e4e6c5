"""The bench's cluster scenario (4): its medians, ratios and table, the run's one application beside the steps.
No timing is measured here."""

from __future__ import annotations

from typing import Any

from harness.bench import cluster


def _step(seconds: float, wall: float, stop: float | None) -> dict[str, Any]:
    return {
        "records": 1000,
        "seconds": seconds,
        "wall_seconds": wall,
        "spark_startup_seconds": wall - seconds,
        "spark_stop_seconds": stop,
    }


def _sample(scale: float, with_migrate: bool = True) -> dict[str, Any]:
    sample = {"copy": _step(2.0 * scale, 6.0 * scale, 1.0), "verify": _step(1.0 * scale, 4.0 * scale, 1.0)}
    if with_migrate:
        sample["migrate"] = _step(2.5 * scale, 5.0 * scale, None)  # the CLI does not wait for Spark's stop
    return sample


def test_the_runs_application_is_compared_beside_the_steps() -> None:
    raw = {"local": [_sample(1.0)] * 3, "standalone": [_sample(1.0), _sample(2.0), _sample(2.0)]}
    summary = cluster.summarize(raw, {})["cluster"]
    assert summary["ratio_migrate_steady"] == 0.5  # 2.5 s locally, 5.0 s on the cluster (median)
    assert summary["ratio_migrate_with_startup"] == 0.5
    assert summary["ratio_copy_with_startup"] == 0.5
    assert summary["local"]["migrate"]["median_spark_stop_seconds"] is None
    assert summary["standalone"]["copy"]["median_spark_stop_seconds"] == 1.0
    lines = cluster.table({"cluster": summary})
    assert sum(line.startswith("4 cluster run 1,000") for line in lines) == 1
    assert sum("copy and verification in one application, Spark's stop not waited for" in line for line in lines) == 1
    assert sum("of which stop 1.0 s and 1.0 s" in line for line in lines) == 2  # copy and verify


def test_results_without_the_runs_application_still_summarize() -> None:
    """Results written before scenario 4 timed the run's application: the steps alone, no error."""
    raw = {"local": [_sample(1.0, with_migrate=False)], "standalone": [_sample(2.0, with_migrate=False)]}
    summary = cluster.summarize(raw, {})["cluster"]
    assert "migrate" not in summary["local"]
    assert "ratio_migrate_steady" not in summary
    assert not any("4 cluster run" in line for line in cluster.table({"cluster": summary}))


def test_the_archived_cluster_is_compared_beside_the_plain_one() -> None:
    """The third mode: the same cluster, executors started from a class-data archive; its own ratios and rows."""
    raw = {
        "local": [_sample(1.0)] * 3,
        "standalone": [_sample(2.0)] * 3,
        "archived": [_sample(1.25)] * 3,
    }
    summary = cluster.summarize(raw, {})["cluster"]
    assert summary["ratio_copy_with_startup"] == 0.5
    assert summary["ratio_copy_with_startup_archived"] == 0.8
    assert summary["ratio_migrate_steady_archived"] == 0.8
    lines = cluster.table({"cluster": summary})
    assert sum("(+ class archive)" in line for line in lines) == 3  # a row per step
    assert sum("standalone + archive/local: steady 0.80x, with start-up 0.80x" in line for line in lines) == 3


def test_results_without_the_archived_cluster_have_no_archived_rows() -> None:
    raw = {"local": [_sample(1.0)], "standalone": [_sample(2.0)]}
    summary = cluster.summarize(raw, {})["cluster"]
    assert "archived" not in summary and "ratio_copy_steady_archived" not in summary
    assert not any("archive" in line for line in cluster.table({"cluster": summary}))
