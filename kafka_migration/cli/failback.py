"""``kafka-migrate failback``: after a cutover, copy what the target received back to the source, verified,
and move the groups back."""

from __future__ import annotations

import argparse
from typing import Any

from kafka_migration.cli.cutover import check_before_writing, cluster_options, final_run
from kafka_migration.cli.options import EXIT_OK, nonempty, open_ledger, reports_dir_of
from kafka_migration.model.config import ClusterConfig, MigrationOptions


def add_parser(sub: Any) -> None:
    """The ``failback`` subcommand: the cutover's options and the cutover to reverse."""
    parser = sub.add_parser(
        "failback",
        help="after a cutover: copy what the target received back to the source, verified, and move the groups back",
    )
    parser.add_argument("--cutover", type=nonempty, required=True, metavar="CUTOVER_ID", help="the cutover to reverse")
    cluster_options(parser, required=False)


def failback(args: argparse.Namespace) -> int:
    from kafka_migration.cutover.record import FAILED
    from kafka_migration.cutover.steps import finish_failback, load_cutover, prepare_failback
    from kafka_migration.model.config import load_settings_file

    # Before the ledger is read: what the options say on their own (bootstraps may come from the cutover).
    given = [
        ClusterConfig.build(role, getattr(args, role), getattr(args, f"{role}_config"))
        for role in ("source", "target")
        if getattr(args, role)
    ]
    for role in ("source", "target"):
        if getattr(args, f"{role}_config") and not getattr(args, role):
            load_settings_file(role, getattr(args, f"{role}_config"))
    check_before_writing(args, *given)
    ledger = open_ledger(args)
    cutover = load_cutover(ledger, args.cutover)
    source = ClusterConfig.build("source", args.source or cutover.source_bootstrap, args.source_config)
    target = ClusterConfig.build("target", args.target or cutover.target_bootstrap, args.target_config)
    print(
        f"Failback of cutover {cutover.cutover_id}: checking that the target topics stay quiet for "
        f"{args.quiet_seconds:g}s ..."
    )
    cutover, checked, options = prepare_failback(
        source, target, ledger, cutover.cutover_id, args.quiet_seconds, reports_dir_of(args)
    )
    options = MigrationOptions.from_mapping({**vars(options), "topics_per_job": args.topics_per_job})
    try:
        outcome = final_run(
            args, target, source, options, ledger
        )  # reverse: the target's records go back to the source
    except BaseException as exc:
        ledger.update_cutover(
            cutover.cutover_id, failback_status=FAILED, failback_message=str(exc)[:4000] or type(exc).__name__
        )
        raise
    result = finish_failback(source, target, ledger, cutover, checked, outcome.plan, reports_dir_of(args))
    print(f"Failback of cutover {cutover.cutover_id} COMPLETED: {result.message}.")
    print(f"Report: {result.report}")
    return EXIT_OK
