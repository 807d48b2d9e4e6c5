"""The Spark driver of ``spark_jobs/*.py``: its arguments, its start-up (warm workers, wait for the launcher's
word), the run of the chosen jobs (``spark.driver_jobs.run_step_jobs``), and the results files the launcher reads.

What the executors run lives in ``spark.executor_tasks``; this module runs only in the driver.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kafka_migration.exceptions import StepStoppedError
from kafka_migration.model.config import ClusterConfig, ClusterPair, Endpoint
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.results import OK, StepResults
from kafka_migration.model.text import plural
from kafka_migration.run.progress import SPARK_UP_LINE, snapshot_path
from kafka_migration.spark.driver_jobs import STEPS, run_step_jobs, warm_workers
from kafka_migration.spark.executors import executor_conf
from kafka_migration.spark.gate import Gate
from kafka_migration.spark.startup import spark_log_level

log = logging.getLogger("kafka_migration.spark")


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Copy and/or verify the topics of a migration plan with Spark.")
    parser.add_argument("step", choices=(*STEPS, CENSUS_STEP))
    parser.add_argument("--plan", required=True, type=Path, help="plan.json written by the planning step")
    parser.add_argument("--job", action="append", default=[], help="job number(s) from the plan, or 'all'")
    parser.add_argument(
        "--results", required=True, type=Path, help="where to write the results JSON (migrate: the copy results)"
    )
    parser.add_argument("--verify-results", type=Path, help="migrate: where to write the verification results")
    parser.add_argument("--parallel-topics", type=int, default=4)
    parser.add_argument(
        "--wait-for",
        type=Path,
        help="a FIFO the launcher holds open: start Spark, warm the Python workers, then wait for its word ('go': "
        "read the plan and run; 'plan', then 'ready N': run the first N topics of the run order as they are "
        "released; 'census' before those: take the census of the source records and wait again; anything else "
        "or end of file: stop without writing anything; see spark/gate.py)",
    )
    args = parser.parse_args(argv)
    if args.step == "migrate" and args.verify_results is None:
        parser.error("the migrate step needs --verify-results")
    return args


def select_jobs(plan: MigrationPlan, jobs: Sequence[str]) -> list[int]:
    if not jobs or "all" in jobs:
        return list(range(len(plan.jobs)))
    chosen = sorted({int(j) for spec in jobs for j in str(spec).split(",") if j.strip()})
    for j in chosen:
        if not 0 <= j < len(plan.jobs):
            raise SystemExit(f"job {j} is not in the plan (it has {plural(len(plan.jobs), 'job')})")
    return chosen


ABORTED = 3  # exit code of a driver told not to run (nothing written)
CENSUS_STEP = "census"  # the census alone (run/census.py), for a launcher whose driver cannot wait for its plan


def _warm_and_wait(
    sc: Any,
    step: str,
    channel: Path,
    driver_started: float,
    target: Endpoint | None = None,
    on_census: Callable[[], None] | None = None,
) -> Gate | None:
    """Warm the Python workers, then wait for the launcher's first word (answering its ``census`` words with
    ``on_census``): the gate that releases the plan's topics, or None (stop) when told not to run or anything
    failed."""
    try:
        context_up = time.time()
        warm_workers(sc, target)
        log.info(
            "%s: Spark is up (context %.1fs, Python workers %.1fs after the driver started); waiting for the plan",
            step,
            context_up - driver_started,
            time.time() - driver_started,
        )
        gate = Gate(channel)
        return gate if gate.first(on_census) else None
    except Exception as exc:  # e.g. the launcher stopped the JVM while the workers started
        log.info("%s: could not wait for the plan (%s)", step, exc)
        return None


# Logged once every results file is complete, before Spark stops: the launcher may read them then.
RESULTS_WRITTEN = "results written"


def spark_up(line: str) -> bool:
    """Whether a line of the driver's output says it is up and waiting for its plan (read by the launcher)."""
    return SPARK_UP_LINE.search(line) is not None


def results_written(line: str) -> bool:
    """Whether a line of the driver's output is its ``RESULTS_WRITTEN`` log line (read by the launchers)."""
    return line.rstrip().endswith(f"{log.name}: {RESULTS_WRITTEN}")


def _write_results(
    results: Mapping[str, StepResults], paths: Mapping[str, Path], jobs: list[int], driver_started: float, ready: float
) -> set[str]:
    """Write each results file (stamped with the driver's start and ready times); the topics not OK."""
    bad: set[str] = set()
    for kind, result in results.items():
        result.jobs = jobs
        result.driver_started = round(driver_started, 3)
        result.ready = round(ready, 3)
        result.write(paths[kind])
        bad |= {name for name, t in result.topics.items() if t.status != OK}
        log.info(
            "%s finished in %.1f s: %s ok, %d not ok; results in %s",
            kind,
            result.seconds,
            plural(sum(1 for t in result.topics.values() if t.status == OK), "topic"),
            sum(1 for t in result.topics.values() if t.status != OK),
            paths[kind],
        )
    log.info(RESULTS_WRITTEN)
    return bad


