"""``kafka-migrate offsets translate``: the target offset of a copied source offset, from the ledger."""

from __future__ import annotations

import argparse
from typing import Any

from kafka_migration.cli.helptext import subcommand
from kafka_migration.cli.options import EXIT_OK, add_ledger_options, nonempty, not_negative, open_ledger

TRANSLATE_CODES = {EXIT_OK: "translated: the target offset is printed"}
TRANSLATE_EXAMPLES = [
    "# where a consumer at orders[3] offset 120045 on the source continues on the target",
    "kafka-migrate offsets translate --topic orders --partition 3 --offset 120045",
]


def add_parser(sub: Any) -> None:
    """The ``offsets`` subcommand and ``offsets translate``."""
    parser = subcommand(sub, "offsets", "offset translation from the ledger", TRANSLATE_CODES, TRANSLATE_EXAMPLES)
    offsets_sub = parser.add_subparsers(dest="offsets_command", required=True, metavar="COMMAND")
    translate = subcommand(
        offsets_sub, "translate", "the target offset of a copied source offset", TRANSLATE_CODES, TRANSLATE_EXAMPLES
    )
    translate.add_argument("--topic", type=nonempty, required=True, help="source topic")
    translate.add_argument("--partition", required=True, type=not_negative, help="partition number")
    translate.add_argument(
        "--offset", required=True, type=not_negative, help="source offset (e.g. a consumer group position)"
    )
    translate.add_argument("--target-topic", type=nonempty, help="target topic, when the topic was copied to several")
    translate.add_argument("--source-cluster", type=nonempty, help="source cluster id, when several were migrated")
    translate.add_argument("--target-cluster", type=nonempty, help="target cluster id, when several were migrated")
    add_ledger_options(translate)


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
