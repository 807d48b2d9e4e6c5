"""``python -m harness.data.app``: the tutorial's stand-in for your applications, on a cluster of ``make clusters``.

    python -m harness.data.app produce --bootstrap 127.0.0.1:19092 --topic orders --records 200
    python -m harness.data.app consume --bootstrap 127.0.0.1:19092 --topic orders --group billing --records 150

``produce`` writes records with keys, headers and timestamps (a producer of the topic's); ``consume`` reads that
many records as a member of the group, commits its position and leaves the group cleanly, as an application
that stops for the cutover does.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from harness.data.group_clients import group_consumer
from harness.data.seed import producer, send

CONSUME_TIMEOUT = 60.0  # seconds


def produce(bootstrap: str, topic: str, records: int) -> int:
    p = producer(bootstrap)
    now = int(time.time() * 1000)
    for i in range(records):
        send(
            p,
            topic,
            -1,  # the partitioner picks, by key
            f"key-{i % 97}".encode(),
            f"record {i} of the tutorial".encode(),
            timestamp=now + i,
            headers=[("source", b"tutorial")],
        )
    p.flush(30)
    print(f"produced {records} records to {topic} on {bootstrap}")
    return 0


def consume(bootstrap: str, topic: str, group: str, records: int) -> int:
    consumer = group_consumer(bootstrap, group)
    read = 0
    deadline = time.monotonic() + CONSUME_TIMEOUT
    try:
        consumer.subscribe([topic])
        while read < records and time.monotonic() < deadline:
            for message in consumer.consume(min(500, records - read), 0.5):
                if message.error() is None:
                    read += 1
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()  # leaves the group at once: no member lingers until its session timeout
    print(f"group {group} read {read} records of {topic} and committed its position")
    return 0 if read >= records else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.data.app", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("produce", "consume"):
        command = commands.add_parser(name)
        command.add_argument("--bootstrap", required=True, help="HOST:PORT of the cluster")
        command.add_argument("--topic", required=True)
        command.add_argument("--records", type=int, required=True)
        if name == "consume":
            command.add_argument("--group", required=True)
    args = parser.parse_args(argv)
    if args.command == "produce":
        return produce(args.bootstrap, args.topic, args.records)
    return consume(args.bootstrap, args.topic, args.group, args.records)


if __name__ == "__main__":
    sys.exit(main())
