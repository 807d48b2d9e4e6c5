"""``kafka-migrate report``: regenerate a run's sign-off report from the ledger, or check a report file."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from kafka_migration.cli.helptext import subcommand
from kafka_migration.cli.options import (
    EXIT_MISMATCH,
    EXIT_OK,
    REPORT_DIR_HELP,
    add_ledger_options,
    add_output,
    json_wanted,
    nonempty,
    nonempty_path,
    open_ledger,
    print_document,
    reports_dir_of,
)
from kafka_migration.cli.output import report_document, report_verify_document
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.config import writable_dir


def add_parser(sub: Any) -> None:
    """The ``report`` subcommand: ``report RUN_ID`` or ``report verify FILE``."""
    parser = subcommand(
        sub,
        "report",
        "regenerate a run's report from the ledger (report RUN_ID), or check a report (report verify FILE)",
        {
            EXIT_OK: "report written; or (verify) the file is the report the ledger recorded",
            EXIT_MISMATCH: "(verify) the file is not the recorded report, or not a kafka-migration report.json",
        },
        [
            "kafka-migrate report cli-20260301T020000Z-1a2b3c",
            "# is this the report the ledger vouches for?",
            "kafka-migrate report verify reports/cli-20260301T020000Z-1a2b3c/report.json --output json",
        ],
    )
    # argparse writes an nargs="+" metavar twice ("X [X ...]"), which garbles "RUN_ID | verify FILE".
    parser.usage = (
        "kafka-migrate report [-h] [--ledger LEDGER] [--state-dir STATE_DIR] [--report-dir REPORT_DIR]\n"
        "                            [--output {text,json}] (RUN_ID | verify FILE)"
    )
    parser.add_argument(
        "what",
        nargs="+",
        type=nonempty,
        metavar="RUN_ID | verify FILE",
        help="the run whose report to write (ids in 'kafka-migrate history'), or 'verify' and a report.json",
    )
    add_ledger_options(parser)
    parser.add_argument("--report-dir", type=nonempty_path, help=REPORT_DIR_HELP)
    add_output(parser)


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
                cutover = ledger.cutover(data["cutover"]["cutover_id"])
                recorded = cutover["report_sha256"] if cutover else None
            else:
                run = ledger.run(data["run"]["run_id"])
                recorded = run.report_sha256 if run else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            ok, message = False, f"{path} is not a kafka-migration report.json ({exc})"
        else:
            ok, message = verify_report(path, recorded)
        if json_wanted(args):
            print_document(args, report_verify_document(path, ok, message))
        else:
            print(message)
        return EXIT_OK if ok else EXIT_MISMATCH
    if len(args.what) != 1:
        raise ConfigurationError("usage: kafka-migrate report RUN_ID, or kafka-migrate report verify FILE")
    reports = writable_dir(reports_dir_of(args), "The report directory (--report-dir)")
    files = generate_report(open_ledger(args), args.what[0], reports)
    if json_wanted(args):
        print_document(args, report_document(args.what[0], files))
    else:
        print(f"Report of run {args.what[0]}: {files.html} ({files.sha256} recorded in the ledger)")
    return EXIT_OK
