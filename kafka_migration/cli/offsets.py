"""``kafka-migrate offsets translate``: the target offset of a copied source offset, from the ledger."""

from __future__ import annotations

import argparse
from typing import Any

from kafka_migration.cli.options import EXIT_OK, LEDGER_HELP, nonempty, nonempty_path, not_negative, open_ledger


def add_parser(sub: Any) -> None:
    """The ``offsets`` subcommand and ``offsets translate``."""
    parser = sub.add_parser("offsets", help="offset translation from the ledger")
    offsets_sub = parser.add_subparsers(dest="offsets_command", required=True)
    translate = offsets_sub.add_parser("translate", help="the target offset of a copied source offset")
    translate.add_argument("--topic", type=nonempty, required=True, help="source topic")
    translate.add_argument("--partition", required=True, type=not_negative)
    translate.add_argument(
        "--offset", required=True, type=not_negative, help="source offset (e.g. a consumer group position)"
    )
    translate.add_argument("--target-topic", type=nonempty, help="target topic, when the topic was copied to several")
    translate.add_argument("--source-cluster", type=nonempty, help="source cluster id, when several were migrated")
    translate.add_argument("--target-cluster", type=nonempty, help="target cluster id, when several were migrated")
    translate.add_argument("--ledger", type=nonempty, help=LEDGER_HELP)
    translate.add_argument("--state-dir", type=nonempty_path, default=None)


def offsets(args: argparse.Namespace) -> int:
    result = open_ledger(args).translate(
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
