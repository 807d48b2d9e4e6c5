"""Schema ids in the DAGs (issue 48): Params ``schema_ids`` and ``unknown_schema_ids``, the two registries'
connections (``SchemaRegistryHook``), all checked before anything is written, and the step the plan task runs on
its plan before writing it: the registry sync, or with ``schema_ids`` off the check that no continuing topic had
its ids translated by earlier runs. As with ``kafka-migrate run --schema-ids``; the registries' secrets stay in
the plan task (the copy gets the id map with its slices)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow.sdk import Param

from kafka_migration.airflow.hooks import REGISTRY_CONNECTIONS, SchemaRegistryHook
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.schemas import SchemaMode

if TYPE_CHECKING:
    from pathlib import Path

    from kafka_migration.cutover.point import Cutover
    from kafka_migration.ledger import Ledger
    from kafka_migration.model.census import Census
    from kafka_migration.model.config import ClusterConfig
    from kafka_migration.model.plan import MigrationPlan
    from kafka_migration.run.census_takers import CensusTaker
    from kafka_migration.schema_sync.guard import SchemaStep
    from kafka_migration.schema_sync.sync import SchemaOptions

MODES = tuple(m.value for m in SchemaMode)
UNKNOWN_IDS = ("refuse", "pass")


def schema_params(schema_ids: str = "off", unknown_schema_ids: str = "refuse") -> dict[str, Param]:
    """The trigger form's schema Params; a bad default (the nightly DAG reads them from airflow.cfg) is an import
    error naming the value."""
    check_values({"schema_ids": schema_ids, "unknown_schema_ids": unknown_schema_ids})
    return {
        "schema_ids": Param(
            schema_ids,
            type="string",
            enum=list(MODES),
            title="Schema ids",
            description="Records serialized through a schema registry: off (copied as bytes, their schemas stay "
            "behind), translate (the topics' subjects registered on the target registry, each key's and value's "
            "schema id rewritten and proven record by record), keep (the target registry already holds the "
            "source's ids, proven; records copied as bytes). The registries: connections "
            "source_registry_conn_id and target_registry_conn_id.",
        ),
        "unknown_schema_ids": Param(
            unknown_schema_ids,
            type="string",
            enum=list(UNKNOWN_IDS),
            title="Unknown schema ids",
            description="With schema_ids translate: a key or value whose header names an id outside the topic's "
            "subjects is refused, naming topic, partition and offset (refuse), or copied unchanged and counted "
            "(pass).",
        ),
        "source_registry_conn_id": Param(
            REGISTRY_CONNECTIONS["source"],
            type="string",
            minLength=1,
            title="Source schema registry connection",
            description="Airflow connection of the source schema registry (host: its URL; login and password: "
            "basic auth; extra: bearer.auth.token, ssl.* files). Read when schema_ids is not off.",
        ),
        "target_registry_conn_id": Param(
            REGISTRY_CONNECTIONS["target"],
            type="string",
            minLength=1,
            title="Target schema registry connection",
            description="Airflow connection of the target schema registry. Read when schema_ids is not off.",
        ),
    }


def check_values(params: Mapping[str, Any]) -> tuple[SchemaMode, bool]:
    """(mode, pass unknown ids) of Params schema_ids and unknown_schema_ids, missing or null meaning off and
    refuse; a bad value or combination is one line naming the Param and the way out."""
    mode = params.get("schema_ids")
    mode = SchemaMode.OFF.value if mode is None else mode
    if mode not in MODES:
        raise ConfigurationError(f"Param 'schema_ids' must be one of {', '.join(MODES)}, got {mode!r}.")
    unknown = params.get("unknown_schema_ids")
    unknown = "refuse" if unknown is None else unknown
    if unknown not in UNKNOWN_IDS:
        raise ConfigurationError(f"Param 'unknown_schema_ids' must be refuse or pass, got {unknown!r}.")
    if unknown == "pass" and mode != SchemaMode.TRANSLATE.value:
        raise ConfigurationError(
            f"Param unknown_schema_ids is pass, which applies to schema_ids translate, not {mode}: set schema_ids to "
            "translate, or unknown_schema_ids to refuse."
        )
    return SchemaMode(mode), unknown == "pass"


def registry_conn_ids(params: Mapping[str, Any]) -> dict[str, str]:
    """Params source_registry_conn_id and target_registry_conn_id (their defaults when missing)."""
    ids = {}
    for role, default in REGISTRY_CONNECTIONS.items():
        conn_id = params.get(f"{role}_registry_conn_id")
        if conn_id is not None and (not isinstance(conn_id, str) or not conn_id.strip()):
            raise ConfigurationError(
                f"Param '{role}_registry_conn_id' must name an Airflow connection, got {conn_id!r}; the default is "
                f"{default!r}."
            )
        ids[role] = conn_id or default
    return ids


def schema_options(params: Mapping[str, Any]) -> SchemaOptions | None:
    """The run's ``SchemaOptions`` from its Params and the registries' connections, or None for schema_ids off.
    A failback's Params name the cutover's registries, as its cluster connections name the cutover's clusters."""
    mode, pass_unknown = check_values(params)
    conn_ids = registry_conn_ids(params)
    if mode is SchemaMode.OFF:
        return None
    from kafka_migration.schema_sync.sync import SchemaOptions

    source = SchemaRegistryHook(conn_ids["source"], "source").get_registry_config()
    target = SchemaRegistryHook(conn_ids["target"], "target").get_registry_config()
    if source.url.rstrip("/") == target.url.rstrip("/"):
        raise ConfigurationError(
            f"Connections {conn_ids['source']!r} and {conn_ids['target']!r} both name the schema registry "
            f"{source.display_url}: with one registry for both clusters the ids are already right; set Param "
            "schema_ids to off."
        )
    return SchemaOptions(mode, source, target, pass_unknown_ids=pass_unknown)


