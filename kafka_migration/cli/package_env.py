"""``kafka-migrate package-env``: build the executor environment archive that Spark clusters run."""

from __future__ import annotations

import argparse
from typing import Any

from kafka_migration.cli.helptext import subcommand
from kafka_migration.cli.options import EXIT_OK, nonempty, nonempty_path
from kafka_migration.spark.executor_env import DEFAULT_OUTPUT, EXECUTOR_ENV_VARIABLE


def add_parser(sub: Any) -> None:
    """The ``package-env`` subcommand and its options."""
    parser = subcommand(
        sub,
        "package-env",
        "build the executor environment archive (confluent-kafka and this package) for Spark clusters",
        {EXIT_OK: "archive written; its path and how to ship it are printed"},
        [
            "kafka-migrate package-env --output /shared/kafka-migration-env.tar.gz --python /opt/python/bin/python3",
        ],
    )
    parser.add_argument(
        "--output",
        dest="archive",
        metavar="ARCHIVE",
        type=nonempty_path,
        default=DEFAULT_OUTPUT,
        help=f"the archive to write (default {DEFAULT_OUTPUT})",
    )
    parser.add_argument(
        "--python",
        type=nonempty,
        help="interpreter the environment links to; it must exist at this path on every executor node "
        "(default: the one running this command)",
    )
    parser.add_argument(
        "--project",
        type=nonempty_path,
        help="source tree or wheel of kafka-migration (default: the code this command runs)",
    )


def package_env(args: argparse.Namespace) -> int:
    from kafka_migration.spark.executor_env import build_executor_env

    output = build_executor_env(args.archive, python=args.python, project=args.project)
    print(
        f"Ship it with: kafka-migrate run --executor-env {output} ... (or {EXECUTOR_ENV_VARIABLE}={output}); "
        "it sets spark.archives and spark.pyspark.python."
    )
    return EXIT_OK
