"""``kafka-migrate checkpoints forget``: forget where a recreated topic's copies stand."""

from __future__ import annotations

import argparse
from typing import Any

from kafka_migration.cli.helptext import subcommand
from kafka_migration.cli.options import EXIT_OK, add_ledger_options, nonempty, open_ledger

FORGET_CODES = {EXIT_OK: "forgotten (also when nothing matched: the topic had no checkpoint)"}
FORGET_EXAMPLES = [
    "# orders was deleted and recreated on the source: copy it from the start next time",
    "kafka-migrate checkpoints forget --topic orders",
]


def add_parser(sub: Any) -> None:
    """The ``checkpoints`` subcommand and ``checkpoints forget``."""
    parser = subcommand(sub, "checkpoints", "the ledger's checkpoints", FORGET_CODES, FORGET_EXAMPLES)
    checkpoints_sub = parser.add_subparsers(dest="checkpoints_command", required=True, metavar="COMMAND")
    forget = subcommand(
        checkpoints_sub,
        "forget",
        "forget where a topic's copies stand (after a source or target topic was deleted and recreated): "
        "the next run copies it from the start; runs and their evidence stay in the ledger",
        FORGET_CODES,
        FORGET_EXAMPLES,
    )
    forget.add_argument("--topic", type=nonempty, required=True, help="source topic")
    forget.add_argument("--target-topic", type=nonempty, help="target topic (default: every target it was copied to)")
    forget.add_argument("--source-cluster", type=nonempty, help="source cluster id (default: every source cluster)")
    forget.add_argument("--target-cluster", type=nonempty, help="target cluster id (default: every target cluster)")
    add_ledger_options(forget)


def checkpoints(args: argparse.Namespace) -> int:
    forgotten = open_ledger(args).forget_checkpoints(
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