def check_registries(options: SchemaOptions | None) -> None:
    """Both registries answer and let the connection's user read (seconds, before anything is written)."""
    if options is not None:
        from kafka_migration.schema_sync.sync import check_registries as check

        check(options)


def schema_step(options: SchemaOptions | None, ledger: Ledger, failback: bool = False) -> SchemaStep:
    """What the plan task does with the plan before writing it (``schema_sync.guard.schema_step``); ``failback``:
    the run goes from the cutover's target back to its source, through the map the forward runs recorded
    (``schema_sync.back``; ``options`` name the cutover's source and target registries)."""
    if failback:
        from kafka_migration.schema_sync.back import failback_step, reversed_options

        return failback_step(ledger, None if options is None else reversed_options(options))
    from kafka_migration.schema_sync.guard import schema_step as step

    if options is None:
        return step(ledger, None)
    from functools import partial

    from kafka_migration.schema_sync.sync import sync_schemas

    return step(ledger, partial(sync_schemas, options))


def census_taker(
    clusters: tuple[ClusterConfig, ClusterConfig],
    conn_ids: tuple[str, str],
    state_dir: Path,
    local_records: int,
    leases: tuple[Ledger, float] | None,
) -> CensusTaker:
    """What takes the census of the plan's source records for the plan task's schema sync (schema_ids keep or
    translate), by the CLI's rule (run/census_takers.py): up to ``local_records`` offsets (``[kafka_migration]
    census_local_records``, or $KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS; 200,000) the plan task reads itself, more a
    Spark application of its own, submitted to the ``spark_default`` master with the clusters' connections
    (``conn_ids``) as copy_verify's are (``spark_steps.spark_census``), its files in the run's directory under
    ``state_dir``, renewing the run's ``leases`` (ledger, time to live) while it reads."""
    from kafka_migration.airflow.spark_steps import spark_census
    from kafka_migration.model.config import ClusterPair
    from kafka_migration.run.census_takers import CensusWays
    from kafka_migration.run.census_takers import census_taker as taker
    from kafka_migration.run.files import run_dir

    def spark(plan: MigrationPlan) -> Census:
        return spark_census(plan, run_dir(state_dir, plan.run_id), conn_ids, leases)

    return taker(CensusWays(ClusterPair.of(*clusters).source, spark, local_records))


def check_failback_mode(params: Mapping[str, Any], ledger: Ledger, cutover: Cutover) -> None:
    """A failback treats the schema ids as the runs before the cutover did (its prepare task, before it records
    anything): refused with one line otherwise (``schema_sync.back.refuse_failback_mode``)."""
    from kafka_migration.schema_sync.back import forward_ids, refuse_failback_mode

    mode, _ = check_values(params)
    registry_conn_ids(params)
    pairs = [(t.source_topic, t.target_topic) for t in cutover.topics]
    refuse_failback_mode(forward_ids(ledger, cutover.source_cluster_id, cutover.target_cluster_id, pairs), mode)
