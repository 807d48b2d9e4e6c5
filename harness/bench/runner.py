"""The one runner behind ``make bench``: a session of Apache Kafka clusters, the scenarios, the table and
``.bench/results.json``. Each scenario lives in its own module (copy, many, cluster, whole, scale, mm2, large,
replicated, access) with the same functions: seed(session), run(session, repeat), summarize(raw, sizes), table(summary),
notes(summary)."""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from harness.bench import access, cluster, copy_verify, large, many, mirrormaker, replicated, scale, schemas, whole
from harness.bench.common import RECORD_BYTES, SPARK, TABLE_HEAD, describe_machine, elapsed, say
from harness.bench.seeding import KEY_BYTES, seed_topics
from harness.bench.session import Session
from kafka_migration.spark.startup import archive_path

SCENARIOS: dict[str, ModuleType] = {
    module.NAME: module
    for module in (copy_verify, many, cluster, whole, scale, mirrormaker, large, replicated, access, schemas)
}
# replicated (scenario 9) starts six broker JVMs of its own, access (10) two ACL-enforcing ones, schemas (11) two
# schema registries: opt-in (--scenarios replicated,access,schemas)
DEFAULT_SCENARIOS = "copy,many,cluster,whole,scale,mm2,large"
WARMUP_TOPIC = "bench.warmup"


def warm_up(session: Session) -> None:
    """One small project copy, not measured: Spark's jars in the page cache and the driver's class
    archive written (kafka_migration/spark/startup.py), as after a user's first run."""
    directory = SPARK.settings.archive_dir
    archive = archive_path(directory) if directory is not None else None
    had_archive = archive is not None and archive.is_file()  # this installation's: another's is of no use
    say(f"warm-up: one small Spark copy, not measured (class archive {'present' if had_archive else 'created'})")
    seed_topics(session.source, {WARMUP_TOPIC: 1}, 100, rng_seed=14)
    copy_verify.project_copy(session.source, session.target.fresh(), WARMUP_TOPIC, session.run_dir(), session.verbose)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="The project's Spark copy and verification against baselines.")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: smaller sizes (see each option), 2 repetitions"
    )
    parser.add_argument("--repeat", type=int, help="repetitions of each run (default 3, --quick 2)")
    parser.add_argument("--records", type=int, help="records in scenario 1 (default 2,000,000; --quick 200,000)")
    parser.add_argument("--topics", type=int, help="topics in scenario 2 (default 100; --quick 20)")
    parser.add_argument("--cluster-records", type=int, help="records in scenario 4 (default 500,000; --quick 100,000)")
    parser.add_argument("--large-records", type=int, help="10 KB records in scenario 8 (default 20,000; --quick 4,000)")
    parser.add_argument(
        "--whole-records", type=int, help="records in scenario 5, 8 partitions (default 1,000,000; --quick 100,000)"
    )
    parser.add_argument(
        "--one-partition-records",
        type=int,
        help="records in scenario 5's one-partition topic (default 2,000,000; --quick 200,000)",
    )
    parser.add_argument(
        "--scale-topics",
        type=int,
        help="largest topic count S of scenario 6 (planning at S/100, S/10 and S/2; whole runs at S/10, S/2 "
        "and S; default 10,000; --quick 500)",
    )
    parser.add_argument(
        "--mm2-records",
        type=int,
        help="records in scenario 7 (vs MirrorMaker 2), 8 partitions (default 1,000,000; --quick 100,000)",
    )
    parser.add_argument(
        "--replicated-records",
        type=int,
        help="records in scenario 9 (replicated clusters), 8 partitions (default 1,000,000; --quick 100,000)",
    )
    parser.add_argument(
        "--access-users",
        type=int,
        help="services in scenario 10 (access control), 10 ACL bindings and one SCRAM user each "
        "(default 1,000; --quick 100)",
    )
    parser.add_argument(
        "--schema-records",
        type=int,
        help="Avro records in scenario 11 (schema ids translated vs off), 8 partitions (default 1,000,000; --quick "
        "100,000)",
    )
    parser.add_argument(
        "--scenarios",
        default=DEFAULT_SCENARIOS,
        help="comma list of: copy (scenarios 1, 3 and memory), many (2), cluster (4: standalone vs local), "
        "whole (5: whole verified run, hand-written script vs CLI vs DAG), "
        "scale (6: planning and whole runs at many topics, with the requests sent), mm2 (7: vs MirrorMaker 2), "
        "large (8: copy and verify of 10 KB records), replicated (9: on three-broker clusters, RF 3, acks=all: "
        "ours vs MM2 vs Kafka's perf tools; not in the default list), access (10: 10,000 ACL bindings and 1,000 "
        "SCRAM users moved and proven by kafka-migrate access sync; not in the default list), schemas (11: whole "
        "verified runs of Avro records, --schema-ids translate vs off, two schema registries; not in the default "
        "list)",
    )
    parser.add_argument("--output", type=Path, default=Path(".bench/results.json"))
    parser.add_argument("--master", help="Spark master for the project's runs (default: the product's default)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show all Spark output")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (plans, results, broker logs)")
    return parser.parse_args(argv)


