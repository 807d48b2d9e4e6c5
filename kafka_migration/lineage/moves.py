"""What lineage is told of a cutover or a failback, as one value (``emit.cutover_done``, ``events.cutover_events``):
plain values only, so that the cutover builds it without loading openlineage-python."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CutoverLineage:
    """A cutover or failback (``kind``) that ended: its id and run, the clusters' bootstrap addresses in the
    direction records moved, each topic's ends (``CutoverTopic.to_dict()``), whether it completed and its
    message, and when it started (ISO 8601)."""

    kind: str
    cutover_id: str
    run_id: str | None
    source: str
    target: str
    topics: Sequence[Mapping[str, Any]]
    ok: bool
    message: str | None
    started: str
