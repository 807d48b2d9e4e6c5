"""The ledger's cutovers and failbacks: one row per attempt, updated as its steps finish."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, insert, select, update

from kafka_migration.ledger.schema import (
    cutovers,
    utc_now,
)


class CutoverRecords:
    """Cutovers and failbacks, a part of ``Ledger``."""

    engine: Engine

    # -- cutovers and failbacks -------------------------------------------------------------------

    def start_cutover(self, cutover_id: str, values: Mapping[str, Any]) -> None:
        """Record a cutover attempt (status ``checking``); a retried task updates its own row."""
        with self.engine.begin() as c:
            exists = c.execute(select(cutovers.c.cutover_id).where(cutovers.c.cutover_id == cutover_id)).first()
            if exists:
                c.execute(update(cutovers).where(cutovers.c.cutover_id == cutover_id).values(**values))
            else:
                c.execute(
                    insert(cutovers).values(
                        cutover_id=cutover_id, started_at=utc_now(), topics=[], groups=[], status="checking", **values
                    )
                )

    def update_cutover(self, cutover_id: str, finished: bool = False, **values: Any) -> None:
        if finished:
            values["ended_at"] = utc_now()
        if values.get("failback_status") == "running":
            values.setdefault("failback_started_at", utc_now())
        elif values.get("failback_status") in ("completed", "failed"):
            values["failback_ended_at"] = utc_now()
        with self.engine.begin() as c:
            c.execute(update(cutovers).where(cutovers.c.cutover_id == cutover_id).values(**values))

    def cutover(self, cutover_id: str) -> dict[str, Any] | None:
        with self.engine.connect() as c:
            row = c.execute(select(cutovers).where(cutovers.c.cutover_id == cutover_id)).first()
            return dict(row._mapping) if row else None

    def cutovers(self, limit: int = 50) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            result = c.execute(select(cutovers).order_by(cutovers.c.started_at.desc()).limit(limit))
            return [dict(r._mapping) for r in result]
