"""``kafka-migrate``: the pipeline without Airflow.

Exit codes: 0 copied and verified; 1 verification found differences; 2 bad input
or configuration (nothing written); 3 any other failure (a copy error, Spark, a cluster that
could not be read during verification).
``groups sync``: 0 every selected group synced and proven; 1 some partition not
translatable or not proven; 2 and 3 as above.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from kafka_migration import __version__
from kafka_migration.exceptions import ConfigurationError, MigrationError
from kafka_migration.model.config import (
    DEFAULT_INCLUDE,
    DEFAULT_RENAME,
    ClusterConfig,
    MigrationOptions,
    compile_pattern,
    writable_dir,
)
from kafka_migration.model.results import UNVERIFIED
from kafka_migration.reports.summary import render_plan, render_table, results_timings, run_status, timings_line
from kafka_migration.spark.executor_env import DEFAULT_OUTPUT, EXECUTOR_ENV_VARIABLE, configured_executor_env
from kafka_migration.spark.submit import SparkSettings, default_master

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger
    from kafka_migration.model.timings import RunTimings
    from kafka_migration.run.pipeline import RunOutcome
    from kafka_migration.spark.submit import SparkApplication

EXIT_OK, EXIT_MISMATCH, EXIT_BAD_INPUT, EXIT_FAILED = 0, 1, 2, 3
_RECORDS = re.compile(r"kafka_migration\.spark: (copy|verify) progress: ([\d,]+) / ([\d,]+) records")
_PROGRESS = re.compile(
    r"^\S+ \S+ \S+ kafka_migration\.spark: (copy|verify) (.+?): (\w+), .*\((\d+)/(\d+) topics done\)"
)


def default_state_dir() -> Path:
    return Path(os.environ.get("KAFKA_MIGRATION_STATE_DIR", Path.home() / ".kafka-migration"))


class _Parser(argparse.ArgumentParser):
    """argparse, except that a usage error is one line on stderr and exit 2, like every other refusal."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"error: {message} (see '{self.prog} --help')\n")


