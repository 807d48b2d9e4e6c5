"""``kafka-migrate``: the pipeline without Airflow.

Exit codes: 0 copied and verified; 1 verification found differences; 2 bad input
or configuration (nothing written); 3 any other failure (a copy error, Spark).
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kafka_migration import __version__
from kafka_migration.config import DEFAULT_INCLUDE, DEFAULT_RENAME, ClusterConfig, MigrationOptions, compile_pattern
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
    history.add_argument("--cutovers", action="store_true", help="list the cutovers and their failbacks instead")

    _cutover_parsers(sub)

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

    groups = sub.add_parser("groups", help="consumer group offsets on the target")
    groups_sub = groups.add_subparsers(dest="groups_command", required=True)
    sync = groups_sub.add_parser(
        "sync",
        help="translate the source groups' committed offsets to the target exactly, write them and prove them",
    )
    sync.add_argument("--source", help="source bootstrap servers HOST:PORT[,...]")
    sync.add_argument("--target", help="target bootstrap servers HOST:PORT[,...]")
    sync.add_argument("--source-config", type=Path, help="JSON file of librdkafka settings for the source")
    sync.add_argument("--target-config", type=Path, help="JSON file of librdkafka settings for the target")
    sync.add_argument("--group", default=".*", help="regex a group id must fully match (default: all)")
    sync.add_argument("--exclude-group", help="regex of group ids to leave out")
    sync.add_argument("--dry-run", action="store_true", help="translate and prove, write nothing")
    sync.add_argument(
        "--allow-rewind", action="store_true", help="move a target group back when it is ahead of the translation"
    )
    sync.add_argument("--ledger", help="ledger database URL (default: SQLite ledger.db in the state dir)")
    sync.add_argument("--state-dir", type=Path, default=None)
    show = groups_sub.add_parser("show", help="what a recorded group sync did, from the ledger")
    show.add_argument("sync_id", metavar="SYNC_ID", help="a sync id from 'kafka-migrate history'")
    show.add_argument("--ledger", help="ledger database URL (default: SQLite ledger.db in the state dir)")
    show.add_argument("--state-dir", type=Path, default=None)
    return parser


def _cluster_options(parser: argparse.ArgumentParser, required: bool) -> None:
    parser.add_argument("--source", required=required, help="source bootstrap servers HOST:PORT[,...]")
    parser.add_argument("--target", required=required, help="target bootstrap servers HOST:PORT[,...]")
    parser.add_argument("--source-config", type=Path, help="JSON file of librdkafka settings for the source")
    parser.add_argument("--target-config", type=Path, help="JSON file of librdkafka settings for the target")
    parser.add_argument(
        "--quiet-seconds",
        type=float,
        default=30.0,
        help="how long the topics must receive no record before the final run (default 30)",
    )
    parser.add_argument("--ledger", help="ledger database URL (default: SQLite ledger.db in the state dir)")
    parser.add_argument("--state-dir", type=Path, default=None)
    parser.add_argument("--report-dir", type=Path, help="where reports go (default: <state dir>/reports)")
    parser.add_argument("--master", default=default_master(), help="Spark master (as for run)")
    parser.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--topics-per-job", type=int, default=25)
    parser.add_argument("-v", "--verbose", action="store_true", help="show Spark's output")


def _cutover_parsers(sub: Any) -> None:
    cutover = sub.add_parser(
        "cutover",
        help="switch to the target: refuse while producers write or consumers run, final verified run, "
        "group offsets with proof, cutover report",
    )
    _cluster_options(cutover, required=False)
    cutover.add_argument("--include", default=DEFAULT_INCLUDE, help="regex a topic name must fully match")
    cutover.add_argument("--exclude", help="regex of topic names to leave out")
    cutover.add_argument("--rename", default=DEFAULT_RENAME, help="target name template, as for run")
    cutover.add_argument("--group", help="regex a consumer group id must fully match (default: every group)")
    cutover.add_argument("--exclude-group", help="regex of consumer group ids to leave out")
    cutover.add_argument("--replication-factor", type=int)
    failback = sub.add_parser(
        "failback",
        help="after a cutover: copy what the target received back to the source, verified, and move the groups back",
    )
    failback.add_argument("--cutover", required=True, metavar="CUTOVER_ID", help="the cutover to reverse")
    _cluster_options(failback, required=False)


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
        raise ConfigurationError("usage: kafka-migrate report RUN_ID")
    files = generate_report(ledger, args.what[0], _reports_dir(args))
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
    return EXIT_OK


def _runs_table(rows: list[dict]) -> None:  # type: ignore[type-arg]
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
    from kafka_migration.group_pipeline import sync_groups
    from kafka_migration.group_sync import GOOD_OUTCOMES, render_rows, render_sync, verdict_line

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

    source = ClusterConfig.build("source", args.source, args.source_config)
    target = ClusterConfig.build("target", args.target, args.target_config)
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


def _run_quietly(
    args: argparse.Namespace, source: ClusterConfig, target: ClusterConfig, options: MigrationOptions, ledger: Any
):  # type: ignore[no-untyped-def]
    """The final run of a cutover or failback: the pipeline's own, with its plan and table printed."""
    from kafka_migration.pipeline import run_migration
    from kafka_migration.report import generate_report

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


def _cutover(args: argparse.Namespace) -> int:
    from kafka_migration.cutover import FAILED
    from kafka_migration.cutover_steps import finish_cutover, prepare_cutover
    from kafka_migration.planner import new_run_id

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
    if args.quiet_seconds < 0:
        raise ConfigurationError(f"--quiet-seconds must be 0 or more, got {args.quiet_seconds:g}.")
    ledger = _ledger(args)
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
    from kafka_migration.cutover import FAILED
    from kafka_migration.cutover_steps import finish_failback, load_cutover, prepare_failback

    if args.quiet_seconds < 0:
        raise ConfigurationError(f"--quiet-seconds must be 0 or more, got {args.quiet_seconds:g}.")
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
        "report": _report,
        "history": _history,
        "offsets": _translate,
        "groups": _groups,
        "cutover": _cutover,
        "failback": _failback,
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
