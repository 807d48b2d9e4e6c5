"""The schema ids a run moved: its subject versions, each source id with its target id and their fingerprint."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, delete, insert, select

from kafka_migration.ledger.schema import schema_ids
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.schema_runs import SchemaRun, SyncedVersion, id_map_of
from kafka_migration.model.schemas import SchemaMode


class SchemaIdRecords:
    """The schema ids table, a part of ``Ledger``."""

    engine: Engine

    def run_schema_ids(self, run_id: str) -> SchemaRun | None:
        """The run's schemas as it recorded them (None: the run moved no schemas), versions in registration order."""
        with self.engine.connect() as c:
            rows = list(c.execute(select(schema_ids).where(schema_ids.c.run_id == run_id).order_by("position")))
        if not rows:
            return None
        versions = tuple(
            SyncedVersion.from_dict({k: getattr(r, k) for k in SyncedVersion.__dataclass_fields__}) for r in rows
        )
        first = rows[0]
        mode = SchemaMode(first.mode)
        return SchemaRun(mode, first.source_registry, first.target_registry, versions, id_map_of(versions))


def record_schema_ids(c: Any, plan: MigrationPlan) -> None:
    """Store the run's schema ids, in the transaction that opens the run (a retried start replaces them)."""
    c.execute(delete(schema_ids).where(schema_ids.c.run_id == plan.run_id))
    if not plan.schemas:
        return
    run = SchemaRun.from_dict(plan.schemas)
    if not run.versions:
        return
    c.execute(
        insert(schema_ids),
        [
            {
                "run_id": plan.run_id,
                "mode": run.mode.value,
                "source_registry": run.source_registry,
                "target_registry": run.target_registry,
                "position": i,
                **v.to_dict(),
            }
            for i, v in enumerate(run.versions)
        ],
    )
