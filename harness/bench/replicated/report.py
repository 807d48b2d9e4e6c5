"""Scenario 9's figures: medians over the repetitions, the table the runner prints, its notes, and the
Markdown table of the benchmark docs from one or more results files (``python -m
harness.bench.replicated.report RUN1.json [RUN2.json]``).

Ratios are throughput ratios, as everywhere in the bench: the other's seconds over ours, > 1 when ours
is faster."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.bench.common import fmt, median, rates, ratio, table_row
from harness.bench.replicated.tools import PARTITIONS, REPLICATION_FACTOR
from harness.bench.whole.report import median_parts

NAME = "replicated"


def _figures(samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "median_seconds": median([s["seconds"] for s in samples]),
        "median_cpu_seconds": median([s["cpu_seconds"] for s in samples]),
        "median_peak_rss_mib": median([s["peak_rss_mib"] for s in samples]),
        "median_load1_at_start": median([s["load1_at_start"] for s in samples]),
        "runs": len(samples),
        "samples": list(samples),
    }


def _replication(samples: Sequence[Mapping[str, Any]]) -> int | None:
    """The least replication factor any run's target topic had (None without a run)."""
    found = [s["replicas"]["replication_factor_min"] for s in samples if "replicas" in s]
    return min(found) if found else None


