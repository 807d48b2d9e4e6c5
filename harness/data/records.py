"""``python -m harness.data.records``: an operator's DeleteRecords on a ``make clusters`` cluster, to practise a fault.

    python -m harness.data.records delete --bootstrap 127.0.0.1:29092 --topic orders --partition 0 --before 100
    python -m harness.data.records delete --config .clusters/target.json --topic orders --partition 0 --before 100

What Kafka's own ``kafka-delete-records.sh`` does on a real cluster (a checkout has no Kafka scripts): it moves the
partition's log start offset to ``--before`` (``-1``: its end), so the records before it can no longer be read.
``--config`` is a settings file of ``make clusters`` (a secured kind's). Prints where the partition starts before
and after; an offset past the end or a topic that does not exist is a one-line error (exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from harness.data.topics import delete_records, log_range


def delete(settings: dict[str, Any], topic: str, partition: int, before: int) -> int:
    """DeleteRecords of ``topic[partition]`` before ``before``; prints the log start offset before and after."""
    where = f"{topic}[{partition}] on {settings['bootstrap.servers']}"
    try:
        start, end = log_range(settings, topic, partition)
        delete_records(settings, {(topic, partition): before})
        moved, _ = log_range(settings, topic, partition)
    except KafkaException as exc:
        reason = exc.args[0].str() if isinstance(exc.args[0], KafkaError) else str(exc)
        print(f"error: DeleteRecords of {where} before offset {before} failed: {reason}")
        return 2
    print(f"{where} now starts at offset {moved} (it started at {start} and ends at {end}): {moved - start} deleted")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.data.records", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("delete", help="DeleteRecords: move a partition's log start offset")
    command.add_argument("--bootstrap", help="HOST:PORT of the cluster (or its settings file's, with --config)")
    command.add_argument("--config", type=Path, help="a librdkafka settings file (JSON), e.g. .clusters/target.json")
    command.add_argument("--topic", required=True)
    command.add_argument("--partition", type=int, required=True)
    command.add_argument("--before", type=int, required=True, help="the new log start offset; -1: the end")
    args = parser.parse_args(argv)
    settings: dict[str, Any] = json.loads(args.config.read_text()) if args.config else {}
    if args.bootstrap:
        settings["bootstrap.servers"] = args.bootstrap
    if "bootstrap.servers" not in settings:
        parser.error("give --bootstrap HOST:PORT, or --config with a bootstrap.servers")
    if args.before < -1:
        parser.error(f"--before {args.before}: an offset, or -1 for the partition's end")
    return delete(settings, args.topic, args.partition, args.before)


if __name__ == "__main__":
    sys.exit(main())
