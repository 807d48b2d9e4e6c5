"""The run facets kafka-migration adds to OpenLineage events, each with its JSON schema kept in ``schemas/``.

``kafkaMigration``: a migration run's evidence as its sign-off report holds it (per topic and partition the
offset ranges, counts, checksums and verdict) and the report's SHA-256, so a lineage consumer can tell which
report vouches for the move. ``kafkaMigrationPositions``: where a consumer group sync, a cutover or a failback
put each group (source offset -> translated target offset) and, for a cutover, each partition's ends.

The schemas are not published on the web: their ``$id`` (and each facet's ``_schemaURL``) is a URL under the
reserved ``.invalid`` domain that names the file in this package; tests/unit/lineage validates against it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import attr
from openlineage.client.facet_v2 import RunFacet

SCHEMA_DIR = Path(__file__).parent / "schemas"
SCHEMA_BASE = "https://kafka-migration.invalid/spec/facets/1-0-0/"
PRODUCER = "https://kafka-migration.invalid/producer/kafka-migration"

MIGRATION_FACET = "kafkaMigration"
POSITIONS_FACET = "kafkaMigrationPositions"


def schema_url(name: str) -> str:
    return f"{SCHEMA_BASE}{name}.json#/$defs/{name}"


@attr.define
class KafkaMigrationRunFacet(RunFacet):
    """A migration run's evidence: ``status`` as the ledger records it, ``verdict`` as the report reads it."""

    runId: str
    status: str
    verdict: str
    source: dict[str, Any]  # {"clusterId", "bootstrap" (canonical host:port)}
    target: dict[str, Any]
    reportSha256: str | None = attr.field(default=None)
    totals: dict[str, Any] | None = attr.field(default=None)
    topics: list[dict[str, Any]] | None = attr.field(default=None)
    message: str | None = attr.field(default=None)
    # --schema-ids: the registries, every subject version with its source and target ids, the id map, the keys and
    # values translated; None for a run that moved no schemas
    schemas: dict[str, Any] | None = attr.field(default=None)
    _additional_skip_redact: ClassVar[list[str]] = [
        "runId",
        "status",
        "verdict",
        "reportSha256",
        "totals",
        "topics",
        "schemas",
    ]

    @staticmethod
    def _get_schema() -> str:
        return schema_url("KafkaMigrationRunFacet")


@attr.define
class KafkaMigrationPositionsRunFacet(RunFacet):
    """Translated positions: ``kind`` group_sync, cutover or failback, with its id and the run it belongs to."""

    kind: str
    id: str
    outcome: str  # completed, failed
    runId: str | None = attr.field(default=None)
    groups: list[dict[str, Any]] | None = attr.field(default=None)
    topics: list[dict[str, Any]] | None = attr.field(default=None)
    message: str | None = attr.field(default=None)
    _additional_skip_redact: ClassVar[list[str]] = ["kind", "id", "outcome", "runId", "groups", "topics"]

    @staticmethod
    def _get_schema() -> str:
        return schema_url("KafkaMigrationPositionsRunFacet")
