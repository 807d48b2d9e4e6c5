"""Scenario 4: the project's copy and verification on a Spark standalone cluster, next to local mode.

A master and two workers of the installed Spark distribution on this machine
(harness/servers/spark_cluster.py; 2 cores each: the same 4 task slots as the default ``local[4]`` on
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

The copy and the verification are each a Spark application of their own here (the step API,
``submit_step``), so each pays a start-up and waits for Spark's stop. A run submits one application
for both (step ``migrate``: ``kafka-migrate run``, and the DAG's ``copy_verify``), which the
scenario times too, as the CLI runs it: started before the plan, told to go once the plan and
the target topic exist, timed to its results (neither the CLI nor the operator waits for Spark's
stop, which is waited for here untimed, outside the measured span).

A third mode (``archived``) does all of it again on the same cluster with the executors started from a
class-data archive, prepared as docs/deployment.md tells an operator on JDK 17 (class_archive.py); the
three modes alternate within each repetition, so the archive's effect is measured side by side.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.bench import class_archive
from harness.bench.common import (
    RECORD_BYTES,
    SPARK,
    SparkOutput,
    cluster_configs,
    load1,
    median,
    progress,
    rates,
    ratio,
    say,
    table_row,
)
from harness.bench.copy_verify import plan_and_create, project_copy, project_verify
from harness.bench.seeding import end_offsets, seed_topics

if TYPE_CHECKING:
    from harness.bench.session import Session
    from kafka_migration.spark.submit import SparkSettings

NAME = "cluster"
TOPIC = "bench.cluster"
PARTITIONS = 8
WORKERS = 2
CORES_PER_WORKER = 2
TARGETS: dict[str, Any] = {}
# "archived": the same standalone cluster, its executors started from a class-data archive (class_archive.py)
MODES = ("local", "standalone", "archived")
CLUSTER_NAMES = {"standalone": "standalone", "archived": "standalone + archive"}  # each cluster mode in a ratio line
STEPS = ("copy", "verify", "migrate")
LABELS = {"migrate": "run"}  # the table's name of a step where it is not the step's own: copy + verify in one app


def seed(session: Session) -> None:
    records = session.sizes["cluster_records"]
    say(f"seeding {TOPIC}: {records:,} records of {RECORD_BYTES} B in {PARTITIONS} partitions")
    session.seeding[TOPIC] = round(seed_topics(session.source, {TOPIC: PARTITIONS}, records, rng_seed=15), 2)
    say(f"  seeded in {session.seeding[TOPIC]:.1f} s")


def run(session: Session, repeat: int) -> None:
    from harness.servers.spark_cluster import standalone_cluster
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
        settings["archived"] = class_archive.prepare(
            cluster,
            session.work / "class-archive",
            settings["standalone"],
            lambda writing: project_copy(
                session.source, session.target.fresh(), TOPIC, session.run_dir(), session.verbose, writing
            ),
        )
        for i in range(repeat):
            say(f"scenario 4, repetition {i + 1}/{repeat}")
            for mode in MODES if i % 2 == 0 else tuple(reversed(MODES)):
                tgt = session.target.fresh()
                directory = session.run_dir()
                copy = project_copy(session.source, tgt, TOPIC, directory, session.verbose, settings[mode])
                if copy["records"] != expected:
                    raise RuntimeError(f"{mode} copy wrote {copy['records']} records, expected {expected}")
                if mode != "local" and not all("/env/bin/python" in p for p in copy["executor_pythons"]):
                    raise RuntimeError(f"the executors did not run the shipped environment: {copy['executor_pythons']}")
                if mode != "local" and copy["executors"] != WORKERS:
                    say(f"    note: the copy ran on {copy['executors']} of {WORKERS} executors")
                progress(f"{mode} copy (in Spark)", copy)
                verify = project_verify(
                    session.source, tgt, directory / "plan.json", directory, session.verbose, settings[mode]
                )
                progress(f"{mode} verify (in Spark)", verify)
                migrate = project_migrate(
                    session.source, session.target.fresh(), session.run_dir(), session.verbose, settings[mode]
                )
                if migrate["records"] != expected:
                    raise RuntimeError(f"{mode} run copied {migrate['records']} records, expected {expected}")
                progress(f"{mode} run, copy + verify in one application (in Spark)", migrate)
                raw[mode].append({"copy": copy, "verify": verify, "migrate": migrate})


def project_migrate(source: str, target: str, run_dir: Path, verbose: bool, settings: SparkSettings) -> dict[str, Any]:
    """The run's one application (step ``migrate``), timed as ``kafka-migrate run`` runs it (see above)."""
    from kafka_migration.spark.submit import migrate_application

    src_cfg, tgt_cfg = cluster_configs(source, target)
    output = SparkOutput(verbose)
    load = load1()
    started = time.monotonic()
    app = migrate_application(run_dir, src_cfg, tgt_cfg, settings, on_line=output, wait=True)
    try:
        plan_and_create(src_cfg, tgt_cfg, TOPIC, run_dir)
        planned = time.monotonic()
        app.go()
        results = app.results()
        done = time.monotonic()
    except BaseException:
        app.abort()
        raise
    app.detach()  # as the CLI does after its results (without reading them again, as wait() would)
    app.process.wait()  # Spark's stop, untimed, so that it does not overlap the next run
    copy, verify = results["copy"], results["verify"]
    if not (copy.ok and verify.ok):
        errors = [t.error for r in (copy, verify) for t in r.topics.values() if t.error]
        raise RuntimeError(f"the run's application did not verify: {errors}\n" + "\n".join(output.tail))
    return {
        "records": copy.topics[TOPIC].records,
        "seconds": copy.seconds,  # the application's work: the copy and the verification after each slice
        "plan_and_topics_seconds": round(planned - started, 3),
        "wall_seconds": round(done - started, 3),
        # what the run waited for Spark beyond its work: start-up not hidden behind the plan
        "spark_startup_seconds": round(done - planned - copy.seconds, 3),
        "spark_stop_seconds": None,
        "load1_at_start": load,
    }


