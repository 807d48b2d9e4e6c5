"""``kafka-migrate run``: plan, create topics, copy with Spark and verify, with progress on the terminal."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_migration.cli.helptext import subcommand
from kafka_migration.cli.options import (
    EXIT_FAILED,
    EXIT_MISMATCH,
    EXIT_OK,
    LEDGER_HELP,
    REPORT_DIR_HELP,
    STATE_DIR_HELP,
    add_cluster_options,
    add_output,
    add_spark_conf,
    check_clusters,
    default_state_dir,
    json_wanted,
    ledger_url,
    nonempty,
    nonempty_path,
    positive,
    print_document,
    reports_dir_of,
    spark_conf,
)
from kafka_migration.cli.output import DRY_RUN, run_document
from kafka_migration.cli.progress import run_progress
from kafka_migration.cli.schema_options import (
    add_dry_run_census,
    add_schema_options,
    check_registries,
    print_schemas,
    schema_options_of,
    schema_step,
)
from kafka_migration.model.config import DEFAULT_INCLUDE, DEFAULT_RENAME, ClusterConfig, MigrationOptions, writable_dir
from kafka_migration.model.results import UNVERIFIED
from kafka_migration.reports.summary import render_plan, render_table, run_status, timings_line
from kafka_migration.run.progress import PROGRESS_SECONDS_CLI
from kafka_migration.spark.executor_env import configured_executor_env
from kafka_migration.spark.submit import SparkLauncher, SparkSettings, default_master

CENSUS_BY_SPARK = (
    "Census of the source records: more planned offsets than a dry run reads itself "
    "($KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS); a Spark application of its own reads every one "
    "(--dry-run-census ends: only each partition's ends, no Spark) ..."
)

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger
    from kafka_migration.run.pipeline import RunOutcome
    from kafka_migration.spark.submit import SparkApplication


def add_parser(sub: Any) -> None:
    """The ``run`` subcommand and its options."""
    parser = subcommand(
        sub,
        "run",
        "plan, create topics, copy with Spark and verify",
        {
            EXIT_OK: "copied and verified (also: a dry run, or nothing new on the source since the last run)",
            EXIT_MISMATCH: "verification found differences between source and target (see the report)",
            EXIT_FAILED: "a copy did not complete, or a cluster could not be read during verification",
        },
        [
            "# copy the orders topics under a new name, verified, with the report's path at the end",
            "kafka-migrate run --source src-kafka:9092 --target dst-kafka:9092 --include 'orders\\..*' "
            "--rename 'src.{topic}'",
            "# what a run would do, changing nothing; the verdict as JSON for a script",
            "kafka-migrate run --source src-kafka:9092 --target dst-kafka:9092 --dry-run --output json",
        ],
    )
    add_cluster_options(parser)
    parser.add_argument(
        "--include", type=nonempty, default=DEFAULT_INCLUDE, help="regex a topic name must fully match (default: all)"
    )
    parser.add_argument("--exclude", type=nonempty, help="regex of topic names to leave out")
    parser.add_argument(
        "--rename",
        type=nonempty,
        default=DEFAULT_RENAME,
        help="target name template, e.g. 'src.{topic}' (default: same name)",
    )
    parser.add_argument(
        "--replication-factor", type=positive, help="target replication factor (default: min(source, target brokers))"
    )
    parser.add_argument(
        "--topics-per-job", type=positive, default=25, help="topics sharing one Spark application (default 25)"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
    parser.add_argument(
        "--show-plan",
        action="store_true",
        help="print every topic of the plan (default: up to 20 topics; above, a summary, the details in plan.json)",
    )
    parser.add_argument("--state-dir", type=nonempty_path, default=None, help=STATE_DIR_HELP)
    parser.add_argument(
        "--master",
        type=nonempty,
        default=default_master(),
        help="Spark master (default local[2 x cores]: tasks mostly wait on the brokers; or "
        "$KAFKA_MIGRATION_SPARK_MASTER)",
    )
    add_spark_conf(parser)
    parser.add_argument(
        "--executor-env",
        type=nonempty,
        metavar="ARCHIVE",
        help="packed executor environment to ship to the executors (built by `kafka-migrate package-env`; a "
        "local file or a URI Spark can fetch; default $KAFKA_MIGRATION_EXECUTOR_ENV; needed on a cluster, "
        "not shipped to a local[...] master)",
    )
    parser.add_argument(
        "--start",
        type=nonempty,
        default="earliest",
        help="where partitions without a checkpoint start: earliest (default), latest, or a time "
        "(ISO 8601 or epoch ms)",
    )
    parser.add_argument(
        "--allow-gaps", action="store_true", help="continue when records expired from the source before being copied"
    )
    parser.add_argument(
        "--accept-target-retention",
        action="store_true",
        help="accept existing target topics that keep less than the source (retention, compaction lags): copy only "
        "what they keep; recorded in the ledger and the report",
    )
    parser.add_argument(
        "--accept-target-loss",
        action="store_true",
        help="accept verified records the target lost since earlier runs; recorded in the ledger and the report, "
        "and not reported again",
    )
    parser.add_argument("--ledger", type=nonempty, help=LEDGER_HELP)
    parser.add_argument("--report-dir", type=nonempty_path, help=REPORT_DIR_HELP)
    parser.add_argument(
        "--lease-ttl",
        type=nonempty,
        metavar="SECONDS",
        help="seconds the run's leases on its target topics live without renewal; another run takes over a lease "
        "its holder stopped renewing for that long (default 600, or $KAFKA_MIGRATION_LEASE_TTL)",
    )
    add_schema_options(parser)
    add_dry_run_census(parser)
    add_output(parser)
    parser.add_argument("-v", "--verbose", action="store_true", help="show Spark's output")


def run(args: argparse.Namespace) -> int:
    from kafka_migration.ledger.leases import lease_ttl_from_env, parse_lease_ttl

    started = time.time()  # the wall time a user sees starts here
    # Everything that can be checked without a cluster is checked before anything is written.
    schemas = schema_options_of(args)
    options = MigrationOptions(
        include=args.include,
        exclude=args.exclude,
        rename=args.rename,
        dry_run=args.dry_run,
        replication_factor=args.replication_factor,
        topics_per_job=args.topics_per_job,
        start=args.start,
        allow_gaps=args.allow_gaps,
        accept_target_retention=args.accept_target_retention,
        accept_target_loss=args.accept_target_loss,
        dry_run_census=args.dry_run_census or "full",
    )
    lease_ttl = parse_lease_ttl(args.lease_ttl, "--lease-ttl") if args.lease_ttl is not None else lease_ttl_from_env()
    source = ClusterConfig.build("source", args.source, args.source_config)
    target = ClusterConfig.build("target", args.target, args.target_config)
    spark = SparkSettings(
        master=args.master,
        conf=spark_conf(args.spark_conf),
        executor_env=configured_executor_env(args.executor_env),
        progress_seconds=PROGRESS_SECONDS_CLI,
    )
    state_dir = writable_dir(
        args.state_dir or default_state_dir(), "The state directory (--state-dir or $KAFKA_MIGRATION_STATE_DIR)"
    )
    writable_dir(reports_dir_of(args), "The report directory (--report-dir)")
    url = ledger_url(args)
    check_clusters(source, target)  # seconds, before Spark starts: a host name typo is not found after its start-up
    check_registries(schemas)
    # Progress on stderr while Spark works: bars on a terminal, a plain line every few seconds elsewhere.
    view = None if args.dry_run else run_progress(args.verbose)

    def on_plan(plan) -> None:  # type: ignore[no-untyped-def]
        from kafka_migration.run.files import run_dir

        plan_file = run_dir(state_dir, plan.run_id) / "plan.json"
        print(render_plan(plan, details=args.show_plan or None, plan_file=plan_file, details_option="--show-plan"))
        print_schemas(plan)
        if view is not None and plan.offset_span:
            view.planned(plan.offset_span, len(plan.topics))

    def on_line(line: str) -> None:
        if view is not None:
            view.line(line)

    with view if view is not None else contextlib.nullcontext():
        launch = SparkLauncher(spark, on_line)
        run_id, app, ledger = _start_spark_then_open_ledger(args, state_dir, source, target, launch, url)
        from kafka_migration.run.pipeline import run_migration

        outcome = run_migration(
            source,
            target,
            options,
            state_dir,
            ledger,
            launch=launch,
            reports_dir=reports_dir_of(args),
            on_plan=on_plan,
            lease_ttl=lease_ttl,
            run_id=run_id,
            app=app,
            started=started,
            schemas=schema_step(schemas, ledger),
            on_step=_say_census,
        )
        if view is not None:
            view.done()  # the last datagrams may be lost; the steps are done
    if args.dry_run:
        print("Dry run: nothing was created or copied.")
        if json_wanted(args):
            print_document(args, run_document(outcome.plan, DRY_RUN, EXIT_OK))
        return EXIT_OK
    files = outcome.report
    timings = outcome.timings
    if outcome.nothing_new:
        print(f"Run {outcome.plan.run_id}: nothing new on the source since the last verified run; nothing copied.")
        code = _losses_exit(outcome) if outcome.plan.unaccepted_losses else EXIT_OK
        if files is not None:
            print(f"Report: {files.html}")
        if timings is not None:
            print(timings_line(timings))
        if json_wanted(args):
            doc = run_document(
                outcome.plan, outcome.status, code, report=files, timings=timings.to_dict() if timings else None
            )
            print_document(args, doc)
        return code
    print()
    print(render_table(outcome.rows))
    print(f"Run files: {outcome.directory}")
    if files is not None:
        print(f"Report: {files.html} (report.json {files.sha256})")
    code = _verdict_exit(outcome)
    if timings is not None:
        print(timings_line(timings))
    if json_wanted(args):
        doc = run_document(
            outcome.plan,
            outcome.status,
            code,
            rows=outcome.rows,
            run_files=outcome.directory,
            report=files,
            timings=timings.to_dict() if timings is not None else None,
        )
        print_document(args, doc)
    return code


def _say_census(step: str) -> None:
    """A dry run's census went to Spark (run/census_takers.py): say what the user waits for, on stderr (the
    pipeline's other steps are shown by the progress view)."""
    if step == "census":
        print(CENSUS_BY_SPARK, file=sys.stderr, flush=True)


