"""What the subcommands share: exit codes, option types, and where the state, ledger and reports are.

Option types make an empty value or a number out of range a usage error (exit 2), never a silent default.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.config import ClusterConfig

EXIT_OK, EXIT_MISMATCH, EXIT_BAD_INPUT, EXIT_FAILED = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT
LEDGER_HELP = "ledger database URL (default: SQLite ledger.db in the state dir, or $KAFKA_MIGRATION_LEDGER_URL)"
STATE_DIR_HELP = (
    "directory of run files, the default SQLite ledger and reports (default ~/.kafka-migration, or "
    "$KAFKA_MIGRATION_STATE_DIR)"
)
REPORT_DIR_HELP = "where reports go (default: <state dir>/reports)"
OUTPUT_HELP = (
    "text for people (default), or json: one JSON document on stdout for scripts, and everything else (plan, "
    "tables, progress) on stderr; see docs/cli.md, 'Reading the CLI from scripts'"
)


def default_state_dir() -> Path:
    return Path(os.environ.get("KAFKA_MIGRATION_STATE_DIR", Path.home() / ".kafka-migration"))


def nonempty(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("must not be empty (leave the option out to use its default)")
    return value


def nonempty_path(value: str) -> Path:
    return Path(nonempty(value))


def _whole(value: str, least: int) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {value!r}") from None
    if number < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, got {number}")
    return number


def positive(value: str) -> int:
    return _whole(value, 1)


def seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {value!r}") from None
    if not number >= 0 or number == float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {value!r}")
    return number


def not_negative(value: str) -> int:
    return _whole(value, 0)


def add_cluster_options(parser: argparse.ArgumentParser, required: bool = False) -> None:
    """The two clusters as every command that reads them takes them: bootstrap servers and settings files."""
    parser.add_argument("--source", type=nonempty, required=required, help="source bootstrap servers HOST:PORT[,...]")
    parser.add_argument("--target", type=nonempty, required=required, help="target bootstrap servers HOST:PORT[,...]")
    parser.add_argument(
        "--source-config",
        type=nonempty_path,
        help="JSON file of librdkafka settings for the source (security goes here)",
    )
    parser.add_argument("--target-config", type=nonempty_path, help="JSON file of librdkafka settings for the target")


def check_settings(*clusters: ClusterConfig) -> None:
    """The clusters' client settings, checked without a cluster (before a ledger is opened)."""
    from kafka_migration.kafka.settings import check_client_settings

    for cluster in clusters:
        check_client_settings(cluster)


def check_clusters(*clusters: ClusterConfig) -> None:
    """What every command that talks to clusters checks before it opens, records or writes anything, in this order
    and the same words: the client settings, then that each bootstrap address answers (seconds, plain TCP), so
    that a typo or a cluster that is down is one line and exit 2."""
    from kafka_migration.kafka.reach import check_reachable

    check_settings(*clusters)
    for cluster in clusters:
        check_reachable(cluster)


def add_output(parser: argparse.ArgumentParser) -> None:
    """``--output text|json`` of a command that prints results."""
    parser.add_argument("--output", choices=("text", "json"), default="text", help=OUTPUT_HELP)


def json_wanted(args: argparse.Namespace) -> bool:
    return getattr(args, "output", None) == "json"


def print_document(args: argparse.Namespace, doc: dict) -> None:  # type: ignore[type-arg]
    """The command's JSON document on the real stdout (``main`` sends everything else to stderr)."""
    import sys

    from kafka_migration.cli.output import emit

    emit(doc, getattr(args, "stdout", None) or sys.stdout)


def add_ledger_options(parser: argparse.ArgumentParser) -> None:
    """``--ledger`` and ``--state-dir`` of a command that reads the ledger."""
    parser.add_argument("--ledger", type=nonempty, help=LEDGER_HELP)
    parser.add_argument("--state-dir", type=nonempty_path, default=None, help=STATE_DIR_HELP)


def ledger_url(args: argparse.Namespace) -> str:
    """--ledger, $KAFKA_MIGRATION_LEDGER_URL, or SQLite in the state dir; refused here if it cannot work."""
    from kafka_migration.ledger import default_ledger_url
    from kafka_migration.ledger.urls import check_ledger_url, check_named_sqlite_folder

    named_by = "--ledger" if args.ledger else "$KAFKA_MIGRATION_LEDGER_URL"
    url = args.ledger or os.environ.get("KAFKA_MIGRATION_LEDGER_URL")
    state_dir = args.state_dir or default_state_dir()
    if url:
        check_ledger_url(url)
        if url != default_ledger_url(state_dir):  # in the state directory, which a run creates: not a typo
            check_named_sqlite_folder(url, named_by)
        return url
    url = default_ledger_url(state_dir)
    check_ledger_url(url)
    return url


def open_ledger(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The ledger of a command that reads it: refused, not created, when it does not exist."""
    from kafka_migration.ledger import Ledger

    return Ledger.open(ledger_url(args), create=False)


def reports_dir_of(args: argparse.Namespace) -> Path:
    return args.report_dir or (args.state_dir or default_state_dir()) / "reports"


def print_table(header: tuple[str, ...], body: list[tuple[str, ...]]) -> None:
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(header)]
    for line in (header, tuple("-" * w for w in widths), *body):
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())


def add_spark_conf(parser: argparse.ArgumentParser) -> None:
    """``--spark-conf KEY=VALUE``, repeatable (``spark_conf`` reads it), as run, cutover and failback take it."""
    parser.add_argument(
        "--spark-conf",
        type=nonempty,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra Spark setting, repeatable",
    )


def spark_conf(pairs: Sequence[str]) -> dict[str, str]:
    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigurationError(f"--spark-conf {pair!r} must look like KEY=VALUE, e.g. spark.executor.memory=2g")
        conf[key] = value
    return conf