# Option types: an empty value or a number out of range is a usage error, never a silent default.
def _text(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("must not be empty (leave the option out to use its default)")
    return value


def _path(value: str) -> Path:
    return Path(_text(value))


def _whole(value: str, least: int) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {value!r}") from None
    if number < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, got {number}")
    return number


def _positive(value: str) -> int:
    return _whole(value, 1)


def _seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {value!r}") from None
    if not number >= 0 or number == float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {value!r}")
    return number


def _not_negative(value: str) -> int:
    return _whole(value, 0)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kafka-migrate", description="Bounded, verified Kafka cluster-to-cluster migration.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="plan, create topics, copy with Spark and verify")
    run.add_argument("--source", type=_text, help="source bootstrap servers HOST:PORT[,...]")
    run.add_argument("--target", type=_text, help="target bootstrap servers HOST:PORT[,...]")
    run.add_argument(
        "--source-config", type=_path, help="JSON file of librdkafka settings for the source (security goes here)"
    )
    run.add_argument("--target-config", type=_path, help="JSON file of librdkafka settings for the target")
    run.add_argument(
        "--include", type=_text, default=DEFAULT_INCLUDE, help="regex a topic name must fully match (default: all)"
    )
    run.add_argument("--exclude", type=_text, help="regex of topic names to leave out")
    run.add_argument(
        "--rename",
        type=_text,
        default=DEFAULT_RENAME,
        help="target name template, e.g. 'src.{topic}' (default: same name)",
    )
    run.add_argument(
        "--replication-factor", type=_positive, help="target replication factor (default: min(source, target brokers))"
    )
    run.add_argument(
        "--topics-per-job", type=_positive, default=25, help="topics sharing one Spark application (default 25)"
    )
    run.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
    run.add_argument(
        "--state-dir",
        type=_path,
        default=None,
        help="where run files go (default ~/.kafka-migration or $KAFKA_MIGRATION_STATE_DIR)",
    )
    run.add_argument(
        "--master",
        type=_text,
        default=default_master(),
        help="Spark master (default local[2 x cores]: tasks mostly wait on the brokers; or "
        "$KAFKA_MIGRATION_SPARK_MASTER)",
    )
    run.add_argument(
        "--spark-conf",
        type=_text,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra Spark setting, repeatable",
    )
    run.add_argument(
        "--executor-env",
        type=_text,
        metavar="ARCHIVE",
        help="packed executor environment to ship to the executors (built by `kafka-migrate package-env`; a "
        "local file or a URI Spark can fetch; default $KAFKA_MIGRATION_EXECUTOR_ENV; needed on a cluster, "
        "not shipped to a local[...] master)",
    )
    run.add_argument(
        "--start",
        type=_text,
        default="earliest",
        help="where partitions without a checkpoint start: earliest (default), latest, or a time "
        "(ISO 8601 or epoch ms)",
    )
    run.add_argument(
        "--allow-gaps", action="store_true", help="continue when records expired from the source before being copied"
    )
    run.add_argument("--ledger", type=_text, help="ledger database URL (default: SQLite ledger.db in the state dir)")
    run.add_argument("--report-dir", type=_path, help="where reports go (default: <state dir>/reports)")
    run.add_argument(
        "--lease-ttl",
        type=_text,
        metavar="SECONDS",
        help="seconds the run's leases on its target topics live without renewal; another run takes over a lease "
        "its holder stopped renewing for that long (default 600, or $KAFKA_MIGRATION_LEASE_TTL)",
    )
    run.add_argument("-v", "--verbose", action="store_true", help="show Spark's output")

    report = sub.add_parser(
        "report",
        help="regenerate a run's report from the ledger (report RUN_ID), or check a report (report verify FILE)",
    )
    report.add_argument("what", nargs="+", type=_text, metavar="RUN_ID | verify FILE")
    report.add_argument("--ledger", type=_text, help="ledger database URL (default: SQLite ledger.db in the state dir)")
    report.add_argument("--state-dir", type=_path, default=None)
    report.add_argument("--report-dir", type=_path, help="where reports go (default: <state dir>/reports)")

    package = sub.add_parser(
        "package-env",
        help="build the executor environment archive (confluent-kafka and this package) for Spark clusters",
    )
    package.add_argument(
        "--output", type=_path, default=DEFAULT_OUTPUT, help=f"the archive to write (default {DEFAULT_OUTPUT})"
    )
    package.add_argument(
        "--python",
        type=_text,
        help="interpreter the environment links to; it must exist at this path on every executor node "
        "(default: the one running this command)",
    )
    package.add_argument(
        "--project",
        type=_path,
        help="source tree or wheel of kafka-migration (default: the code this command runs)",
    )

    history = sub.add_parser("history", help="list the runs in the ledger")
    history.add_argument(
        "--ledger", type=_text, help="ledger database URL (default: SQLite ledger.db in the state dir)"
    )
    history.add_argument("--state-dir", type=_path, default=None)
    history.add_argument("--limit", type=_positive, default=30, help="at most this many runs (default 30)")
    history.add_argument("--cutovers", action="store_true", help="list the cutovers and their failbacks instead")

    _cutover_parsers(sub)

    checkpoints = sub.add_parser("checkpoints", help="the ledger's checkpoints")
    checkpoints_sub = checkpoints.add_subparsers(dest="checkpoints_command", required=True)
    forget = checkpoints_sub.add_parser(
        "forget",
        help="forget where a topic's copies stand (after a source or target topic was deleted and recreated): "
        "the next run copies it from the start; runs and their evidence stay in the ledger",
    )
    forget.add_argument("--topic", type=_text, required=True, help="source topic")
    forget.add_argument("--target-topic", type=_text, help="target topic (default: every target it was copied to)")
    forget.add_argument("--source-cluster", type=_text, help="source cluster id (default: every source cluster)")
    forget.add_argument("--target-cluster", type=_text, help="target cluster id (default: every target cluster)")
    forget.add_argument("--ledger", type=_text, help="ledger database URL (default: SQLite ledger.db in the state dir)")
    forget.add_argument("--state-dir", type=_path, default=None)

    offsets = sub.add_parser("offsets", help="offset translation from the ledger")
    offsets_sub = offsets.add_subparsers(dest="offsets_command", required=True)
    translate = offsets_sub.add_parser("translate", help="the target offset of a copied source offset")
    translate.add_argument("--topic", type=_text, required=True, help="source topic")
    translate.add_argument("--partition", required=True, type=_not_negative)
    translate.add_argument(
        "--offset", required=True, type=_not_negative, help="source offset (e.g. a consumer group position)"
    )
    translate.add_argument("--target-topic", type=_text, help="target topic, when the topic was copied to several")
    translate.add_argument("--source-cluster", type=_text, help="source cluster id, when several were migrated")
    translate.add_argument("--target-cluster", type=_text, help="target cluster id, when several were migrated")
    translate.add_argument(
        "--ledger", type=_text, help="ledger database URL (default: SQLite ledger.db in the state dir)"
    )
    translate.add_argument("--state-dir", type=_path, default=None)

    groups = sub.add_parser("groups", help="consumer group offsets on the target")
    groups_sub = groups.add_subparsers(dest="groups_command", required=True)
    sync = groups_sub.add_parser(
        "sync",
        help="translate the source groups' committed offsets to the target exactly, write them and prove them",
    )
    sync.add_argument("--source", type=_text, help="source bootstrap servers HOST:PORT[,...]")
    sync.add_argument("--target", type=_text, help="target bootstrap servers HOST:PORT[,...]")
    sync.add_argument("--source-config", type=_path, help="JSON file of librdkafka settings for the source")
    sync.add_argument("--target-config", type=_path, help="JSON file of librdkafka settings for the target")
    sync.add_argument("--group", type=_text, default=".*", help="regex a group id must fully match (default: all)")
    sync.add_argument("--exclude-group", type=_text, help="regex of group ids to leave out")
    sync.add_argument("--dry-run", action="store_true", help="translate and prove, write nothing")
    sync.add_argument(
        "--allow-rewind", action="store_true", help="move a target group back when it is ahead of the translation"
    )
    sync.add_argument("--ledger", type=_text, help="ledger database URL (default: SQLite ledger.db in the state dir)")
    sync.add_argument("--state-dir", type=_path, default=None)
    show = groups_sub.add_parser("show", help="what a recorded group sync did, from the ledger")
    show.add_argument("sync_id", type=_text, metavar="SYNC_ID", help="a sync id from 'kafka-migrate history'")
    show.add_argument("--ledger", type=_text, help="ledger database URL (default: SQLite ledger.db in the state dir)")
    show.add_argument("--state-dir", type=_path, default=None)
    return parser


