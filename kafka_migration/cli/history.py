"""``kafka-migrate history``: the runs, group syncs and active leases in the ledger, or its cutovers."""

from __future__ import annotations

import argparse
from typing import Any

from kafka_migration.cli.options import (
    EXIT_OK,
    LEDGER_HELP,
    nonempty,
    nonempty_path,
    open_ledger,
    positive,
    print_table,
)
from kafka_migration.model.text import plural


def add_parser(sub: Any) -> None:
    """The ``history`` subcommand and its options."""
    parser = sub.add_parser("history", help="list the runs in the ledger")
    parser.add_argument("--ledger", type=nonempty, help=LEDGER_HELP)
    parser.add_argument("--state-dir", type=nonempty_path, default=None)
    parser.add_argument("--limit", type=positive, default=30, help="at most this many runs (default 30)")
    parser.add_argument("--cutovers", action="store_true", help="list the cutovers and their failbacks instead")


def history(args: argparse.Namespace) -> int:
    if args.cutovers:
        return _cutover_history(args)
    ledger = open_ledger(args)
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
    print_table(header, body)


def _cutover_history(args: argparse.Namespace) -> int:
    rows = open_ledger(args).cutovers(limit=args.limit)
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
