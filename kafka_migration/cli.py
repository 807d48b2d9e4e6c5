"""``kafka-migrate``: the pipeline without Airflow.

Exit codes: 0 copied and verified; 1 verification found differences; 2 bad input
or configuration (nothing written); 3 any other failure (a copy error, Spark).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from kafka_migration import __version__
from kafka_migration.config import DEFAULT_INCLUDE, DEFAULT_RENAME, ClusterConfig, MigrationOptions
from kafka_migration.exceptions import ConfigurationError, MigrationError
from kafka_migration.spark.submit import SparkSettings, default_master
from kafka_migration.summary import render_plan, render_table

EXIT_OK, EXIT_MISMATCH, EXIT_BAD_INPUT, EXIT_FAILED = 0, 1, 2, 3
_RECORDS = re.compile(r"kafka_migration\.spark: (copy|verify) progress: ([\d,]+) / ([\d,]+) records")
_PROGRESS = re.compile(
    r"^\S+ \S+ \S+ kafka_migration\.spark: (copy|verify) (.+?): (\w+), .*\((\d+)/(\d+) topics done\)"
)


def default_state_dir() -> Path:
    return Path(os.environ.get("KAFKA_MIGRATION_STATE_DIR", Path.home() / ".kafka-migration"))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-migrate", description="Bounded, verified Kafka cluster-to-cluster migration."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="plan, create topics, copy with Spark and verify")
    run.add_argument("--source", help="source bootstrap servers HOST:PORT[,...]")
    run.add_argument("--target", help="target bootstrap servers HOST:PORT[,...]")
    run.add_argument(
        "--source-config", type=Path, help="JSON file of librdkafka settings for the source (security goes here)"
    )
    run.add_argument("--target-config", type=Path, help="JSON file of librdkafka settings for the target")
    run.add_argument("--include", default=DEFAULT_INCLUDE, help="regex a topic name must fully match (default: all)")
    run.add_argument("--exclude", help="regex of topic names to leave out")
    run.add_argument(
        "--rename", default=DEFAULT_RENAME, help="target name template, e.g. 'src.{topic}' (default: same name)"
    )
    run.add_argument(
        "--replication-factor", type=int, help="target replication factor (default: min(source, target brokers))"
    )
    run.add_argument("--topics-per-job", type=int, default=25, help="topics sharing one Spark application (default 25)")
    run.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
    run.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help="where run files go (default ~/.kafka-migration or $KAFKA_MIGRATION_STATE_DIR)",
    )
    run.add_argument(
        "--master",
        default=default_master(),
        help="Spark master (default local[2 x cores]: tasks mostly wait on the brokers; or "
        "$KAFKA_MIGRATION_SPARK_MASTER)",
    )
    run.add_argument(
        "--spark-conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark setting, repeatable"
    )
    run.add_argument(
        "--start",
        default="earliest",
        help="where partitions without a checkpoint start: earliest (default), latest, or a time "
        "(ISO 8601 or epoch ms)",
    )
    run.add_argument(
        "--allow-gaps", action="store_true", help="continue when records expired from the source before being copied"
    )
    run.add_argument("--ledger", help="ledger database URL (default: SQLite ledger.db in the state dir)")
    run.add_argument("--report-dir", type=Path, help="where reports go (default: <state dir>/reports)")
    run.add_argument(
        "--lease-ttl",
        metavar="SECONDS",
        help="seconds the run's leases on its target topics live without renewal; another run takes over a lease "
        "its holder stopped renewing for that long (default 600, or $KAFKA_MIGRATION_LEASE_TTL)",
    )
    run.add_argument("-v", "--verbose", action="store_true", help="show Spark's output")

    report = sub.add_parser(
        "report",
        help="regenerate a run's report from the ledger (report RUN_ID), or check a report (report verify FILE)",
    )
    report.add_argument("what", nargs="+", metavar="RUN_ID | verify FILE")
    report.add_argument("--ledger", help="ledger database URL (default: SQLite ledger.db in the state dir)")
    report.add_argument("--state-dir", type=Path, default=None)
    report.add_argument("--report-dir", type=Path, help="where reports go (default: <state dir>/reports)")

    history = sub.add_parser("history", help="list the runs in the ledger")
    history.add_argument("--ledger", help="ledger database URL (default: SQLite ledger.db in the state dir)")
    history.add_argument("--state-dir", type=Path, default=None)
    history.add_argument("--limit", type=int, default=30)

    checkpoints = sub.add_parser("checkpoints", help="the ledger's checkpoints")
    checkpoints_sub = checkpoints.add_subparsers(dest="checkpoints_command", required=True)
    forget = checkpoints_sub.add_parser(
        "forget",
        help="forget where a topic's copies stand (after a source or target topic was deleted and recreated): "
        "the next run copies it from the start; runs and their evidence stay in the ledger",
    )
    forget.add_argument("--topic", required=True, help="source topic")
    forget.add_argument("--target-topic", help="target topic (default: every target it was copied to)")
    forget.add_argument("--source-cluster", help="source cluster id (default: every source cluster)")
    forget.add_argument("--target-cluster", help="target cluster id (default: every target cluster)")
    forget.add_argument("--ledger", help="ledger database URL (default: SQLite ledger.db in the state dir)")
    forget.add_argument("--state-dir", type=Path, default=None)

    offsets = sub.add_parser("offsets", help="offset translation from the ledger")
    offsets_sub = offsets.add_subparsers(dest="offsets_command", required=True)
    translate = offsets_sub.add_parser("translate", help="the target offset of a copied source offset")
    translate.add_argument("--topic", required=True, help="source topic")
    translate.add_argument("--partition", required=True, type=int)
    translate.add_argument("--offset", required=True, type=int, help="source offset (e.g. a consumer group position)")
    translate.add_argument("--target-topic", help="target topic, when the topic was copied to several")
    translate.add_argument("--source-cluster", help="source cluster id, when several were migrated")
    translate.add_argument("--target-cluster", help="target cluster id, when several were migrated")
    translate.add_argument("--ledger", help="ledger database URL (default: SQLite ledger.db in the state dir)")
    translate.add_argument("--state-dir", type=Path, default=None)
    return parser


def _ledger(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from kafka_migration.ledger import Ledger, default_ledger_url

    url = (
        args.ledger
        or os.environ.get("KAFKA_MIGRATION_LEDGER_URL")
        or default_ledger_url(args.state_dir or default_state_dir())
    )
    return Ledger.open(url)


def _reports_dir(args: argparse.Namespace) -> Path:
    return args.report_dir or (args.state_dir or default_state_dir()) / "reports"


def _report(args: argparse.Namespace) -> int:
    from kafka_migration.report import generate_report, verify_report

    ledger = _ledger(args)
    if args.what[0] == "verify":
        if len(args.what) != 2:
            raise ConfigurationError("usage: kafka-migrate report verify FILE")
        path = Path(args.what[1])
        try:
            run_id = json.loads(path.read_text())["run"]["run_id"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"{path} is not a kafka-migration report.json ({exc})")
            return EXIT_MISMATCH
        run = ledger.run(run_id)
        ok, message = verify_report(path, run["report_sha256"] if run else None)
        print(message)
        return EXIT_OK if ok else EXIT_MISMATCH
    if len(args.what) != 1:
        raise ConfigurationError("usage: kafka-migrate report RUN_ID")
    files = generate_report(ledger, args.what[0], _reports_dir(args))
    print(f"Report of run {args.what[0]}: {files.html} ({files.sha256} recorded in the ledger)")
    return EXIT_OK


def _history(args: argparse.Namespace) -> int:
    ledger = _ledger(args)
    rows = ledger.runs(limit=args.limit)
    if not rows:
        print("The ledger holds no runs yet.")
        return EXIT_OK
    _print_history(rows)
    held = ledger.leases.active()
    if held:
        print(f"\nRuns writing now ({len(held)} target topic lease(s)):")
        for lease in held:
            print(f"  {lease.key.target_topic} on {lease.key.target_cluster_id}: {lease.describe()}")
    return EXIT_OK


def _print_history(rows: Sequence[dict]) -> None:  # type: ignore[type-arg]
    header = ("run id", "trigger", "started (UTC)", "status", "topics", "records", "source -> target")
    body = [
        (
            r["run_id"],
            r["trigger"],
            r["started_at"].strftime("%Y-%m-%d %H:%M:%S") if r["started_at"] else "",
            r["status"],
            str(r["topics"]),
            f"{r['records']:,}",
            f"{r['source_cluster_id']} -> {r['target_cluster_id']}",
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(header)]
    for line in (header, tuple("-" * w for w in widths), *body):
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())


def _translate(args: argparse.Namespace) -> int:
    result = _ledger(args).translate(
        args.topic,
        args.partition,
        args.offset,
        target_topic=args.target_topic,
        source_cluster_id=args.source_cluster,
        target_cluster_id=args.target_cluster,
    )
    print(
        f"{result.source_topic}[{result.partition}] offset {result.source_offset} on {result.source_cluster_id} "
        f"-> {result.target_topic}[{result.partition}] offset {result.target_offset} on {result.target_cluster_id} "
        f"(verified by run {result.run_id})"
    )
    return EXIT_OK


def _forget(args: argparse.Namespace) -> int:
    forgotten = _ledger(args).forget_checkpoints(
        args.topic,
        target_topic=args.target_topic,
        source_cluster_id=args.source_cluster,
        target_cluster_id=args.target_cluster,
    )
    for source_cluster, source_topic, target_cluster, target_topic in forgotten:
        print(
            f"Forgot the checkpoints of {source_topic} on {source_cluster} -> {target_topic} on {target_cluster}: "
            "the next run copies it from the start of the source (--start) into an empty or new target topic."
        )
    return EXIT_OK


def _spark_conf(pairs: Sequence[str]) -> dict[str, str]:
    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise MigrationError(f"--spark-conf {pair!r} must look like KEY=VALUE")
        conf[key] = value
    return conf


def _run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from kafka_migration.ledger.leases import lease_ttl_from_env, parse_lease_ttl
    from kafka_migration.pipeline import run_migration

    console = Console(stderr=True)
    source = ClusterConfig.build("source", args.source, args.source_config)
    target = ClusterConfig.build("target", args.target, args.target_config)
    options = MigrationOptions(
        include=args.include,
        exclude=args.exclude,
        rename=args.rename,
        dry_run=args.dry_run,
        replication_factor=args.replication_factor,
        topics_per_job=args.topics_per_job,
        start=args.start,
        allow_gaps=args.allow_gaps,
    )
    lease_ttl = parse_lease_ttl(args.lease_ttl, "--lease-ttl") if args.lease_ttl is not None else lease_ttl_from_env()
    ledger = _ledger(args)
    spark = SparkSettings(master=args.master, conf=_spark_conf(args.spark_conf))
    progress = Progress(
        TextColumn("{task.description:<8}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("records"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[topics]} topics done {task.fields[last]}"),
        console=console,
        transient=False,
    )
    tasks: dict[str, int] = {}

    def on_plan(plan) -> None:  # type: ignore[no-untyped-def]
        print(render_plan(plan))
        if not args.dry_run and plan.offset_span:
            for step in ("copy", "verify"):
                tasks[step] = progress.add_task(step, total=plan.offset_span, last="", topics=0, start=False)

    def on_step(step: str) -> None:
        if step in tasks:
            progress.start_task(tasks[step])

    def on_line(line: str) -> None:
        if args.verbose:
            progress.console.print(line, markup=False, highlight=False, soft_wrap=True)
        records = _RECORDS.search(line)
        if records and records.group(1) in tasks:
            progress.update(tasks[records.group(1)], completed=int(records.group(2).replace(",", "")))
        match = _PROGRESS.match(line)
        if match and match.group(1) in tasks:
            step, topic, status, done, _total = match.groups()
            progress.update(tasks[step], topics=int(done), last=f"(last: {topic}: {status})")

    with progress:
        outcome = run_migration(
            source,
            target,
            options,
            args.state_dir or default_state_dir(),
            ledger,
            spark=spark,
            on_plan=on_plan,
            on_line=on_line,
            on_step=on_step,
            lease_ttl=lease_ttl,
        )
        for task in progress.tasks:  # the last datagrams may be lost; the steps are done
            progress.update(task.id, completed=task.total)
    if args.dry_run:
        print("Dry run: nothing was created or copied.")
        return EXIT_OK
    if outcome.nothing_new:
        from kafka_migration.report import generate_report

        files = generate_report(ledger, outcome.plan.run_id, _reports_dir(args))
        print(f"Run {outcome.plan.run_id}: nothing new on the source since the last verified run; nothing copied.")
        print(f"Report: {files.html}")
        return EXIT_OK
    print()
    print(render_table(outcome.rows))
    print(f"Run files: {outcome.directory}")
    from kafka_migration.report import generate_report

    files = generate_report(ledger, outcome.plan.run_id, _reports_dir(args))
    print(f"Report: {files.html} (report.json {files.sha256})")
    if outcome.verified:
        print(f"Migration {outcome.plan.run_id} verified: every partition matches on count and checksum.")
        return EXIT_OK
    if any(r.verdict.startswith("copy") for r in outcome.rows):
        print(f"Migration {outcome.plan.run_id} FAILED: a copy did not complete (see above).")
        return EXIT_FAILED
    print(f"Migration {outcome.plan.run_id} NOT verified: source and target differ (see above).")
    return EXIT_MISMATCH


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    commands = {
        "run": _run,
        "report": _report,
        "history": _history,
        "offsets": _translate,
        "checkpoints": _forget,
    }
    try:
        return commands[args.command](args)
    except MigrationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