def _start_spark_then_open_ledger(
    args: argparse.Namespace,
    state_dir: Path,
    source: ClusterConfig,
    target: ClusterConfig,
    launch: SparkLauncher,
    ledger_url: str,
) -> tuple[str, SparkApplication | None, Ledger]:
    """A run id, its Spark application already starting (None for a dry run), and the opened ledger.

    Spark starts before the ledger and the pipeline are even imported: its start-up (seconds) runs
    while this process opens the ledger and plans. Until run_migration owns the application, it is
    stopped here on any failure, a ledger refused as bad input included.
    """
    from kafka_migration.run.files import new_run_id, run_dir

    run_id = new_run_id()
    app = None if args.dry_run else launch(run_dir(state_dir, run_id), source, target, wait=True)
    try:
        from kafka_migration.ledger import Ledger

        return run_id, app, Ledger.open(ledger_url)
    except BaseException:
        if app is not None:
            app.abort()
        raise


def _losses_exit(outcome: RunOutcome) -> int:
    from kafka_migration.run.losses import verdict_line

    print(
        f"{verdict_line(outcome.plan)} (see above). Re-migrate to a new target topic (--rename), "
        "or accept the loss with --accept-target-loss (recorded in the ledger and the report)."
    )
    return EXIT_MISMATCH


def _verdict_exit(outcome: RunOutcome) -> int:
    """The closing line of a run and its exit code."""
    run_id = outcome.plan.run_id
    if outcome.plan.unaccepted_losses and run_status(outcome.rows) == "verified":
        return _losses_exit(outcome)
    if outcome.verified:
        print(f"Migration {run_id} verified: every partition matches on count and checksum.")
        return EXIT_OK
    status = run_status(outcome.rows)
    if status == "failed":
        print(f"Migration {run_id} FAILED: a copy did not complete (see above).")
        return EXIT_FAILED
    if status == UNVERIFIED:
        print(
            f"Migration {run_id} could NOT be verified: a cluster could not be read during verification "
            "(see above). Nothing is known to differ; rerun when both clusters are reachable."
        )
        return EXIT_FAILED
    print(f"Migration {run_id} NOT verified: source and target differ (see above).")
    return EXIT_MISMATCH
