"""``kafka-migrate failback``: after a cutover, copy what the target received back to the source, verified,
and move the groups back."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kafka_migration.cli import output
from kafka_migration.cli.cutover import check_before_writing, cluster_options, final_run, stopped
from kafka_migration.cli.helptext import subcommand
from kafka_migration.cli.options import (
    EXIT_BAD_INPUT,
    EXIT_MISMATCH,
    EXIT_OK,
    check_clusters,
    json_wanted,
    nonempty,
    open_ledger,
    print_document,
    reports_dir_of,
)
from kafka_migration.cli.schema_options import add_schema_options, check_registries, schema_options_of, schema_step
from kafka_migration.cutover.point import COMPLETED, FAILED
from kafka_migration.exceptions import ConfigurationError, CutoverRefusedError, MigrationError
from kafka_migration.model.config import ClusterConfig, MigrationOptions

if TYPE_CHECKING:
    from kafka_migration.cutover.point import Cutover
    from kafka_migration.ledger import Ledger
    from kafka_migration.schema_sync.sync import SchemaOptions


def add_parser(sub: Any) -> None:
    """The ``failback`` subcommand: the cutover's options and the cutover to reverse."""
    parser = subcommand(
        sub,
        "failback",
        "after a cutover: copy what the target received back to the source, verified, and move the groups back",
        {
            EXIT_OK: "completed: consumers may start on the source again (the cutover report's path is printed)",
            EXIT_MISMATCH: "the reverse run found differences, or a group could not be moved back with proof",
            EXIT_BAD_INPUT: "refused: producers still write to the target or consumers still run there (nothing "
            "written); or bad input, such as an unknown cutover id",
        },
        [
            "# stop the producers and consumers on the target first; the clusters come from the cutover",
            "kafka-migrate failback --cutover cutover-20260301T020000Z-1a2b3c",
            "kafka-migrate failback --cutover cutover-20260301T020000Z-1a2b3c --quiet-seconds 60 --output json",
            "# after runs with --schema-ids keep (or translate): the same, with the cutover's two registries",
            "kafka-migrate failback --cutover cutover-20260301T020000Z-1a2b3c --schema-ids keep "
            "--source-registry https://src-registry:8081 --target-registry https://dst-registry:8081",
        ],
    )
    parser.add_argument("--cutover", type=nonempty, required=True, metavar="CUTOVER_ID", help="the cutover to reverse")
    cluster_options(parser, required=False)
    # As the runs before the cutover treated the schema ids (after translated runs translate; after kept runs keep,
    # or translate), the registries named as in the cutover: schema_sync/back.py.
    add_schema_options(parser)


def failback(args: argparse.Namespace) -> int:
    from kafka_migration.cutover.steps import CutoverRecord, finish_failback, load_cutover, prepare_failback
    from kafka_migration.lineage.emit import Lineage
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
    schemas = schema_options_of(args)  # the cutover's source and target registries
    check_before_writing(args, *given)
    ledger = open_ledger(args)
    lineage = Lineage.from_environment()  # the reverse run's, the groups' and the failback's
    cutover = load_cutover(ledger, args.cutover)
    cutover.ready_for_failback()  # before the first line of progress: bad input is the one line on stderr
    check_schema_mode(ledger, cutover, schemas)
    source = ClusterConfig.build("source", args.source or cutover.source_bootstrap, args.source_config)
    target = ClusterConfig.build("target", args.target or cutover.target_bootstrap, args.target_config)
    check_clusters(source, target)  # the cutover's addresses too: an unreachable cluster is refused before recording
    check_registries(schemas)
    print(
        f"Failback of cutover {cutover.cutover_id}: checking that no consumer of the groups runs, then that the "
        f"target topics stay quiet for {args.quiet_seconds:g}s ..."
    )
    cutover_id = cutover.cutover_id
    done: dict[str, Any] = {}  # how far it got, for the JSON document of a failback that stopped
    try:
        cutover, checked, options = prepare_failback(
            source, target, ledger, cutover_id, args.quiet_seconds, reports_dir_of(args)
        )
        done["groups"] = checked.groups
        options = MigrationOptions.from_mapping({**vars(options), "topics_per_job": args.topics_per_job})
        try:  # reverse: the target's records go back to the source
            step = schema_step(schemas, ledger, failback=True)  # back through the map the forward runs recorded
            outcome, run_report = final_run(args, target, source, options, ledger, lineage, step)
        except BaseException as exc:
            message = str(exc)[:4000] or type(exc).__name__
            ledger.update_cutover(cutover_id, failback_status=FAILED, failback_message=message)
            raise
        done["final_run"] = output.final_run(outcome.plan.run_id, outcome.verified, run_report)
        record = CutoverRecord(reports_dir_of(args), lineage)
        result = finish_failback(source, target, ledger, cutover, checked, outcome.plan, record)
    except MigrationError as exc:
        # Bad input found before the pre-flight recorded anything (the cutover cannot be failed back, the
        # clusters are not the cutover's) writes nothing, not even a report; a refusal or failure is recorded.
        if done or isinstance(exc, CutoverRefusedError) or not isinstance(exc, ConfigurationError):
            stopped(args, "failback", ledger, cutover_id, exc, done)
        raise
    if json_wanted(args):
        end = output.CutoverEnd(COMPLETED, EXIT_OK, result.message, checked.groups, done["final_run"], result.report)
        doc = output.cutover_document("failback", cutover_id, end)
        print_document(args, doc)
        return EXIT_OK
    print(f"Failback of cutover {cutover_id} COMPLETED: {result.message}.")
    print(f"Cutover report (with the failback): {result.report}")
    return EXIT_OK


def check_schema_mode(ledger: Ledger, cutover: Cutover, schemas: SchemaOptions | None) -> None:
    """The failback treats the schema ids as the runs before the cutover did: refused (exit 2) before anything is
    checked on the clusters or recorded (schema_sync/back.py)."""
    from kafka_migration.model.schemas import SchemaMode
    from kafka_migration.schema_sync.back import forward_ids, refuse_failback_mode

    pairs = [(t.source_topic, t.target_topic) for t in cutover.topics]
    forward = forward_ids(ledger, cutover.source_cluster_id, cutover.target_cluster_id, pairs)
    refuse_failback_mode(forward, SchemaMode.OFF if schemas is None else schemas.mode)