def _mode(samples: list[dict[str, Any]], records: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for step in (s for s in STEPS if all(s in sample for sample in samples)):
        sec = median([s[step]["seconds"] for s in samples])
        wall = median([s[step]["wall_seconds"] for s in samples])
        out[step] = {
            "median_seconds": sec,
            "median_wall_seconds": wall,
            "median_spark_startup_seconds": median([s[step]["spark_startup_seconds"] for s in samples]),
            "median_spark_stop_seconds": median(stops) if (stops := _stops(samples, step)) else None,
            **rates(records, sec),
            "with_startup": rates(records, wall),
        }
    out["samples"] = samples
    return out


def _stops(samples: list[dict[str, Any]], step: str) -> list[float]:
    return [s[step]["spark_stop_seconds"] for s in samples if s[step].get("spark_stop_seconds") is not None]


def summarize(raw: dict[str, Any], sizes: dict[str, int]) -> dict[str, Any]:
    if not raw["local"] or not raw["standalone"]:
        return {}
    records = raw["local"][0]["copy"]["records"]
    modes = {mode: _mode(raw[mode], records) for mode in MODES if raw.get(mode)}  # results before "archived" too
    local = modes["local"]
    return {
        "cluster": {
            "records": records,
            "partitions": PARTITIONS,
            "workers": WORKERS,
            "cores_per_worker": CORES_PER_WORKER,
            "local_master": SPARK.settings.master,
            **modes,
            # cluster throughput / local throughput: < 1 means the cluster path is slower here
            **{
                _ratio_key(step, kind, mode): ratio(local[step][key], modes[mode][step][key])
                for mode in modes
                if mode != "local"
                for step in STEPS
                if step in local and step in modes[mode]
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
    runs = {
        "local": f"project (Spark {c['local_master']})",
        "standalone": f"project ({cluster_run})",
        "archived": "project (+ class archive)",
    }
    for step in (s for s in STEPS if s in c["local"]):
        modes = [mode for mode in MODES if step in c.get(mode, {})]
        for i, mode in enumerate(modes):
            m = c[mode][step]
            name = f"4 cluster {LABELS.get(step, step)} {c['records']:,}" if i == 0 else ""
            lines.append(table_row(name, runs[mode], c["records"], m["median_seconds"], m["median_wall_seconds"]))
        for mode in modes[1:]:
            lines.append(_ratio_line(c, step, mode))
    return lines


def _ratio_key(step: str, kind: str, mode: str) -> str:
    """``ratio_copy_steady`` for the plain cluster (as results before the third mode name it), else with the mode."""
    return f"ratio_{step}_{kind}" + ("" if mode == "standalone" else f"_{mode}")


def _ratio_line(c: dict[str, Any], step: str, mode: str) -> str:
    local, cluster = c["local"][step], c[mode][step]
    stops = (local["median_spark_stop_seconds"], cluster["median_spark_stop_seconds"])
    waited = None not in stops
    stop = (
        f", of which stop {stops[0]:.1f} s and {stops[1]:.1f} s"
        if waited
        else "; copy and verification in one application, Spark's stop not waited for, as in a run"
    )
    what = CLUSTER_NAMES[mode]
    return (
        f"{'':<28} {what}/local: steady {c[_ratio_key(step, 'steady', mode)]:.2f}x, with start-up "
        f"{c[_ratio_key(step, 'with_startup', mode)]:.2f}x; Spark start-up{'+stop' if waited else ''} median "
        f"{local['median_spark_startup_seconds']:.1f} s local, {cluster['median_spark_startup_seconds']:.1f} s "
        f"{what} (shipped environment){stop}"
    )


def notes(summary: dict[str, Any]) -> list[str]:
    return []