def with_executor_settings(conf: Any) -> Any:
    """``conf`` (a SparkConf, which holds what the submit and spark-defaults.conf set) with how a cluster's
    executors start (spark/executors.py) under those values."""
    settings = dict(conf.getAll())
    return conf.setAll(list(executor_conf(settings, settings.get("spark.master")).items()))


NUMPY_CONVERTERS = ("NumpyArrayConverter", "NumpyScalarConverter")


def _skip_numpy_conversion() -> None:
    """Unregister PySpark's py4j converters for numpy values: this driver sends the JVM none.

    py4j asks every registered converter about every argument of a JVM call, and these answer the
    first question by importing ``pyspark.testing.utils`` (with pandas and protobuf) to learn
    whether numpy is installed: ~0.5 s of CPU in every driver's start-up, before the SparkContext.
    """
    from py4j import protocol

    converters = getattr(protocol, "INPUT_CONVERTER", None)
    if isinstance(converters, list):
        converters[:] = [c for c in converters if type(c).__name__ not in NUMPY_CONVERTERS]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point behind ``spark_jobs/*.py``: exit 0 when every topic is OK, 1 otherwise (3: told not to run)."""
    driver_started = time.time()
    from kafka_migration.spark.pythonpath import prefer_installed_pyspark

    prefer_installed_pyspark()  # before the first import of pyspark: its compiled modules, not the zip's sources
    from pyspark import SparkConf, SparkContext

    _skip_numpy_conversion()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stdout)
    args = _parse(sys.argv[1:] if argv is None else argv)
    # Waiting for the launcher: the plan is not written yet (run files live in runs/<run id>/).
    plan = None if args.wait_for else MigrationPlan.read(args.plan)
    run_id = args.plan.parent.name if plan is None else plan.run_id
    # Settings file and secret settings (YARN, Kubernetes) are merged here, on the driver; executors
    # get the merged settings with their tasks, as one ClusterPair (the environment's roles are the run's).
    clusters = ClusterPair.of(
        ClusterConfig.from_environment("source", os.environ), ClusterConfig.from_environment("target", os.environ)
    )

    # A bare SparkContext: the jobs use RDDs only, and a SparkSession's SQL start-up costs ~3 s per submit.
    # Connected to spark-submit's JVM first: a SparkConf made before that holds nothing the submit and
    # spark-defaults.conf set, and the executor settings would then replace the user's own instead of
    # going under them.
    SparkContext._ensure_initialized()
    conf = (
        SparkConf()
        .setAppName(f"kafka-migration {args.step} {run_id} jobs {','.join(args.job) or 'all'}")
        # A task lost with its executor runs again (spark.task.maxFailures, 4 by default on a cluster; local
        # mode runs each task once): its copy resumes after what the target already holds (copy.reconcile).
        # A speculative second attempt would write beside a running first one: never.
        .set("spark.speculation", "false")
        .set("spark.scheduler.mode", "FAIR")
        .set("spark.ui.showConsoleProgress", "false")
    )
    sc = SparkContext(conf=with_executor_settings(conf))
    try:
        sc.setLogLevel(spark_log_level())  # as the driver's log4j2 configuration says (spark/startup.py)
        from kafka_migration.run.census import ANSWER, REQUEST
        from kafka_migration.spark.census_jobs import answer_census

        if args.step == CENSUS_STEP:
            answer_census(sc, args.plan, args.results, clusters)
            log.info(RESULTS_WRITTEN)
            return 0
        gate = None
        directory = args.plan.parent  # the run's: where the launcher asks for a census (run/census.py)

        def census() -> None:
            answer_census(sc, directory / REQUEST, directory / ANSWER, clusters)

        if args.wait_for and not (
            gate := _warm_and_wait(
                sc,
                args.step,
                args.wait_for,
                driver_started,
                clusters.target if args.step != "verify" else None,
                census,
            )
        ):
            # Told not to run, or the launcher is gone: leave at once. Stopping the context could wait on a
            # JVM the launcher is killing; the JVM stops Spark in its own shutdown hook.
            log.info("%s: told not to run; stopping without writing anything", args.step)
            logging.shutdown()
            os._exit(ABORTED)
        if plan is None:
            plan = MigrationPlan.read(args.plan)
        jobs = select_jobs(plan, args.job)
        topics = [t for j in jobs for t in plan.job_topics(j)]
        ready = time.time()
        log.info(
            "%s: %s, %s, jobs %s of run %s",
            args.step,
            plural(len(topics), "topic"),
            plural(sum(len(t.partitions) for t in topics), "partition"),
            jobs,
            plan.run_id,
        )
        try:
            results = run_step_jobs(
                sc,
                args.step,
                plan,
                topics,
                clusters,
                parallel_topics=args.parallel_topics,
                snapshot=snapshot_path(args.results),
                release=gate.wait_for if gate is not None else None,
            )
        except StepStoppedError as exc:  # the launcher stopped the run while its topics were being created
            log.info("%s; writing nothing", exc)
            logging.shutdown()
            os._exit(ABORTED)
        paths = {"copy": args.results, "verify": args.verify_results} if args.step == "migrate" else {}
        bad = _write_results(results, paths or {args.step: args.results}, jobs, driver_started, ready)
    finally:
        sc.stop()  # after the results are written: the launcher goes on while Spark stops
    return 0 if not bad else 1
