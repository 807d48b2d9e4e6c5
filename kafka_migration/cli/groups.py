"""``kafka-migrate groups``: sync consumer group offsets to the target with proof, or show a recorded sync."""

from __future__ import annotations

import argparse
from typing import Any

from kafka_migration.cli.helptext import subcommand
from kafka_migration.cli.options import (
    EXIT_MISMATCH,
    EXIT_OK,
    add_cluster_options,
    add_ledger_options,
    add_output,
    check_clusters,
    check_settings,
    json_wanted,
    nonempty,
    open_ledger,
    print_document,
)
from kafka_migration.cli.output import group_show_document, group_sync_document
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.config import ClusterConfig

SYNC_CODES = {
    EXIT_OK: "every selected group synced (or already there) and proven; a dry run: every translation proven",
    EXIT_MISMATCH: "some partition not translatable, not written or not proven (the notes say which and why)",
}
SYNC_EXAMPLES = [
    "# move the billing groups' positions to the target, each proven by reading the record at both offsets",
    "kafka-migrate groups sync --source src-kafka:9092 --target dst-kafka:9092 --group 'billing-.*'",
    "# what a sync would write, writing and recording nothing",
    "kafka-migrate groups sync --source src-kafka:9092 --target dst-kafka:9092 --dry-run --output json",
]
SHOW_CODES = {
    EXIT_OK: "every partition of the sync was synced (or already there) and proven",
    EXIT_MISMATCH: "some partition of the sync was not synced and proven",
}
SHOW_EXAMPLES = ["kafka-migrate groups show groups-20260301T020000Z-1a2b3c --output json"]


def add_parser(sub: Any) -> None:
    """The ``groups`` subcommand: ``groups sync`` and ``groups show``."""
    parser = subcommand(
        sub,
        "groups",
        "consumer group offsets on the target: groups sync, groups show",
        {EXIT_OK: SYNC_CODES[EXIT_OK], EXIT_MISMATCH: SYNC_CODES[EXIT_MISMATCH]},
        [*SYNC_EXAMPLES[:2], *SHOW_EXAMPLES],
    )
    groups_sub = parser.add_subparsers(dest="groups_command", required=True, metavar="COMMAND")
    sync = subcommand(
        groups_sub,
        "sync",
        "translate the source groups' committed offsets to the target exactly, write them and prove them",
        SYNC_CODES,
        SYNC_EXAMPLES,
    )
    add_cluster_options(sync)
    sync.add_argument("--group", type=nonempty, default=".*", help="regex a group id must fully match (default: all)")
    sync.add_argument("--exclude-group", type=nonempty, help="regex of group ids to leave out")
    sync.add_argument("--dry-run", action="store_true", help="translate and prove, write nothing")
    sync.add_argument(
        "--allow-rewind", action="store_true", help="move a target group back when it is ahead of the translation"
    )
    add_ledger_options(sync)
    add_output(sync)
    show = subcommand(groups_sub, "show", "what a recorded group sync did, from the ledger", SHOW_CODES, SHOW_EXAMPLES)
    show.add_argument("sync_id", type=nonempty, metavar="SYNC_ID", help="a sync id from 'kafka-migrate history'")
    add_ledger_options(show)
    add_output(show)


def groups(args: argparse.Namespace) -> int:
    from kafka_migration.groups.rules import render_rows, render_sync, verdict_line
    from kafka_migration.groups.sync import GroupSyncOptions, sync_groups
    from kafka_migration.model.groups import GOOD_OUTCOMES

    if args.groups_command == "show":
        rows = [r.to_dict() for r in open_ledger(args).group_sync_rows(sync_id=args.sync_id)]
        if not rows:
            raise ConfigurationError(
                f"The ledger has no group sync {args.sync_id!r}; list them with 'kafka-migrate history'."
            )
        code = EXIT_OK if all(r["outcome"] in GOOD_OUTCOMES for r in rows) else EXIT_MISMATCH
        if json_wanted(args):
            print_document(args, group_show_document(args.sync_id, rows, code))
            return code
        first = rows[0]
        print(
            f"Group sync {args.sync_id}"
            + (f" (run {first['run_id']})" if first["run_id"] else "")
            + f", {first['synced_at']:%Y-%m-%d %H:%M:%S} UTC, {first['source_cluster_id']} -> "
            f"{first['target_cluster_id']}"
        )
        print(render_rows(rows))
        return code

    from kafka_migration.groups.rules import select_groups

    select_groups((), args.group, args.exclude_group)  # patterns first: nothing is read before they are valid
    source = ClusterConfig.build("source", args.source, args.source_config)
    target = ClusterConfig.build("target", args.target, args.target_config)
    check_settings(source, target)
    ledger = open_ledger(args)  # what needs no cluster (the ledger holds the runs) is checked first
    check_clusters(source, target)
    result = sync_groups(
        source,
        target,
        ledger,
        GroupSyncOptions(
            groups=args.group,
            exclude_groups=args.exclude_group,
            dry_run=args.dry_run,
            allow_rewind=args.allow_rewind,
        ),
    )
    if json_wanted(args):
        print_document(args, group_sync_document(result))
        return result.exit_code
    print(render_sync(result))
    print()
    print(verdict_line(result))
    if args.dry_run:
        print("Dry run: no offset was written and nothing was recorded, so there is no sync id to show.")
    else:
        print(f"Recorded in the ledger: kafka-migrate groups show {result.sync_id}")
    return result.exit_code
