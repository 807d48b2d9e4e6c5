"""``kafka-migrate report``: regenerate a run's sign-off report from the ledger, or check a report file."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from kafka_migration.cli.options import (
    EXIT_MISMATCH,
    EXIT_OK,
    LEDGER_HELP,
    nonempty,
    nonempty_path,
    open_ledger,
    reports_dir_of,
)
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.config import writable_dir


def add_parser(sub: Any) -> None:
    """The ``report`` subcommand: ``report RUN_ID`` or ``report verify FILE``."""
    parser = sub.add_parser(
        "report",
        help="regenerate a run's report from the ledger (report RUN_ID), or check a report (report verify FILE)",
    )
    parser.add_argument("what", nargs="+", type=nonempty, metavar="RUN_ID | verify FILE")
    parser.add_argument("--ledger", type=nonempty, help=LEDGER_HELP)
    parser.add_argument("--state-dir", type=nonempty_path, default=None)
    parser.add_argument("--report-dir", type=nonempty_path, help="where reports go (default: <state dir>/reports)")


def report(args: argparse.Namespace) -> int:
    from kafka_migration.reports.signoff import generate_report, verify_report

    if args.what[0] == "verify":
        if len(args.what) != 2:
            raise ConfigurationError("usage: kafka-migrate report verify FILE")
        path = Path(args.what[1])
        if not path.is_file() or not os.access(path, os.R_OK):
            raise ConfigurationError(
                f"{path} is not a readable file; give the path of a report.json written by kafka-migrate."
            )
        ledger = open_ledger(args)
        try:
            data = json.loads(path.read_text())
            if data.get("kind") == "cutover":  # a cutover report: its digest is recorded on the cutover
                found = ledger.cutover(data["cutover"]["cutover_id"])
            else:
                found = ledger.run(data["run"]["run_id"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            print(f"{path} is not a kafka-migration report.json ({exc})")
            return EXIT_MISMATCH
        ok, message = verify_report(path, found["report_sha256"] if found else None)
        print(message)
        return EXIT_OK if ok else EXIT_MISMATCH
    if len(args.what) != 1:
        raise ConfigurationError("usage: kafka-migrate report RUN_ID, or kafka-migrate report verify FILE")
    reports = writable_dir(reports_dir_of(args), "The report directory (--report-dir)")
    files = generate_report(open_ledger(args), args.what[0], reports)
    print(f"Report of run {args.what[0]}: {files.html} ({files.sha256} recorded in the ledger)")
    return EXIT_OK