def targets_met(summary: dict[str, Any], chosen: list[ModuleType]) -> dict[str, Any]:
    met: dict[str, Any] = {}
    for module in chosen:
        for key, (target, check) in module.TARGETS.items():
            section, name = key.split(".")
            value = summary.get(section, {}).get(name)
            met[key] = {"target": target, "value": value, "met": None if value is None else bool(check(value))}
    return met


def print_table(summary: dict[str, Any], machine: dict[str, Any], chosen: list[ModuleType], json_path: Path) -> None:
    lines = [
        "",
        f"Machine: {machine['nproc']} CPUs ({machine['cpu_model']}), {machine['ram_gib']} GiB RAM; python "
        f"{machine['python']}, pyspark {machine['pyspark']}, confluent-kafka {machine['confluent_kafka']} "
        f"(librdkafka {machine['librdkafka']}); load average at start {machine['load_average_at_start']}",
        f"Medians of {summary['repeat']} alternating repetitions; rec/s and MB/s use 'median s' (steady state: for "
        "the project the time inside the Spark application); 'wall s' includes planning, topic creation and Spark "
        "start-up.",
        "",
        TABLE_HEAD,
        "-" * len(TABLE_HEAD),
    ]
    for module in chosen:
        lines += module.table(summary)
    for module in chosen:
        lines += module.notes(summary)
    lines += ["", f"Results: {json_path}"]
    print("\n".join(lines), flush=True)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    SPARK.use(args.master)
    repeat = args.repeat or (2 if args.quick else 3)
    records = args.records or (200_000 if args.quick else 2_000_000)
    sizes = {
        "records": records,
        "half": records // 2,
        "topics": args.topics or (20 if args.quick else 100),
        "cluster_records": args.cluster_records or (100_000 if args.quick else 500_000),
        "large_records": args.large_records or (4_000 if args.quick else 20_000),
        "whole_records": args.whole_records or (100_000 if args.quick else 1_000_000),
        "one_partition_records": args.one_partition_records or (200_000 if args.quick else 2_000_000),
        "scale_topics": args.scale_topics or (500 if args.quick else 10_000),
        "mm2_records": args.mm2_records or (100_000 if args.quick else 1_000_000),
        "replicated_records": args.replicated_records or (100_000 if args.quick else 1_000_000),
        "access_users": args.access_users or (100 if args.quick else 1_000),
        "schema_records": args.schema_records or (100_000 if args.quick else 1_000_000),
        "repeat": repeat,
    }
    names = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    unknown = sorted(set(names) - set(SCENARIOS))
    if unknown:
        raise SystemExit(f"unknown scenarios: {unknown} (known: {', '.join(SCENARIOS)})")
    chosen = [SCENARIOS[name] for name in SCENARIOS if name in names]  # always in the same order
    machine = describe_machine()
    say(
        f"{machine['nproc']} CPUs, {machine['ram_gib']} GiB, load {machine['load_average_at_start']}; "
        f"sizes {sizes}, scenarios {[m.NAME for m in chosen]}"
    )
    work = Path(tempfile.mkdtemp(prefix="kafka-migration-bench-"))
    say(f"work directory {work}")
    session = Session(work, sizes, args.verbose)
    try:
        for module in chosen:
            module.seed(session)
        warm_up(session)
        for module in chosen:
            module.run(session, repeat)
    finally:
        session.close()
    if args.keep:
        say(f"work directory kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)

    summary: dict[str, Any] = {}
    for module in chosen:
        summary.update(module.summarize(session.raw[module.NAME], sizes))
    machine["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "total_seconds": elapsed(),
        "machine": machine,
        "config": {
            **sizes,
            "record_bytes": RECORD_BYTES,
            "key_bytes": KEY_BYTES,
            "partitions": copy_verify.PARTITIONS,
            "many_partitions": many.PARTITIONS,
            "many_records_per_topic": many.RECORDS,
            "cluster_partitions": cluster.PARTITIONS,
            "large_partitions": large.PARTITIONS,
            "large_record_bytes": large.RECORD_BYTES,
            "whole_partitions": whole.PARTITIONS,
            "mm2_partitions": mirrormaker.PARTITIONS,
            "replicated_partitions": replicated.PARTITIONS,
            "schemas_partitions": schemas.PARTITIONS,
            "spark_master": SPARK.settings.master,
            "scenarios": [m.NAME for m in chosen],
            "ratio_definition": "project throughput / baseline throughput (= baseline seconds / project seconds); "
            "> 1 means the project is faster",
        },
        "seeding_seconds": session.seeding,
        "target_start_seconds": session.target.start_seconds,
        **summary,
        "targets": targets_met(summary, chosen),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(_no_nan(result), indent=2, default=_json_default))
    print_table({**summary, "repeat": repeat}, machine, chosen, args.output.resolve())
    return 0


def _no_nan(value: Any) -> Any:
    """NaN (a ratio without data) is not JSON: write null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nan(v) for v in value]
    return value


def _json_default(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    return str(value)


if __name__ == "__main__":
    sys.exit(main())
