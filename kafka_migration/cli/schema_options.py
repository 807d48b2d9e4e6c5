"""``--schema-ids`` and the schema registries of ``kafka-migrate run``, checked before anything is written.

A registry's URL is given on the command line; its credentials and TLS files only in a JSON settings file
(``--source-registry-config``), as a cluster's are (``--source-config``): process arguments are visible to every
user of the machine. The file's keys are confluent-kafka's ``SchemaRegistryClient`` settings.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from kafka_migration.cli.options import nonempty, nonempty_path
from kafka_migration.run.census import DRY_RUN_RECORDS

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger
    from kafka_migration.model.plan import MigrationPlan
    from kafka_migration.schema_sync.guard import SchemaStep
    from kafka_migration.schema_sync.sync import SchemaOptions
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.config import DRY_RUN_CENSUS
from kafka_migration.model.schemas import (
    REGISTRY_SETTINGS,
    RegistryConfig,
    SchemaMode,
    check_registry_settings,
    registry_config_of,
)

SETTINGS_HELP = ", ".join(k for k in REGISTRY_SETTINGS if k != "url")


def add_schema_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--schema-ids",
        choices=[m.value for m in SchemaMode],
        default=SchemaMode.OFF.value,
        help="what to do with records serialized through a schema registry: off (default: copied as bytes, their "
        "schemas stay behind), translate (the topics' subjects registered on the target registry, each key's and "
        "value's schema id rewritten and proven record by record), keep (the target registry already holds the "
        "source's ids, proven; records copied as bytes)",
    )
    parser.add_argument(
        "--unknown-schema-ids",
        choices=("refuse", "pass"),
        default=None,
        help="--schema-ids translate or keep: a key or value whose header names an id the source registry cannot "
        "give refuses the run before anything is written, naming topic, partition and offset (refuse, the default), "
        "or is copied unchanged and counted (pass)",
    )
    for role in ("source", "target"):
        parser.add_argument(
            f"--{role}-registry",
            type=nonempty,
            metavar="URL",
            help=f"the {role} schema registry's Confluent-compatible URL (Apicurio: .../apis/ccompat/v7); no "
            f"password here: give it in --{role}-registry-config",
        )
        parser.add_argument(
            f"--{role}-registry-config",
            type=nonempty_path,
            metavar="FILE",
            help=f"JSON file of the {role} registry's settings: {SETTINGS_HELP}",
        )


def add_dry_run_census(parser: argparse.ArgumentParser) -> None:
    """``run``'s ``--dry-run-census``: how a dry run's census reads the source records."""
    parser.add_argument(
        "--dry-run-census",
        choices=DRY_RUN_CENSUS,
        default=None,
        help="--dry-run with --schema-ids translate or keep: how the census of the source records finds the ids the "
        "run will need: full (default: every planned record; more than $KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS "
        f"offsets, default {DRY_RUN_RECORDS:,}, are read by a Spark application of its own) or ends (quick, no "
        "Spark: only the first and last records of each partition, within that many; the listing says it is not "
        "complete)",
    )


def schema_options_of(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The run's ``SchemaOptions``, or None for ``--schema-ids off``; a bad combination is one line, exit 2."""
    mode = SchemaMode(args.schema_ids)
    if args.unknown_schema_ids is not None and mode is SchemaMode.OFF:
        raise ConfigurationError(
            f"--unknown-schema-ids {args.unknown_schema_ids} applies to --schema-ids translate or keep, not off (the "
            "default): add --schema-ids translate (or keep), or leave the option out."
        )
    census = getattr(args, "dry_run_census", None)
    if census is not None and mode is SchemaMode.OFF:
        raise ConfigurationError(
            f"--dry-run-census {census} applies to --schema-ids translate or keep, not off (the default), which takes "
            "no census: add --schema-ids translate (or keep), or leave the option out."
        )
    if census is not None and not getattr(args, "dry_run", False):
        raise ConfigurationError(
            f"--dry-run-census {census} applies to a dry run: a run reads every planned record before anything is "
            "written; add --dry-run, or leave the option out."
        )
    given = [
        f"--{o}"
        for o in ("source-registry", "target-registry", "source-registry-config", "target-registry-config")
        if getattr(args, o.replace("-", "_")) is not None
    ]
    if mode is SchemaMode.OFF:
        if given:
            raise ConfigurationError(
                f"{' and '.join(given)} given, but --schema-ids is off (the default), so no registry would be used: "
                "add --schema-ids translate (or keep), or leave the registry options out."
            )
        return None
    from kafka_migration.schema_sync.sync import SchemaOptions

    source = registry_config("source", args.source_registry, args.source_registry_config, mode)
    target = registry_config("target", args.target_registry, args.target_registry_config, mode)
    if source.url.rstrip("/") == target.url.rstrip("/"):
        raise ConfigurationError(
            f"--source-registry and --target-registry are both {source.display_url}: with one registry for both "
            "clusters the ids are already right; run with --schema-ids off."
        )
    if getattr(args, "dry_run", False):
        from kafka_migration.run.census_takers import local_records

        local_records()  # a dry run's census budget: a bad $KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS is refused here
    return SchemaOptions(mode, source, target, pass_unknown_ids=args.unknown_schema_ids == "pass")


