"""Scenario 7: large records, the project's copy and verification of M records of 10 KB.

Scenario 1 copies small records (200 B), where the cost per record (fetch, produce, per-record
Python work) bounds the rate; with 10 KB records the bytes do (compression, network, broker
writes, hashing in the verification). Both figures feed the sizing guide (docs/sizing.md):
records/s and MB/s per core for copy and verify, small and large records. Same path as
scenario 1 (build_plan, target topics, spark-submit of the copy step with the product's
default master, then the verify step), one 8-partition topic into a fresh target each
repetition; no baseline (scenario 1 compares the architecture).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.bench.common import SPARK, median, progress, rates, say
from harness.bench.copy_verify import project_copy, project_verify
from harness.bench.seeding import end_offsets, seed_topics

if TYPE_CHECKING:
    from harness.bench.session import Session

NAME = "large"
TOPIC = "bench.large"
PARTITIONS = 8
RECORD_BYTES = 10_000  # key + value
TARGETS: dict[str, Any] = {}


def seed(session: Session) -> None:
    records = session.sizes["large_records"]
    say(f"seeding {TOPIC}: {records:,} records of {RECORD_BYTES:,} B in {PARTITIONS} partitions")
    session.seeding[TOPIC] = round(
        seed_topics(session.source, {TOPIC: PARTITIONS}, records, size=RECORD_BYTES, rng_seed=17), 2
    )
    say(f"  seeded in {session.seeding[TOPIC]:.1f} s")


def run(session: Session, repeat: int) -> None:
    raw = session.raw.setdefault(NAME, [])
    expected = sum(end_offsets(session.source, {TOPIC: PARTITIONS}).values())
    for i in range(repeat):
        say(f"scenario 8 (large records), repetition {i + 1}/{repeat}")
        tgt = session.target.fresh()
        directory = session.run_dir()
        copy = project_copy(session.source, tgt, TOPIC, directory, session.verbose)
        if copy["records"] != expected:
            raise RuntimeError(f"large copy wrote {copy['records']} records, expected {expected}")
        progress("project copy of large records (in Spark)", copy)
        verify = project_verify(session.source, tgt, directory / "plan.json", directory, session.verbose)
        progress("project verify of large records (in Spark)", verify)
        raw.append({"copy": copy, "verify": verify})


def _rates(records: int, seconds: float) -> dict[str, float]:
    """``rates`` for RECORD_BYTES records (common.rates counts 200 B records)."""
    out = rates(records, seconds)
    out["mb_per_second"] = round(out["mb_per_second"] * RECORD_BYTES / 200, 2)
    return out


def summarize(raw: list[dict[str, Any]], sizes: dict[str, int]) -> dict[str, Any]:
    if not raw:
        return {}
    records = raw[0]["copy"]["records"]
    out: dict[str, Any] = {"records": records, "record_bytes": RECORD_BYTES, "partitions": PARTITIONS}
    for step in ("copy", "verify"):
        seconds = median([s[step]["seconds"] for s in raw])
        wall = median([s[step]["wall_seconds"] for s in raw])
        out[step] = {
            "median_seconds": seconds,
            "median_wall_seconds": wall,
            **_rates(records, seconds),
            "with_startup": _rates(records, wall),
            "samples": [s[step] for s in raw],
        }
    return {"large_records": out}


def table(summary: dict[str, Any]) -> list[str]:
    if "large_records" not in summary:
        return []
    large = summary["large_records"]
    lines = []
    for step in ("copy", "verify"):
        name = f"7 {step} {large['records']:,} x {RECORD_BYTES // 1000} KB" if step == "copy" else ""
        s = large[step]
        lines.append(
            f"{name:<28} {f'project {step} (Spark {SPARK.settings.master})':<26} {large['records']:>10,} "
            f"{s['median_seconds']:>9.2f} {s['records_per_second']:>10,.0f} {s['mb_per_second']:>7.2f} "
            f"{s['median_wall_seconds']:>8.2f} {s['with_startup']['records_per_second']:>10,.0f}"
        )
    return lines


def notes(summary: dict[str, Any]) -> list[str]:
    return []
