"""``kafka-migrate history``: the runs, group syncs and active leases in the ledger, or its cutovers."""

from __future__ import annotations

import argparse
from typing import Any

from kafka_migration.cli.helptext import subcommand
from kafka_migration.cli.options import (
    EXIT_OK,
    add_ledger_options,
    add_output,
    json_wanted,
    open_ledger,
    positive,
    print_document,
    print_table,
)
from kafka_migration.cli.output import cutover_history_document, history_document
from kafka_migration.model.recorded import RecordedRun
from kafka_migration.model.text import plural


def add_parser(sub: Any) -> None:
    """The ``history`` subcommand and its options."""
    parser = subcommand(
        sub,
        "history",
        "list the runs, group syncs and active leases in the ledger, or its cutovers",
        {EXIT_OK: "listed (also when the ledger holds nothing yet)"},
        [
            "# the last ten runs and group syncs of the default ledger",
            "kafka-migrate history --limit 10",
            "# the cutovers and their failbacks of a shared ledger, as JSON",
            "kafka-migrate history --cutovers --ledger postgresql://migrator@db/kafka_migration --output json",
        ],
    )
    add_ledger_options(parser)
    parser.add_argument(
        "--limit", type=positive, default=30, help="at most this many runs, and as many group syncs (default 30)"
    )
    parser.add_argument("--cutovers", action="store_true", help="list the cutovers and their failbacks instead")
    add_output(parser)


def history(args: argparse.Namespace) -> int:
    if args.cutovers:
        return _cutover_history(args)
    ledger = open_ledger(args)
    rows = ledger.runs(limit=args.limit)
    syncs = ledger.group_syncs_page(limit=args.limit).rows
    if json_wanted(args):
        print_document(args, history_document(rows, syncs, ledger.leases.active()))
        return EXIT_OK
    if not rows and not syncs:
        print("The ledger holds no runs yet.")
        return EXIT_OK
    if rows:
        _runs_table(rows)
    if syncs:
        if rows:
            print()
        print("Group syncs:")
        print_table(
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
        print(f"\nRuns writing now ({plural(len(held), 'target topic lease')}):")
        for lease in held:
            print(f"  {lease.key.target_topic} on {lease.key.target_cluster_id}: {lease.describe()}")
    return EXIT_OK


def cluster(cluster_id: str, bootstrap: str | None) -> str:
    """A cluster as a reader finds it: its id (what ``offsets translate`` and the console take) and where it was
    reached (its first bootstrap address, and how many more)."""
    addresses = [a.strip() for a in (bootstrap or "").split(",") if a.strip()]
    if not addresses:
        return cluster_id
    more = f" +{len(addresses) - 1}" if len(addresses) > 1 else ""
    return f"{cluster_id} ({addresses[0]}{more})"


def _runs_table(rows: list[RecordedRun]) -> None:
    header = ("run id", "trigger", "started (UTC)", "status", "topics", "records", "wall s", "source -> target")
    body = [
        (
            r.run_id,
            r.trigger,
            r.started_at.strftime("%Y-%m-%d %H:%M:%S") if r.started_at else "",
            r.status,
            str(r.topics),
            f"{r.records:,}",
            f"{r.wall_seconds:.1f}" if r.wall_seconds is not None else "-",
            f"{cluster(r.source_cluster_id, r.source_bootstrap)} -> {cluster(r.target_cluster_id, r.target_bootstrap)}",
        )
        for r in rows
    ]
    print_table(header, body)


def _cutover_history(args: argparse.Namespace) -> int:
    rows = open_ledger(args).cutovers(limit=args.limit)
    if json_wanted(args):
        print_document(args, cutover_history_document(rows))
        return EXIT_OK
    if not rows:
        print("The ledger holds no cutovers yet.")
        return EXIT_OK
    header = ("cutover id", "started (UTC)", "status", "final run", "groups", "failback", "source -> target")
    print_table(
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