def print_schemas(plan: MigrationPlan) -> None:
    """The subject versions of a run that moves schemas: present on the target, registered, or to register."""
    if plan.schemas is not None:
        from kafka_migration.model.schema_runs import SchemaRun

        print(SchemaRun.from_dict(plan.schemas).render())


def check_registries(schemas: SchemaOptions | None) -> None:
    """Both registries answer (``--schema-ids`` keep or translate): seconds, before Spark starts; one line, exit 2."""
    if schemas is not None:
        from kafka_migration.schema_sync.sync import check_registries as check

        check(schemas)


def schema_step(schemas: SchemaOptions | None, ledger: Ledger, failback: bool = False) -> SchemaStep:
    """The step the pipeline runs on the plan before writing it: the schema sync, or with --schema-ids off the
    check that no continuing topic had its ids translated by earlier runs (without the registry client's imports).
    ``failback``: the run goes back from the cutover's target to its source, translating through the recorded map
    (``schemas`` as given, the cutover's source and target registries)."""
    if failback:
        from kafka_migration.schema_sync.back import failback_step, reversed_options

        return failback_step(ledger, None if schemas is None else reversed_options(schemas))
    from kafka_migration.schema_sync.guard import schema_step as step

    if schemas is None:
        return step(ledger, None)
    from functools import partial

    from kafka_migration.schema_sync.sync import sync_schemas

    return step(ledger, partial(sync_schemas, schemas))


def registry_config(role: str, url: str | None, config_file: Path | None, mode: SchemaMode) -> RegistryConfig:
    settings = {} if config_file is None else _settings_file(role, config_file)
    if url is not None:
        if urlsplit(url).password is not None:
            raise ConfigurationError(
                f"--{role}-registry holds a password, which process arguments show to every user of this machine: "
                f'give the URL without it and the user and password in --{role}-registry-config ({{"basic.auth.user.'
                'info": "user:password"}).'
            )
        settings["url"] = url
    if "url" not in settings:
        raise ConfigurationError(
            f"--schema-ids {mode.value} needs the {role} schema registry: give --{role}-registry URL (or 'url' in "
            f"--{role}-registry-config)."
        )
    return registry_config_of(settings, f"--{role}-registry-config")


def _settings_file(role: str, path: Path) -> dict[str, str]:
    where = f"--{role}-registry-config {path}"
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise ConfigurationError(f"{where} cannot be read ({exc.strerror}); give a readable JSON file.") from exc
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{where} is not JSON (line {exc.lineno}); it holds one JSON object.") from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"{where} holds a JSON {type(data).__name__}; it must hold one JSON object.")
    return check_registry_settings(data, where)
