"""``kafka-migrate groups``: sync consumer group offsets to the target with proof, or show a recorded sync."""

from __future__ import annotations

import argparse
from typing import Any

from kafka_migration.cli.options import EXIT_MISMATCH, EXIT_OK, LEDGER_HELP, nonempty, nonempty_path, open_ledger
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.config import ClusterConfig


def add_parser(sub: Any) -> None:
    """The ``groups`` subcommand: ``groups sync`` and ``groups show``."""
    parser = sub.add_parser("groups", help="consumer group offsets on the target")
    groups_sub = parser.add_subparsers(dest="groups_command", required=True)
    sync = groups_sub.add_parser(
        "sync",
        help="translate the source groups' committed offsets to the target exactly, write them and prove them",
    )
    sync.add_argument("--source", type=nonempty, help="source bootstrap servers HOST:PORT[,...]")
    sync.add_argument("--target", type=nonempty, help="target bootstrap servers HOST:PORT[,...]")
    sync.add_argument("--source-config", type=nonempty_path, help="JSON file of librdkafka settings for the source")
    sync.add_argument("--target-config", type=nonempty_path, help="JSON file of librdkafka settings for the target")
    sync.add_argument("--group", type=nonempty, default=".*", help="regex a group id must fully match (default: all)")
    sync.add_argument("--exclude-group", type=nonempty, help="regex of group ids to leave out")
    sync.add_argument("--dry-run", action="store_true", help="translate and prove, write nothing")
    sync.add_argument(
        "--allow-rewind", action="store_true", help="move a target group back when it is ahead of the translation"
    )
    sync.add_argument("--ledger", type=nonempty, help=LEDGER_HELP)
    sync.add_argument("--state-dir", type=nonempty_path, default=None)
    show = groups_sub.add_parser("show", help="what a recorded group sync did, from the ledger")
    show.add_argument("sync_id", type=nonempty, metavar="SYNC_ID", help="a sync id from 'kafka-migrate history'")
    show.add_argument("--ledger", type=nonempty, help=LEDGER_HELP)
    show.add_argument("--state-dir", type=nonempty_path, default=None)


def groups(args: argparse.Namespace) -> int:
    from kafka_migration.groups.rules import render_rows, render_sync, verdict_line
    from kafka_migration.groups.sync import sync_groups
    from kafka_migration.model.groups import GOOD_OUTCOMES

    if args.groups_command == "show":
        rows = open_ledger(args).group_sync_rows(sync_id=args.sync_id)
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
        open_ledger(args),
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
