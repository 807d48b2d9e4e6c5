"""Scenario 4: the project's copy and verification on a Spark standalone cluster, next to local mode.

A master and two workers of the installed Spark distribution on this machine
(harness/spark_cluster.py; 2 cores each: the same 4 task slots as the default ``local[4]`` on
2 cores), with the executor environment built once by ``build_executor_env`` (what
``kafka-migrate package-env`` does) and shipped with every submit, as on a real cluster. Both
modes copy the same topic (M records of 200 B, 8 partitions) into a fresh target and verify
it; which mode goes first alternates. Cluster start-up and the archive build are not measured;
shipping and unpacking the archive in every application is (it is part of every cluster run),
and so is each application's executors' start (JVM, Python daemon): the standalone application
is sized with spark.cores.max as docs/sizing.md says, so its driver starts the first job once
both executors have registered (spark/executors.py), inside its start-up, not inside the job.
Everything shares the same 2 cores, so this shows the cost of the cluster path (executor JVMs,
the archive, remote task scheduling), not the speed-up of more machines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.bench.common import RECORD_BYTES, SPARK, median, progress, rates, ratio, say, table_row
from harness.bench.copy_verify import project_copy, project_verify
from harness.bench_kafka import end_offsets, seed_topics

if TYPE_CHECKING:
    from harness.bench.session import Session

NAME = "cluster"
TOPIC = "bench.cluster"
PARTITIONS = 8
WORKERS = 2
CORES_PER_WORKER = 2
TARGETS: dict[str, Any] = {}
MODES = ("local", "standalone")


def seed(session: Session) -> None:
    records = session.sizes["cluster_records"]
    say(f"seeding {TOPIC}: {records:,} records of {RECORD_BYTES} B in {PARTITIONS} partitions")
    session.seeding[TOPIC] = round(seed_topics(session.source, {TOPIC: PARTITIONS}, records, rng_seed=15), 2)
    say(f"  seeded in {session.seeding[TOPIC]:.1f} s")


def run(session: Session, repeat: int) -> None:
    from harness.spark_cluster import standalone_cluster
    from kafka_migration.spark.executor_env import build_executor_env
    from kafka_migration.spark.submit import SparkSettings

    raw = session.raw.setdefault(NAME, {mode: [] for mode in MODES})
    expected = sum(end_offsets(session.source, {TOPIC: PARTITIONS}).values())
    say("scenario 4: building the executor environment (not measured)")
    archive = build_executor_env(session.work / "executor-env.tar.gz", on_line=lambda line: say(f"    {line}"))
    say(f"scenario 4: starting a standalone master and {WORKERS} workers x {CORES_PER_WORKER} cores (not measured)")
    with standalone_cluster(session.work / "spark-standalone", workers=WORKERS, cores=CORES_PER_WORKER) as cluster:
        settings = {
            "local": SPARK.settings,
            # Sized as docs/sizing.md says a standalone run is: spark.cores.max, the cores it takes (Spark's
            # standalone default is every free core of the cluster), which is also what the driver waits for
            # before its first job (spark.scheduler.minRegisteredResourcesRatio, spark/executors.py).
            "standalone": SparkSettings(
                master=cluster.master_url,
                executor_env=str(archive),
                conf={"spark.cores.max": str(WORKERS * CORES_PER_WORKER)},
            ),
        }
        for i in range(repeat):
            say(f"scenario 4, repetition {i + 1}/{repeat}")
            for mode in MODES if i % 2 == 0 else tuple(reversed(MODES)):
                tgt = session.target.fresh()
                directory = session.run_dir()
                copy = project_copy(session.source, tgt, TOPIC, directory, session.verbose, settings[mode])
                if copy["records"] != expected:
                    raise RuntimeError(f"{mode} copy wrote {copy['records']} records, expected {expected}")
                if mode == "standalone" and not all("/env/bin/python" in p for p in copy["executor_pythons"]):
                    raise RuntimeError(f"the executors did not run the shipped environment: {copy['executor_pythons']}")
                if mode == "standalone" and copy["executors"] != WORKERS:
                    say(f"    note: the copy ran on {copy['executors']} of {WORKERS} executors")
                progress(f"{mode} copy (in Spark)", copy)
                verify = project_verify(
                    session.source, tgt, directory / "plan.json", directory, session.verbose, settings[mode]
                )
                progress(f"{mode} verify (in Spark)", verify)
                raw[mode].append({"copy": copy, "verify": verify})


def _mode(samples: list[dict[str, Any]], records: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for step in ("copy", "verify"):
        sec = median([s[step]["seconds"] for s in samples])
        wall = median([s[step]["wall_seconds"] for s in samples])
        out[step] = {
            "median_seconds": sec,
            "median_wall_seconds": wall,
            "median_spark_startup_seconds": median([s[step]["spark_startup_seconds"] for s in samples]),
            "median_spark_stop_seconds": median(
                [s[step]["spark_stop_seconds"] for s in samples if s[step].get("spark_stop_seconds") is not None]
            ),
            **rates(records, sec),
            "with_startup": rates(records, wall),
        }
    out["samples"] = samples
    return out


def summarize(raw: dict[str, Any], sizes: dict[str, int]) -> dict[str, Any]:
    if not raw["local"] or not raw["standalone"]:
        return {}
    records = raw["local"][0]["copy"]["records"]
    local, standalone = _mode(raw["local"], records), _mode(raw["standalone"], records)
    return {
        "cluster": {
            "records": records,
            "partitions": PARTITIONS,
            "workers": WORKERS,
            "cores_per_worker": CORES_PER_WORKER,
            "local_master": SPARK.settings.master,
            "local": local,
            "standalone": standalone,
            # standalone throughput / local throughput: < 1 means the cluster path is slower here
            **{
                f"ratio_{step}_{kind}": ratio(local[step][key], standalone[step][key])
                for step in ("copy", "verify")
                for kind, key in (("steady", "median_seconds"), ("with_startup", "median_wall_seconds"))
            },
        }
    }


def table(summary: dict[str, Any]) -> list[str]:
    if "cluster" not in summary:
        return []
    c = summary["cluster"]
    lines = []
    cluster_run = f"standalone {c['workers']}x{c['cores_per_worker']}"
    for step in ("copy", "verify"):
        name = f"4 cluster {step} {c['records']:,}"
        local, standalone = c["local"][step], c["standalone"][step]
        lines.append(
            table_row(
                name,
                f"project (Spark {c['local_master']})",
                c["records"],
                local["median_seconds"],
                local["median_wall_seconds"],
            )
        )
        lines.append(
            table_row(
                "",
                f"project ({cluster_run})",
                c["records"],
                standalone["median_seconds"],
                standalone["median_wall_seconds"],
            )
        )
        lines.append(
            f"{'':<28} standalone/local: steady {c[f'ratio_{step}_steady']:.2f}x, with start-up "
            f"{c[f'ratio_{step}_with_startup']:.2f}x; Spark start-up+stop median "
            f"{local['median_spark_startup_seconds']:.1f} s local, {standalone['median_spark_startup_seconds']:.1f} s "
            f"standalone (shipped environment), of which stop {local['median_spark_stop_seconds']:.1f} s and "
            f"{standalone['median_spark_stop_seconds']:.1f} s"
        )
    return lines


def notes(summary: dict[str, Any]) -> list[str]:
    return []
