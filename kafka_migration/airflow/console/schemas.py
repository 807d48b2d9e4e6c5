"""The console's schemas of a run (``--schema-ids``, Param ``schema_ids``): its registries, every subject version with
what the run did, the id map and the keys and values translated per partition.

Read through the report's own ``schemas_section`` (``kafka_migration.reports.schemas``) from the run's plan and
segments as the ledger recorded them, so the console and the report cannot tell a run's schemas differently. A
route of its own beside the run's (``/runs/{run_id}/schemas``), so that the answers about runs that moved no
schemas stay exactly as they were; for those it answers 404, which the run page reads as "no schemas".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, HTTPException
from pydantic import Field

from kafka_migration.airflow.console.models import ApiView
from kafka_migration.ledger import Ledger


class SchemaVersionView(ApiView):
    """One subject version the run's topics need, on both registries."""

    target_subject: str
    version: int
    source_subject: str
    target_version: int | None = Field(description="where the target registry holds it; null in a dry run")
    format: str = Field(description="AVRO, JSON or PROTOBUF")
    source_id: int
    target_id: int | None = Field(description="null: a dry run's version to register")
    action: str = Field(description="present, registered or to_register")
    fingerprint: str | None = Field(description="the canonical fingerprint proven on both registries")


class SchemaIdView(ApiView):
    source: int
    target: int
    format: str


class SchemaCountView(ApiView):
    translated: int
    unchanged: int = Field(description="a header whose id the map lacks, passed with unknown_schema_ids pass")
    without_header: int


class SchemaPartitionView(ApiView):
    source_topic: str
    partition: int
    keys: SchemaCountView
    values: SchemaCountView


class SchemaTotalsView(ApiView):
    keys: SchemaCountView
    values: SchemaCountView


class SubjectCompatibilityView(ApiView):
    """A subject's compatibility level on both registries when the run planned (null: not read)."""

    target_subject: str
    source_subject: str
    source: str | None
    target: str | None
    source_global: bool = Field(description="the registry's global level: the subject has none of its own")
    target_global: bool


class RunSchemasView(ApiView):
    """What a run did with its topics' schemas (as the sign-off report's Schemas section)."""

    run_id: str
    mode: str = Field(description="translate or keep")
    source_registry: str = Field(description="the source registry's URL, without any secret")
    target_registry: str
    versions: list[SchemaVersionView] = Field(description="every subject version, in the order registered")
    id_map: list[SchemaIdView]
    partitions: list[SchemaPartitionView] = Field(description="per verified partition, keys and values by outcome")
    totals: SchemaTotalsView
    compatibility: list[SubjectCompatibilityView] = Field(
        description="each subject's compatibility on both registries (empty for runs recorded before it was read)"
    )


def create_schemas_router(ledger: Callable[[], Ledger]) -> APIRouter:
    """``ledger`` is called per request (the configuration may change without a restart)."""
    router = APIRouter()

    @router.get(
        "/runs/{run_id}/schemas",
        response_model=RunSchemasView,
        summary="A run's schemas: subject versions, the id map, keys and values translated per partition",
        responses={404: {"description": "no such run, or the run moved no schemas"}},
    )
    def run_schemas(run_id: str) -> dict[str, Any]:
        from kafka_migration.reports.schemas import schemas_section

        opened = ledger()
        run = opened.run(run_id)
        if run is None:
            raise HTTPException(404, f"No run {run_id!r} in the ledger")
        section = schemas_section(run.plan or {}, opened.run_segments(run_id))
        if section is None:
            raise HTTPException(404, f"Run {run_id} moved no schemas (its schema ids were off).")
        return {"run_id": run_id, **section}

    return router