def _cluster_options(parser: argparse.ArgumentParser, required: bool) -> None:
    parser.add_argument("--source", type=_text, required=required, help="source bootstrap servers HOST:PORT[,...]")
    parser.add_argument("--target", type=_text, required=required, help="target bootstrap servers HOST:PORT[,...]")
    parser.add_argument("--source-config", type=_path, help="JSON file of librdkafka settings for the source")
    parser.add_argument("--target-config", type=_path, help="JSON file of librdkafka settings for the target")
    parser.add_argument(
        "--quiet-seconds",
        type=_seconds,
        default=30.0,
        help="how long the topics must receive no record before the final run (default 30)",
    )
    parser.add_argument("--ledger", type=_text, help="ledger database URL (default: SQLite ledger.db in the state dir)")
    parser.add_argument("--state-dir", type=_path, default=None)
    parser.add_argument("--report-dir", type=_path, help="where reports go (default: <state dir>/reports)")
    parser.add_argument("--master", type=_text, default=default_master(), help="Spark master (as for run)")
    parser.add_argument("--spark-conf", type=_text, action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--topics-per-job", type=_positive, default=25)
    parser.add_argument("-v", "--verbose", action="store_true", help="show Spark's output")


def _cutover_parsers(sub: Any) -> None:
    cutover = sub.add_parser(
        "cutover",
        help="switch to the target: refuse while producers write or consumers run, final verified run, "
        "group offsets with proof, cutover report",
    )
    _cluster_options(cutover, required=False)
    cutover.add_argument("--include", type=_text, default=DEFAULT_INCLUDE, help="regex a topic name must fully match")
    cutover.add_argument("--exclude", type=_text, help="regex of topic names to leave out")
    cutover.add_argument("--rename", type=_text, default=DEFAULT_RENAME, help="target name template, as for run")
    cutover.add_argument(
        "--group", type=_text, help="regex a consumer group id must fully match (default: every group)"
    )
    cutover.add_argument("--exclude-group", type=_text, help="regex of consumer group ids to leave out")
    cutover.add_argument("--replication-factor", type=_positive)
    failback = sub.add_parser(
        "failback",
        help="after a cutover: copy what the target received back to the source, verified, and move the groups back",
    )
    failback.add_argument("--cutover", type=_text, required=True, metavar="CUTOVER_ID", help="the cutover to reverse")
    _cluster_options(failback, required=False)


def _ledger_url(args: argparse.Namespace) -> str:
    """--ledger, $KAFKA_MIGRATION_LEDGER_URL, or SQLite in the state dir; refused here if it cannot work."""
    from kafka_migration.ledger import default_ledger_url
    from kafka_migration.ledger.urls import check_ledger_url

    url = (
        args.ledger
        or os.environ.get("KAFKA_MIGRATION_LEDGER_URL")
        or default_ledger_url(args.state_dir or default_state_dir())
    )
    check_ledger_url(url)
    return url


def _ledger(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The ledger of a command that reads it: refused, not created, when it does not exist."""
    from kafka_migration.ledger import Ledger

    return Ledger.open(_ledger_url(args), create=False)


def _reports_dir(args: argparse.Namespace) -> Path:
    return args.report_dir or (args.state_dir or default_state_dir()) / "reports"


def _report(args: argparse.Namespace) -> int:
    from kafka_migration.reports.signoff import generate_report, verify_report

    if args.what[0] == "verify":
        if len(args.what) != 2:
            raise ConfigurationError("usage: kafka-migrate report verify FILE")
        path = Path(args.what[1])
        if not path.is_file() or not os.access(path, os.R_OK):
            raise ConfigurationError(
                f"{path} is not a readable file; give the path of a report.json written by kafka-migrate."
            )
        ledger = _ledger(args)
        try:
            data = json.loads(path.read_text())
            if data.get("kind") == "cutover":  # a cutover report: its digest is recorded on the cutover
                found = ledger.cutover(data["cutover"]["cutover_id"])
            else:
                found = ledger.run(data["run"]["run_id"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            print(f"{path} is not a kafka-migration report.json ({exc})")
            return EXIT_MISMATCH
        ok, message = verify_report(path, found["report_sha256"] if found else None)
        print(message)
        return EXIT_OK if ok else EXIT_MISMATCH
    if len(args.what) != 1:
        raise ConfigurationError("usage: kafka-migrate report RUN_ID, or kafka-migrate report verify FILE")
    reports = writable_dir(_reports_dir(args), "The report directory (--report-dir)")
    files = generate_report(_ledger(args), args.what[0], reports)
    print(f"Report of run {args.what[0]}: {files.html} ({files.sha256} recorded in the ledger)")
    return EXIT_OK


def _cutover_history(args: argparse.Namespace) -> int:
    rows = _ledger(args).cutovers(limit=args.limit)
    if not rows:
        print("The ledger holds no cutovers yet.")
        return EXIT_OK
    header = ("cutover id", "started (UTC)", "status", "final run", "groups", "failback", "source -> target")
    _print_table(
        header,
        [
            (
                r["cutover_id"],
                r["started_at"].strftime("%Y-%m-%d %H:%M:%S") if r["started_at"] else "",
                r["status"],
                r["run_id"] or "",
                str(len(r["groups"] or [])),
                f"{r['failback_status']} ({r['failback_run_id']})" if r["failback_status"] else "",
                f"{r['source_cluster_id']} -> {r['target_cluster_id']}",
            )
            for r in rows
        ],
    )
    return EXIT_OK


def _history(args: argparse.Namespace) -> int:
    if args.cutovers:
        return _cutover_history(args)
    ledger = _ledger(args)
    rows = ledger.runs(limit=args.limit)
    syncs = ledger.group_syncs(limit=args.limit)
    if not rows and not syncs:
        print("The ledger holds no runs yet.")
        return EXIT_OK
    if rows:
        _runs_table(rows)
    if syncs:
        if rows:
            print()
        print("Group syncs:")
        _print_table(
            ("sync id", "run id", "synced (UTC)", "groups", "partitions", "not synced", "source -> target"),
            [
                (
                    s["sync_id"],
                    s["run_id"] or "-",
                    s["synced_at"].strftime("%Y-%m-%d %H:%M:%S") if s["synced_at"] else "",
                    str(s["groups"]),
                    str(s["partitions"]),
                    str(s["not_ok"] or 0),
                    f"{s['source_cluster_id']} -> {s['target_cluster_id']}",
                )
                for s in syncs
            ],
        )
    held = ledger.leases.active()
    if held:
        print(f"\nRuns writing now ({len(held)} target topic lease(s)):")
        for lease in held:
            print(f"  {lease.key.target_topic} on {lease.key.target_cluster_id}: {lease.describe()}")
    return EXIT_OK


def _runs_table(rows: list[dict]) -> None:  # type: ignore[type-arg]
    from kafka_migration.model.timings import RunTimings

    header = ("run id", "trigger", "started (UTC)", "status", "topics", "records", "wall s", "source -> target")
    walls = [RunTimings.from_dict(r.get("timings") if isinstance(r.get("timings"), dict) else None) for r in rows]
    body = [
        (
            r["run_id"],
            r["trigger"],
            r["started_at"].strftime("%Y-%m-%d %H:%M:%S") if r["started_at"] else "",
            r["status"],
            str(r["topics"]),
            f"{r['records']:,}",
            f"{wall.wall:.1f}" if wall is not None else "-",
            f"{r['source_cluster_id']} -> {r['target_cluster_id']}",
        )
        for r, wall in zip(rows, walls, strict=True)
    ]
    _print_table(header, body)


def _print_table(header: tuple[str, ...], body: list[tuple[str, ...]]) -> None:
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


def _groups(args: argparse.Namespace) -> int:
    from kafka_migration.groups.rules import render_rows, render_sync, verdict_line
    from kafka_migration.groups.sync import sync_groups
    from kafka_migration.model.groups import GOOD_OUTCOMES

    if args.groups_command == "show":
        rows = _ledger(args).group_sync_rows(sync_id=args.sync_id)
        if not rows:
            raise ConfigurationError(
                f"The ledger has no group sync {args.sync_id!r}; list them with 'kafka-migrate history'."
            )
        first = rows[0]
        print(
            f"Group sync {args.sync_id}"
            + (f" (run {first['run_id']})" if first["run_id"] else "")
            + f", {first['synced_at']:%Y-%m-%d %H:%M:%S} UTC, {first['source_cluster_id']} -> "
            f"{first['target_cluster_id']}"
        )
        print(render_rows(rows))
        return EXIT_OK if all(r["outcome"] in GOOD_OUTCOMES for r in rows) else EXIT_MISMATCH

    from kafka_migration.groups.rules import select_groups
    from kafka_migration.kafka.clients import check_client_settings

    select_groups((), args.group, args.exclude_group)  # patterns first: nothing is read before they are valid
    source = ClusterConfig.build("source", args.source, args.source_config)
    target = ClusterConfig.build("target", args.target, args.target_config)
    check_client_settings(source)
    check_client_settings(target)
    result = sync_groups(
        source,
        target,
        _ledger(args),
        groups=args.group,
        exclude_groups=args.exclude_group,
        dry_run=args.dry_run,
        allow_rewind=args.allow_rewind,
    )
    print(render_sync(result))
    print()
    print(verdict_line(result))
    if args.dry_run:
        print("Dry run: no offset was written and nothing was recorded.")
    return result.exit_code


def _package_env(args: argparse.Namespace) -> int:
    from kafka_migration.spark.executor_env import build_executor_env

    output = build_executor_env(args.output, python=args.python, project=args.project)
    print(
        f"Ship it with: kafka-migrate run --executor-env {output} ... (or {EXECUTOR_ENV_VARIABLE}={output}); "
        "it sets spark.archives and spark.pyspark.python."
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
            raise ConfigurationError(f"--spark-conf {pair!r} must look like KEY=VALUE, e.g. spark.executor.memory=2g")
        conf[key] = value
    return conf


def _run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from kafka_migration.kafka.clients import check_client_settings
    from kafka_migration.ledger.leases import lease_ttl_from_env, parse_lease_ttl

    started = time.time()  # the wall time a user sees starts here
    stamps: dict[str, float] = {}
    console = Console(stderr=True)
    # Everything that can be checked without a cluster is checked before anything is written.
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
    source = ClusterConfig.build("source", args.source, args.source_config)
    target = ClusterConfig.build("target", args.target, args.target_config)
    spark = SparkSettings(
        master=args.master,
        conf=_spark_conf(args.spark_conf),
        executor_env=configured_executor_env(args.executor_env),
    )
    state_dir = writable_dir(
        args.state_dir or default_state_dir(), "The state directory (--state-dir or $KAFKA_MIGRATION_STATE_DIR)"
    )
    writable_dir(_reports_dir(args), "The report directory (--report-dir)")
    check_client_settings(source)
    check_client_settings(target)
    ledger_url = _ledger_url(args)
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
        stamps["planned"] = time.time()
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

    run_id, app, ledger = _start_spark_then_open_ledger(args, state_dir, source, target, spark, on_line, ledger_url)
    from kafka_migration.run.pipeline import run_migration

    with progress:
        outcome = run_migration(
            source,
            target,
            options,
            state_dir,
            ledger,
            spark=spark,
            on_plan=on_plan,
            on_line=on_line,
            on_step=on_step,
            lease_ttl=lease_ttl,
            run_id=run_id,
            app=app,
            started=started,
        )
        for task in progress.tasks:  # the last datagrams may be lost; the steps are done
            progress.update(task.id, completed=task.total)
    if args.dry_run:
        print("Dry run: nothing was created or copied.")
        return EXIT_OK
    from kafka_migration.reports.signoff import generate_report

    timings = getattr(outcome, "timings", None) or _measured(outcome, started, stamps.get("planned"))
    ledger.set_run_timings(outcome.plan.run_id, timings)  # also when run_migration stored them: the same
    if outcome.nothing_new:
        files = generate_report(ledger, outcome.plan.run_id, _reports_dir(args))
        print(f"Run {outcome.plan.run_id}: nothing new on the source since the last verified run; nothing copied.")
        print(f"Report: {files.html}")
        if timings is not None:
            print(timings_line(timings))
        return EXIT_OK
    print()
    print(render_table(outcome.rows))
    print(f"Run files: {outcome.directory}")
    files = generate_report(ledger, outcome.plan.run_id, _reports_dir(args))
    print(f"Report: {files.html} (report.json {files.sha256})")
    code = _verdict_exit(outcome)
    print(timings_line(timings))
    return code


def _start_spark_then_open_ledger(
    args: argparse.Namespace,
    state_dir: Path,
    source: ClusterConfig,
    target: ClusterConfig,
    spark: SparkSettings,
    on_line: Callable[[str], None],
    ledger_url: str,
) -> tuple[str, SparkApplication | None, Ledger]:
    """A run id, its Spark application already starting (None for a dry run), and the opened ledger.

    Spark starts before the ledger and the pipeline are even imported: its start-up (seconds) runs
    while this process opens the ledger and plans. Until run_migration owns the application, it is
    stopped here on any failure, a ledger refused as bad input included.
    """
    from kafka_migration.run.files import new_run_id, run_dir
    from kafka_migration.spark.submit import can_wait, migrate_application

    run_id = new_run_id()
    app = None
    if not args.dry_run and can_wait(spark):
        app = migrate_application(run_dir(state_dir, run_id), source, target, spark, on_line, wait=True)
    try:
        from kafka_migration.ledger import Ledger

        return run_id, app, Ledger.open(ledger_url)
    except BaseException:
        if app is not None:
            app.abort()
        raise


def _measured(outcome: RunOutcome, started: float, planned: float | None) -> RunTimings:
    """The run's timings from the CLI's own stamps and the steps' results files, when the pipeline gave none."""
    from kafka_migration.run.files import read_results

    steps = {}
    for step in ("copy", "verify"):
        try:
            found = read_results(outcome.directory / f"{step}.json", step, step)
        except Exception:  # a corrupt results file was reported by the run itself; timing is not worth failing
            found = None
        steps[step] = [found] if found is not None else []
    return results_timings(started, planned, steps["copy"], steps["verify"], time.time())


def _verdict_exit(outcome: RunOutcome) -> int:
    """The closing line of a run and its exit code."""
    run_id = outcome.plan.run_id
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


def _run_quietly(
    args: argparse.Namespace, source: ClusterConfig, target: ClusterConfig, options: MigrationOptions, ledger: Any
):  # type: ignore[no-untyped-def]
    """The final run of a cutover or failback: the pipeline's own, with its plan and table printed."""
    from kafka_migration.reports.signoff import generate_report
    from kafka_migration.run.pipeline import run_migration

    def on_line(line: str) -> None:
        if args.verbose:
            print(line, file=sys.stderr)

    outcome = run_migration(
        source,
        target,
        options,
        args.state_dir or default_state_dir(),
        ledger,
        spark=SparkSettings(master=args.master, conf=_spark_conf(args.spark_conf)),
        on_plan=lambda plan: print(render_plan(plan)),
        on_line=on_line,
    )
    if not outcome.nothing_new:
        print(render_table(outcome.rows))
    files = generate_report(ledger, outcome.plan.run_id, _reports_dir(args))
    print(f"Run {outcome.plan.run_id}: {'verified' if outcome.verified else 'NOT verified'}; report {files.html}")
    return outcome


def _check_before_writing(args: argparse.Namespace, *clusters: ClusterConfig) -> None:
    """What cutover and failback can check without a cluster, as run does: settings, Spark, directories."""
    from kafka_migration.kafka.clients import check_client_settings

    SparkSettings(master=args.master, conf=_spark_conf(args.spark_conf))
    writable_dir(
        args.state_dir or default_state_dir(), "The state directory (--state-dir or $KAFKA_MIGRATION_STATE_DIR)"
    )
    writable_dir(_reports_dir(args), "The report directory (--report-dir)")
    for cluster in clusters:
        check_client_settings(cluster)


def _cutover(args: argparse.Namespace) -> int:
    from kafka_migration.cutover.record import FAILED
    from kafka_migration.cutover.steps import finish_cutover, prepare_cutover
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
    compile_pattern("group", args.group or ".*")  # bad input fails before anything is opened or written
    if args.exclude_group:
        compile_pattern("exclude-group", args.exclude_group)
    _check_before_writing(args, source, target)
    from kafka_migration.ledger import Ledger

    ledger = Ledger.open(_ledger_url(args))  # the final run may be the first one: like run, it may create it
    cutover_id = new_run_id("cutover")
    print(f"Cutover {cutover_id}: checking that the source topics stay quiet for {args.quiet_seconds:g}s ...")
    checked = prepare_cutover(
        source, target, options, ledger, cutover_id, args.quiet_seconds, args.group, args.exclude_group
    )
    print(f"Pre-flight passed: source quiet; consumer groups to move: {', '.join(checked.groups) or 'none'}.")
    try:
        outcome = _run_quietly(args, source, target, options, ledger)
    except BaseException as exc:
        ledger.update_cutover(cutover_id, finished=True, status=FAILED, message=str(exc)[:4000] or type(exc).__name__)
        raise
    result = finish_cutover(source, target, ledger, cutover_id, checked, outcome.plan, _reports_dir(args))
    print(f"Cutover {cutover_id} COMPLETED: {result.message}.")
    print(f"Cutover report (checklist, group start offsets): {result.report}")
    print(f"To go back later: kafka-migrate failback --cutover {cutover_id}")
    return EXIT_OK


def _failback(args: argparse.Namespace) -> int:
    from kafka_migration.cutover.record import FAILED
    from kafka_migration.cutover.steps import finish_failback, load_cutover, prepare_failback
    from kafka_migration.model.config import load_settings_file

    # Before the ledger is read: what the options say on their own (bootstraps may come from the cutover).
    given = [
        ClusterConfig.build(role, getattr(args, role), getattr(args, f"{role}_config"))
        for role in ("source", "target")
        if getattr(args, role)
    ]
    for role in ("source", "target"):
        if getattr(args, f"{role}_config") and not getattr(args, role):
            load_settings_file(role, getattr(args, f"{role}_config"))
    _check_before_writing(args, *given)
    ledger = _ledger(args)
    cutover = load_cutover(ledger, args.cutover)
    source = ClusterConfig.build("source", args.source or cutover.source_bootstrap, args.source_config)
    target = ClusterConfig.build("target", args.target or cutover.target_bootstrap, args.target_config)
    print(
        f"Failback of cutover {cutover.cutover_id}: checking that the target topics stay quiet for "
        f"{args.quiet_seconds:g}s ..."
    )
    cutover, checked, options = prepare_failback(source, target, ledger, cutover.cutover_id, args.quiet_seconds)
    options = MigrationOptions.from_mapping({**vars(options), "topics_per_job": args.topics_per_job})
    try:
        outcome = _run_quietly(
            args, target, source, options, ledger
        )  # reverse: the target's records go back to the source
    except BaseException as exc:
        ledger.update_cutover(
            cutover.cutover_id, failback_status=FAILED, failback_message=str(exc)[:4000] or type(exc).__name__
        )
        raise
    result = finish_failback(source, target, ledger, cutover, checked, outcome.plan, _reports_dir(args))
    print(f"Failback of cutover {cutover.cutover_id} COMPLETED: {result.message}.")
    print(f"Report: {result.report}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    commands = {
        "run": _run,
        "package-env": _package_env,
        "report": _report,
        "history": _history,
        "offsets": _translate,
        "groups": _groups,
        "cutover": _cutover,
        "failback": _failback,
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


def console_main() -> int:
    """The ``kafka-migrate`` command: ``main``, then an exit that skips the interpreter's last full garbage
    collection. After a run the CLI holds SQLAlchemy, Alembic, PySpark and rich: collecting them took
    ~0.5 s of CPU (0.7 s of wall) after the verdict was printed. Exit handlers still run."""
    code = main()
    import gc

    gc.freeze()  # nothing is left to collect: the process ends now
    return code