def _ceiling(samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    consumer = [s["consumer"] for s in samples]
    producer = [s["producer"] for s in samples]
    pairs = list(zip(consumer, producer, strict=True))
    return {
        "median_seconds": median([s["seconds"] for s in samples]),  # per repetition the slower of the two
        "consumer": {
            **_figures([{**c, "load1_at_start": s["load1_at_start"]} for c, s in zip(consumer, samples, strict=True)]),
            "median_tool_records_per_second": median([c["tool"]["nMsg.sec"] for c in consumer]),
            "median_fetch_records_per_second": median([c["tool"]["fetch.nMsg.sec"] for c in consumer]),
        },
        "producer": {
            **_figures(
                [
                    {**p, "load1_at_start": s.get("producer_load1_at_start", s["load1_at_start"])}
                    for p, s in zip(producer, samples, strict=True)
                ]
            ),
            "median_tool_records_per_second": median([p["tool"]["records_per_second"] for p in producer]),
            "median_avg_latency_ms": median([p["tool"]["avg_latency_ms"] for p in producer]),
        },
        "median_cpu_seconds": median([c["cpu_seconds"] + p["cpu_seconds"] for c, p in pairs]),
        "median_peak_rss_mib": median([max(c["peak_rss_mib"], p["peak_rss_mib"]) for c, p in pairs]),
        "replication_factor": _replication(samples),
        "runs": len(samples),
    }


def summarize(raw: dict[str, Any], sizes: dict[str, int]) -> dict[str, Any]:
    samples = raw.get("samples") or {}
    if not samples.get("ours"):
        return {}
    records = sum(int(e) for e in raw["ends"].values())
    ours = {**_figures(samples["ours"]), "median_parts": median_parts(samples["ours"])}
    theirs = _figures(samples["mirrormaker"]) if samples["mirrormaker"] else {"median_seconds": float("nan")}
    ceiling = _ceiling(samples["ceiling"]) if samples["ceiling"] else {"median_seconds": float("nan")}
    return {
        NAME: {
            "records": records,
            "partitions": PARTITIONS,
            "replication_factor": REPLICATION_FACTOR,
            "source_replicas": raw["source_replicas"],
            "ours": {**ours, **rates(records, ours["median_seconds"])},
            "mirrormaker": {
                **theirs,
                "median_first_commit_seconds": median(
                    [s["first_commit_seconds"] for s in samples["mirrormaker"] if "first_commit_seconds" in s]
                ),
                **rates(records, theirs["median_seconds"]),
                "replication_factor": _replication(samples["mirrormaker"]),
            },
            "ceiling": {**ceiling, **rates(records, ceiling["median_seconds"])},
            "mm2_ratio": ratio(theirs["median_seconds"], ours["median_seconds"]),
            "ceiling_ratio": ratio(ceiling["median_seconds"], ours["median_seconds"]),
            "ours_replication_factor": _replication(samples["ours"]),
            "ours_min_insync_replicas": min(s["replicas"]["min_insync_replicas"] for s in samples["ours"]),
            "ours_producer": raw["ours_producer"],
            "warmup_replication_factor": raw["warmup_replication_factor"],
            "mirrormaker_failures": raw.get("failures", []),
            "cluster_start_seconds": raw["cluster_start_seconds"],
            "median_cleanup_seconds": median(raw.get("cleanup_seconds", [])),
            "load_at_start": raw.get("load_at_start"),
            "heap_mb": raw.get("heap_mb"),
        }
    }


def table(summary: dict[str, Any]) -> list[str]:
    if NAME not in summary:
        return []
    s = summary[NAME]
    o, m, c = s["ours"], s["mirrormaker"], s["ceiling"]
    n = s["records"]
    pad = f"{'':<28}"
    lines = [
        table_row(f"9 replicated RF3 {n:,}", "kafka-migrate run verified", n, o["median_seconds"], o["median_seconds"]),
        table_row("", "MirrorMaker 2 caught up", n, m["median_seconds"], m["median_seconds"]),
    ]
    if "consumer" in c:
        lines += [
            table_row("", "consumer-perf, source", n, c["consumer"]["median_seconds"], c["consumer"]["median_seconds"]),
            table_row(
                "", "producer-perf, acks=all", n, c["producer"]["median_seconds"], c["producer"]["median_seconds"]
            ),
        ]
    lines += [
        table_row("", "ceiling: slower of the two", n, c["median_seconds"], c["median_seconds"]),
        *(
            [
                f"{pad} the perf tools' own rates: consumer {fmt(c['consumer']['median_tool_records_per_second'], 0)} "
                f"rec/s (fetching {fmt(c['consumer']['median_fetch_records_per_second'], 0)}), producer "
                f"{fmt(c['producer']['median_tool_records_per_second'], 0)} rec/s (avg latency "
                f"{fmt(c['producer']['median_avg_latency_ms'], 0)} ms); the rows above: launch to exit"
            ]
            if "consumer" in c
            else []
        ),
        f"{pad} ours vs MM2 {fmt(s['mm2_ratio'], 2)}x (MM2 s / ours s, target >= 1.0), ours vs ceiling "
        f"{fmt(s['ceiling_ratio'], 2)}x (ceiling s / ours s)",
        f"{pad} CPU s ours {fmt(o['median_cpu_seconds'])}, MM2 {fmt(m.get('median_cpu_seconds', float('nan')))}, "
        f"perf tools {fmt(c.get('median_cpu_seconds', float('nan')))}; peak RSS ours "
        f"{fmt(o['median_peak_rss_mib'], 0)} MiB, MM2 {fmt(m.get('median_peak_rss_mib', float('nan')), 0)} MiB, "
        f"perf tools {fmt(c.get('median_peak_rss_mib', float('nan')), 0)} MiB",
        f"{pad} load at start (median) ours {fmt(o['median_load1_at_start'])}, MM2 "
        f"{fmt(m.get('median_load1_at_start', float('nan')))}; MM2 launch to its first commit "
        f"{fmt(m.get('median_first_commit_seconds', float('nan')))} s; ours "
        + ", ".join(f"{k} {v:.1f}" for k, v in o["median_parts"].items() if k != "wall")
        + " s (its own timings)",
        f"{pad} target topic RF: ours {s['ours_replication_factor']} (min.insync.replicas "
        f"{s['ours_min_insync_replicas']}), MM2 {m.get('replication_factor')}, perf {c.get('replication_factor')}; "
        f"a source topic of RF {s['warmup_replication_factor']['source']} got RF "
        f"{s['warmup_replication_factor']['target']} from ours; our producer acks={s['ours_producer']['acks']}",
        *(
            f"{pad} MM2 FAILED (repetition {f['repetition']}; left out): {f['error'][:200]}"
            for f in s["mirrormaker_failures"]
        ),
    ]
    return lines


def notes(summary: dict[str, Any]) -> list[str]:
    if NAME not in summary:
        return []
    s = summary[NAME]
    return [
        "",
        f"Scenario 9: replicated source and target (3 nodes each, -Xmx{s['heap_mb']}m, RF "
        f"{s['replication_factor']}, min.insync.replicas=2), started once ({s['cluster_start_seconds']:.0f} s); "
        "every run on a target whose topics (MM2's internal ones too) were deleted first (median "
        f"{fmt(s['median_cleanup_seconds'])} s, not timed). Ours: kafka-migrate run launch to verified exit; MM2: "
        "launch to caught up (RF 3 for its topics, exactly-once); ceiling: kafka-consumer-perf-test reading the "
        "records, kafka-producer-perf-test writing as many of 200 B (acks=all, lz4, linger 20 ms, 1 MiB batches), "
        "each launch to exit, the slower of the two. Our copy creates the target topic with the source topic's "
        "replication factor (capped by the target's brokers), not the target's default.",
    ]


# --- the benchmark docs ----------------------------------------------------------------------------


def markdown(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """The scenario's table for the docs from one or more results.json files (cells "run 1 / run 2")."""
    runs = [r[NAME] for r in results if NAME in r]
    if not runs:
        return []

    def cells(path: tuple[str, ...], digits: int = 1, unit: str = "") -> str:
        values = []
        for r in runs:
            value: Any = r
            for key in path:
                value = value.get(key, {}) if isinstance(value, Mapping) else float("nan")
            values.append(fmt(value if isinstance(value, float | int) else float("nan"), digits))
        return " / ".join(values) + unit

    def row(what: str, key: str) -> str:
        return (
            f"| {what} | {cells((key, 'median_seconds'), 2, ' s')} | {cells((key, 'records_per_second'), 0)} | "
            f"{cells((key, 'median_cpu_seconds'), 1, ' s')} | {cells((key, 'median_peak_rss_mib'), 0, ' MiB')} |"
        )

    def times(key: str) -> str:
        return " / ".join(fmt(r[key], 2) + "×" for r in runs)

    first = runs[0]
    return [
        "| tool | median s | records/s | CPU s | peak RSS |",
        "|---|---|---|---|---|",
        row("kafka-migrate run, launch → verified exit", "ours"),
        row("MirrorMaker 2, launch → caught up", "mirrormaker"),
        f"| kafka-consumer-perf-test, {first['records']:,} from the source | "
        f"{cells(('ceiling', 'consumer', 'median_seconds'), 2, ' s')} | "
        f"{cells(('ceiling', 'consumer', 'median_tool_records_per_second'), 0)} (its own) | "
        f"{cells(('ceiling', 'consumer', 'median_cpu_seconds'), 1, ' s')} | "
        f"{cells(('ceiling', 'consumer', 'median_peak_rss_mib'), 0, ' MiB')} |",
        f"| kafka-producer-perf-test, {first['records']:,} × 200 B, acks=all | "
        f"{cells(('ceiling', 'producer', 'median_seconds'), 2, ' s')} | "
        f"{cells(('ceiling', 'producer', 'median_tool_records_per_second'), 0)} (its own) | "
        f"{cells(('ceiling', 'producer', 'median_cpu_seconds'), 1, ' s')} | "
        f"{cells(('ceiling', 'producer', 'median_peak_rss_mib'), 0, ' MiB')} |",
        row("ceiling: the slower of the two", "ceiling"),
        "",
        f"ours vs MirrorMaker 2 (MM2 s / ours s): {times('mm2_ratio')}; "
        f"ours vs the ceiling (ceiling s / ours s): {times('ceiling_ratio')}.",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    import json
    import sys
    from pathlib import Path

    paths = list(argv if argv is not None else sys.argv[1:]) or [".bench/results.json"]
    print("\n".join(markdown([json.loads(Path(p).read_text()) for p in paths])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
