"""The schema ids a run moved: its subject versions, each source id with its target id and their fingerprint."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, Engine, delete, insert, select

from kafka_migration.ledger.schema import checkpoints, runs, schema_ids
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


def _translated_in_plan(plan: Mapping[str, Any] | None) -> set[tuple[str, str]]:
    """(source topic, target topic) of the topics a recorded plan translated (those that carried an id map)."""
    return {
        (t["source_topic"], t["target_topic"])
        for t in (plan or {}).get("topics", [])
        if t.get("schema_ids") is not None
    }


class SchemaModeRecords:
    """Which continuing topics were copied with translated ids, a part of ``Ledger``."""

    engine: Engine

    def checkpointed_translation(
        self, source_cluster_id: str, target_cluster_id: str, seeded_by: str | None = None
    ) -> dict[tuple[str, str], str | None]:
        """(source topic, target topic) of every topic with checkpoints between the clusters -> the run whose copy
        translated its schema ids, None where its checkpoints' runs copied its ids as they were. ``seeded_by``: the
        cutover whose failback seeded checkpoints in this direction; those copied nothing and are left out."""
        with self.engine.connect() as c:
            rows = _checkpointed(c, source_cluster_id, target_cluster_id, seeded_by)
            translating = _runs_in_mode(c, {r.run_id for r in rows}, SchemaMode.TRANSLATE)
            plans = {
                r.run_id: _translated_in_plan(r.plan)
                for r in c.execute(select(runs.c.run_id, runs.c.plan).where(runs.c.run_id.in_(sorted(translating))))
            }
        found: dict[tuple[str, str], str | None] = {}
        for r in rows:
            key = (r.source_topic, r.target_topic)
            by = r.run_id if key in plans.get(r.run_id, set()) else None
            found[key] = found.get(key) or by
        return found

    def checkpointed_kept(self, source_cluster_id: str, target_cluster_id: str) -> dict[tuple[str, str], str]:
        """(source topic, target topic) of the topics with checkpoints between the clusters that a run in keep mode
        advanced (``--schema-ids keep``, which recorded the subject versions it proved) -> that run. A topic of a
        keep run is kept whether or not its own records carried an id: the run proved every id they carried."""
        with self.engine.connect() as c:
            rows = _checkpointed(c, source_cluster_id, target_cluster_id)
            keeping = _runs_in_mode(c, {r.run_id for r in rows}, SchemaMode.KEEP)
        found: dict[tuple[str, str], str] = {}
        for r in sorted(rows, key=lambda r: (r.source_topic, r.target_topic, r.run_id)):
            if r.run_id in keeping:
                found.setdefault((r.source_topic, r.target_topic), r.run_id)
        return found


def _checkpointed(
    c: Connection, source_cluster_id: str, target_cluster_id: str, seeded_by: str | None = None
) -> list[Any]:
    """(source topic, target topic, run id) of every checkpoint between the clusters, each once; without the
    checkpoints ``seeded_by`` wrote (a failback's seeding, which copied nothing)."""
    return c.execute(
        select(checkpoints.c.source_topic, checkpoints.c.target_topic, checkpoints.c.run_id)
        .where(
            checkpoints.c.source_cluster_id == source_cluster_id,
            checkpoints.c.target_cluster_id == target_cluster_id,
            *([checkpoints.c.run_id != seeded_by] if seeded_by is not None else []),
        )
        .distinct()
    ).all()


def _runs_in_mode(c: Connection, run_ids: set[str], mode: SchemaMode) -> set[str]:
    """Those of ``run_ids`` that recorded schema ids in ``mode``."""
    return set(
        c.execute(
            select(schema_ids.c.run_id)
            .where(schema_ids.c.run_id.in_(sorted(run_ids)), schema_ids.c.mode == mode.value)
            .distinct()
        ).scalars()
    )
