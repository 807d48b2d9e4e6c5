"""The sizing guide's figures (docs/sizing.md), derived from a ``make bench`` results file.

    .venv/bin/python -m harness.bench.sizing [.bench/results.json]

Prints, as Markdown, each figure the guide quotes with the results.json key it comes from, so
the guide can be brought up to date after any bench run (a new broker, a new machine). Rates
per core divide a scenario's rate by the cores the whole bench ran on (``machine.cpus_usable``),
which the brokers, the driver and the bench itself shared with the executors: per dedicated
executor core they are lower bounds.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT = Path(".bench/results.json")


def get(results: dict[str, Any], key: str) -> Any:
    """The value at a dotted key (``copy.project.records_per_second``); None when the run lacks it."""
    value: Any = results
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not math.isnan(value) else None


def rates(results: dict[str, Any]) -> Iterator[tuple[str, str, float | None, float | None]]:
    """(what, key prefix, records/s per core, MB/s per core) of each rate the guide quotes."""
    cores = _number(get(results, "machine.cpus_usable")) or 1.0
    for what, prefix in (
        ("copy, 200 B records (scenario 1)", "copy.project"),
        ("verify, 200 B records (scenario 3)", "verify.project"),
        ("copy, 10 KB records (scenario 8)", "large_records.copy"),
        ("verify, 10 KB records (scenario 8)", "large_records.verify"),
        ("copy, 200 B, standalone cluster, executors' archive (scenario 4)", "cluster.archived.copy"),
        ("verify, 200 B, standalone cluster, executors' archive (scenario 4)", "cluster.archived.verify"),
        ("copy, 200 B, local mode beside it (scenario 4)", "cluster.local.copy"),
        ("verify, 200 B, local mode beside it (scenario 4)", "cluster.local.verify"),
    ):
        records = _number(get(results, f"{prefix}.records_per_second"))
        mb = _number(get(results, f"{prefix}.mb_per_second"))
        yield (
            what,
            prefix,
            None if records is None else records / cores,
            None if mb is None else mb / cores,
        )


def task_rate(results: dict[str, Any]) -> float | None:
    """Records one task copies per second of its own time: scenario 1's records over the summed time of
    its partitions' copies (``copy.project.samples[].partition_seconds_sum``), median over the samples."""
    samples = get(results, "copy.project.samples") or []
    values = [s["records"] / s["partition_seconds_sum"] for s in samples if s.get("partition_seconds_sum")]
    return statistics.median(values) if values else None


CLUSTER_STARTUP = "cluster.standalone.copy.median_spark_startup_seconds"
LOCAL_STARTUP = "cluster.local.copy.median_spark_startup_seconds"
# A run's start-up not hidden behind planning: scenario 5's CLI parts; without scenario 5, scenario 1's
# plan and topics and Spark's start-up and stop around the copy (longer: nothing overlaps there).
STARTUP_KEYS = (
    ("whole.cli.median_parts.plan", "whole.cli.median_parts.startup"),
    ("copy.project.median_plan_and_topics_seconds", "copy.project.median_spark_startup_seconds"),
)


def fixed_costs(results: dict[str, Any]) -> dict[str, Any]:
    """A run's start-up (and the keys it came from), the wall and core time per small topic (scenario 6's
    whole run of one-partition topics; core time: less the start-up, times the cores), one partition's
    rate copied and verified (scenario 5), and scenario 2's whole run per topic."""
    cores = _number(get(results, "machine.cpus_usable")) or 1.0
    startup, startup_keys = None, STARTUP_KEYS[0]
    for keys in STARTUP_KEYS:
        found = [_number(get(results, key)) for key in keys]
        if None not in found:
            startup, startup_keys = sum(v for v in found if v is not None), keys
            break
    whole, topics = _number(get(results, "scale.whole_1000_seconds")), _number(get(results, "scale.whole_topics"))
    one, one_wall = (
        _number(get(results, "one_partition.records")),
        _number(get(results, "one_partition.cli.median_wall_seconds")),
    )
    many, count = _number(get(results, "many_topics.wall_seconds")), _number(get(results, "many_topics.topics"))
    return {
        "startup_seconds": startup,
        "startup_keys": startup_keys,
        "topic_wall_seconds": None if whole is None or not topics else whole / topics,
        "topic_core_seconds": None
        if whole is None or not topics
        else max(whole - (startup or 0.0), 0.0) * cores / topics,
        "partition_records_per_second": None if one is None or not one_wall else one / one_wall,
        "many_topics_seconds_per_topic": None if many is None or not count else many / count,
    }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def _fmt(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def report(results: dict[str, Any]) -> str:
    lines = [
        f"Bench run {results.get('created_at', '?')} on {get(results, 'machine.cpus_usable')} cores "
        f"({get(results, 'machine.cpu_model')}); broker: {get(results, 'machine.broker')}",
        "",
        "| what | records/s per core | MB/s per core | results.json keys (÷ machine.cpus_usable) |",
        "|---|---|---|---|",
    ]
    for what, prefix, records, mb in rates(results):
        keys = f"`{prefix}.records_per_second`, `{prefix}.mb_per_second`"
        lines.append(f"| {what} | {_fmt(records)} | {_fmt(mb, 2)} | {keys} |")
    fixed = fixed_costs(results)
    lines += [
        "",
        f"* a run's start-up not hidden behind planning: {_fmt(fixed['startup_seconds'], 1)} s "
        f"({' + '.join(f'`{key}`' for key in fixed['startup_keys'])})",
        f"* per small topic: {_fmt(_ms(fixed['topic_wall_seconds']), 1)} ms of wall time, "
        f"{_fmt(_ms(fixed['topic_core_seconds']), 1)} ms of core time past the start-up "
        "(`scale.whole_1000_seconds` ÷ `scale.whole_topics`; core time: less the start-up, × cores)",
        f"* one partition copied and verified, launch to exit: {_fmt(fixed['partition_records_per_second'])} "
        "records/s (`one_partition.records` ÷ `one_partition.cli.median_wall_seconds`)",
        f"* one copy task, its own time: {_fmt(task_rate(results))} records/s "
        "(`copy.records` ÷ `copy.project.samples[].partition_seconds_sum`, median)",
        f"* a standalone cluster's start-up and stop: {_fmt(_number(get(results, CLUSTER_STARTUP)), 1)} s against "
        f"{_fmt(_number(get(results, LOCAL_STARTUP)), 1)} s in local mode (`{CLUSTER_STARTUP}`, `{LOCAL_STARTUP}`)",
        f"* scenario 2, whole run per topic of 4 × 1,000 records: {_fmt(fixed['many_topics_seconds_per_topic'], 3)} s "
        "(`many_topics.wall_seconds` ÷ `many_topics.topics`)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.bench.sizing", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "results", nargs="?", type=Path, default=DEFAULT, help=f"a make bench results file (default {DEFAULT})"
    )
    path = parser.parse_args(argv).results
    if not path.is_file():
        print(f"{path}: no bench results; run `make bench` first.", file=sys.stderr)
        return 2
    print(report(json.loads(path.read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
