"""``kafka-migrate cutover``: refuse while producers write or consumers run, a final verified run, the
groups moved with proof, the cutover report. ``failback`` reverses one and shares its final run."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_migration.cli import output
from kafka_migration.cli.helptext import subcommand
from kafka_migration.cli.options import (
    EXIT_BAD_INPUT,
    EXIT_MISMATCH,
    EXIT_OK,
    LEDGER_HELP,
    REPORT_DIR_HELP,
    STATE_DIR_HELP,
    add_cluster_options,
    add_output,
    add_spark_conf,
    check_clusters,
    check_settings,
    default_state_dir,
    json_wanted,
    ledger_url,
    nonempty,
    nonempty_path,
    positive,
    print_document,
    reports_dir_of,
    seconds,
    spark_conf,
)
from kafka_migration.cli.schema_options import (
    add_schema_options,
    check_registries,
    print_schemas,
    schema_options_of,
    schema_step,
)
from kafka_migration.cutover.point import COMPLETED, FAILED
from kafka_migration.exceptions import ConfigurationError, MigrationError, describe_failure
from kafka_migration.model.config import (
    DEFAULT_INCLUDE,
    DEFAULT_RENAME,
    ClusterConfig,
    MigrationOptions,
    compile_group_pattern,
    writable_dir,
)
from kafka_migration.reports.summary import render_plan, render_table
from kafka_migration.spark.submit import SparkSettings, default_master

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger
    from kafka_migration.lineage.emit import Lineage

log = logging.getLogger(__name__)


def add_parser(sub: Any) -> None:
    """The ``cutover`` subcommand and its options."""
    parser = subcommand(
        sub,
        "cutover",
        "switch to the target: refuse while producers write or consumers run, final verified run, "
        "group offsets with proof, cutover report",
        {
            EXIT_OK: "completed: consumers may start on the target (the cutover report's path is printed)",
            EXIT_MISMATCH: "the final run found differences, or a group could not be moved with proof (see the report)",
            EXIT_BAD_INPUT: "refused: producers still write or consumers still run (nothing written); or bad input",
        },
        [
            "# stop the producers and consumers first; then:",
            "kafka-migrate cutover --source src-kafka:9092 --target dst-kafka:9092 --include 'orders\\..*' "
            "--group 'billing-.*'",
            "kafka-migrate cutover --source src-kafka:9092 --target dst-kafka:9092 --quiet-seconds 60 --output json",
        ],
    )
    cluster_options(parser, required=False)
    parser.add_argument("--include", type=nonempty, default=DEFAULT_INCLUDE, help="regex a topic name must fully match")
    parser.add_argument("--exclude", type=nonempty, help="regex of topic names to leave out")
    parser.add_argument("--rename", type=nonempty, default=DEFAULT_RENAME, help="target name template, as for run")
    parser.add_argument(
        "--group", type=nonempty, help="regex a consumer group id must fully match (default: every group)"
    )
    parser.add_argument("--exclude-group", type=nonempty, help="regex of consumer group ids to leave out")
    parser.add_argument(
        "--replication-factor", type=positive, help="target replication factor (default: min(source, target brokers))"
    )
    add_schema_options(parser)  # the final run treats the schema ids as the runs before it did


def cluster_options(parser: argparse.ArgumentParser, required: bool) -> None:
    add_cluster_options(parser, required)
    parser.add_argument(
        "--quiet-seconds",
        type=seconds,
        default=30.0,
        help="how long the topics must receive no record before the final run (default 30)",
    )
    parser.add_argument("--ledger", type=nonempty, help=LEDGER_HELP)
    parser.add_argument("--state-dir", type=nonempty_path, default=None, help=STATE_DIR_HELP)
    parser.add_argument("--report-dir", type=nonempty_path, help=REPORT_DIR_HELP)
    parser.add_argument("--master", type=nonempty, default=default_master(), help="Spark master (as for run)")
    add_spark_conf(parser)
    parser.add_argument(
        "--topics-per-job", type=positive, default=25, help="topics sharing one Spark application (default 25)"
    )
    add_output(parser)
    parser.add_argument("-v", "--verbose", action="store_true", help="show Spark's output")


def cutover(args: argparse.Namespace) -> int:
    from kafka_migration.cutover.steps import CutoverRecord, CutoverRequest, finish_cutover, prepare_cutover
    from kafka_migration.lineage.emit import Lineage
    from kafka_migration.run.planner import new_run_id

    if not args.source or not args.target:
        raise ConfigurationError("kafka-migrate cutover needs --source and --target (HOST:PORT).")
    source = ClusterConfig.build("source", args.source, args.source_config)
    target = ClusterConfig.build("target", args.target, args.target_config)
    options = MigrationOptions(
        include=args.include,
        exclude=args.exclude,
        rename=args.rename,
        replication_factor=args.replication_factor,
        topics_per_job=args.topics_per_job,
    )
    compile_group_pattern("group", args.group or ".*")  # bad input fails before anything is opened or written
    if args.exclude_group:
        compile_group_pattern("exclude-group", args.exclude_group)
    url = ledger_url(args)
    schemas = schema_options_of(args)
    check_before_writing(args, source, target)
    check_clusters(source, target)  # refused here: no cutover id, no ledger row, no report (docs/cli.md)
    check_registries(schemas)
    from kafka_migration.ledger import Ledger

    ledger = Ledger.open(url)  # the final run may be the first one: like run, it may create it
    lineage = Lineage.from_environment()  # the final run's, the groups' and the cutover's
    cutover_id = new_run_id("cutover")
    done: dict[str, Any] = {}  # how far it got, for the JSON document of a cutover that stopped
    print(
        f"Cutover {cutover_id}: checking that no consumer of the groups runs, then that the source topics stay "
        f"quiet for {args.quiet_seconds:g}s ..."
    )
    try:
        checked = prepare_cutover(
            source,
            target,
            options,
            ledger,
            CutoverRequest(
                cutover_id,
                args.quiet_seconds,
                args.group,
                args.exclude_group,
                reports_dir=reports_dir_of(args),  # a refusal writes its report, and its error names the file
            ),
        )
        done["groups"] = checked.groups
        print(f"Pre-flight passed: source quiet; consumer groups to move: {', '.join(checked.groups) or 'none'}.")
        try:
            outcome, run_report = final_run(
                args, source, target, options, ledger, lineage, schema_step(schemas, ledger)
            )
        except BaseException as exc:
            message = str(exc)[:4000] or type(exc).__name__
            ledger.update_cutover(cutover_id, finished=True, status=FAILED, message=message)
            raise
        done["final_run"] = output.final_run(outcome.plan.run_id, outcome.verified, run_report)
        record = CutoverRecord(reports_dir_of(args), lineage)
        result = finish_cutover(source, target, ledger, cutover_id, checked, outcome.plan, record)
    except MigrationError as exc:
        stopped(args, "cutover", ledger, cutover_id, exc, done)
        raise
    again = f"kafka-migrate failback --cutover {cutover_id}"
    if json_wanted(args):
        end = output.CutoverEnd(
            COMPLETED, EXIT_OK, result.message, checked.groups, done["final_run"], result.report, again
        )
        doc = output.cutover_document("cutover", cutover_id, end)
        print_document(args, doc)
        return EXIT_OK
    print(f"Cutover {cutover_id} COMPLETED: {result.message}.")
    print(f"Cutover report (checklist, group start offsets): {result.report}")
    print(f"To go back later: {again}")
    return EXIT_OK


def stopped(
    args: argparse.Namespace, command: str, ledger: Ledger, cutover_id: str, exc: MigrationError, done: dict[str, Any]
) -> None:
    """A cutover or failback that was refused or failed: its report (written now if the steps wrote none)
    and, with --output json, its document. The error itself goes on to stderr, with its exit code."""
    recorded = ledger.cutover(cutover_id)
    if recorded is None:  # refused before anything was recorded (bad input, an unreachable cluster)
        return
    status = recorded["failback_status"] if command == "failback" else recorded["status"]
    report = _report_of(ledger, cutover_id, reports_dir_of(args), exc)
    if json_wanted(args):
        end = output.CutoverEnd(
            status or FAILED, exc.exit_code, str(exc), done.get("groups", ()), done.get("final_run"), report
        )
        doc = output.cutover_document(command, cutover_id, end)
        print_document(args, doc)
    elif report is not None and str(report) not in str(exc):
        print(f"{'Failback' if command == 'failback' else 'Cutover'} {status or FAILED}; cutover report: {report}")


def _report_of(ledger: Ledger, cutover_id: str, reports_dir: Path, exc: MigrationError) -> Path | None:
    """The cutover report's HTML: the one the steps wrote when they stopped (their message names it), else
    written now from the ledger (a refusal, a final run that failed)."""
    from kafka_migration.cutover.report import generate_cutover_report

    written = reports_dir / cutover_id / "report.html"
    if str(written) in str(exc) and written.is_file():
        return written
    try:
        return generate_cutover_report(ledger, cutover_id, reports_dir).html
    except Exception as failure:  # the report is not worth hiding the error that stopped the cutover
        log.warning("Could not write the report of cutover %s: %s", cutover_id, describe_failure(failure))
        return None


def final_run(
    args: argparse.Namespace,
    source: ClusterConfig,
    target: ClusterConfig,
    options: MigrationOptions,
    ledger: Ledger,
    lineage: Lineage,
    schemas: Callable[[Any], Any] | None = None,
) -> tuple[Any, Path]:
    """The final run of a cutover or failback, the pipeline's own, with its plan, progress and table; its
    outcome and the path of its report. Its lineage goes where the cutover's goes. ``schemas``: the step on its
    plan (cli/schema_options.schema_step)."""
    from kafka_migration.cli.progress import run_progress
    from kafka_migration.run.pipeline import run_migration
    from kafka_migration.run.progress import PROGRESS_SECONDS_CLI
    from kafka_migration.spark.submit import SparkLauncher

    view = run_progress(args.verbose)

    def on_plan(plan) -> None:  # type: ignore[no-untyped-def]
        print(render_plan(plan))
        print_schemas(plan)
        if plan.offset_span:
            view.planned(plan.offset_span, len(plan.topics))

    with view:
        outcome = run_migration(
            source,
            target,
            options,
            args.state_dir or default_state_dir(),
            ledger,
            launch=SparkLauncher(
                SparkSettings(
                    master=args.master, conf=spark_conf(args.spark_conf), progress_seconds=PROGRESS_SECONDS_CLI
                ),
                view.line,
            ),
            reports_dir=reports_dir_of(args),
            lineage=lineage,
            on_plan=on_plan,
            schemas=schemas,
        )
        view.done()
    if not outcome.nothing_new:
        print(render_table(outcome.rows))
    html = outcome.report.html
    print(f"Run {outcome.plan.run_id}: {'verified' if outcome.verified else 'NOT verified'}; report {html}")
    return outcome, html


def check_before_writing(args: argparse.Namespace, *clusters: ClusterConfig) -> None:
    """What cutover and failback can check without a cluster, as run does: settings, Spark, directories."""
    SparkSettings(master=args.master, conf=spark_conf(args.spark_conf))
    writable_dir(
        args.state_dir or default_state_dir(), "The state directory (--state-dir or $KAFKA_MIGRATION_STATE_DIR)"
    )
    writable_dir(reports_dir_of(args), "The report directory (--report-dir)")
    check_settings(*clusters)
