"""What a run does with its plan before writing it, as far as schemas go, without the registry client's imports:
the schema sync when ``--schema-ids`` is keep or translate (``sync``), and in every mode the check that a topic
continuing from checkpoints keeps its earlier runs' way with the schema ids."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

from kafka_migration.exceptions import SchemaConflictError
from kafka_migration.model.census import Census
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.schemas import SchemaMode

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger

Previous = Mapping[tuple[str, str], str | None]  # (source topic, target topic) -> the run that translated it, or None
CensusTaker = Callable[[MigrationPlan], Census]  # the census of a plan's source ranges (run/census.py)
Sync = Callable[[MigrationPlan, Previous, CensusTaker | None], MigrationPlan]


class SchemaStep(Protocol):
    """What a run does with its plan before writing it (``schema_step``); ``census`` takes the census of the
    plan's source records, which only a sync asks for (``--schema-ids off`` reads no record)."""

    def __call__(self, plan: MigrationPlan, census: CensusTaker | None = None) -> MigrationPlan: ...


def schema_step(ledger: Ledger, sync: Sync | None) -> SchemaStep:
    """What a run does with its plan before writing it: ``sync`` (``sync.sync_schemas`` with the run's options,
    for ``--schema-ids translate`` or ``keep``) given what the ledger says of the continuing topics and the census
    taker, or without one (``off``) only the check that no continuing topic had its ids translated by earlier
    runs."""

    def step(plan: MigrationPlan, census: CensusTaker | None = None) -> MigrationPlan:
        previous = ledger.checkpointed_translation(plan.source.cluster_id, plan.target.cluster_id)
        if sync is not None:
            return sync(plan, previous, census)
        if any(previous.values()):
            refuse_mixed_ids(plan, previous, set(), SchemaMode.OFF)
        return plan

    return step


def refuse_mixed_ids(plan: MigrationPlan, previous: Previous, translating: set[str], mode: SchemaMode) -> None:
    """A topic that continues from checkpoints keeps its earlier runs' way with the schema ids: a target partition
    whose first records carry translated ids and the next the source's (or the other way round) would fail its
    consumers half way. ``previous``: (source topic, target topic) with checkpoints -> the run that translated it,
    None where its ids were copied as they were; ``translating``: the source topics this run translates."""
    lines = []
    for topic in plan.topics:
        key = (topic.source_topic, topic.target_topic)
        if key not in previous:
            continue
        before, now = previous[key], topic.source_topic in translating
        if before is not None and not now:
            lines.append(
                f"  - {topic.source_topic} -> {topic.target_topic}: run {before} translated its schema ids; this run "
                f"(--schema-ids {mode.value}) would write the source's ids after them"
            )
        elif before is None and now:
            lines.append(
                f"  - {topic.source_topic} -> {topic.target_topic}: earlier runs copied its schema ids as they were; "
                "this run would write translated ids after them"
            )
    if lines:
        raise SchemaConflictError(
            f"{len(lines)} topic{'s' if len(lines) != 1 else ''} would mix schema ids on the target; nothing was "
            "written:\n" + "\n".join(lines) + "\nRun them as their earlier runs did (--schema-ids translate with the "
            "same registries, or without it), or copy them under other names (--rename)."
        )
