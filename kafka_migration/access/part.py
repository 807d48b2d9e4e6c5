"""The one shape of an access sync's parts: ACL bindings (``acls/sync.py``), SCRAM users (``users/sync.py``) and
client quotas (``quotas/sync.py``) are each carried the same way, so that ``sync.py`` reads as the sync's steps.

A part is made from both clusters as they are, its plan and the sync's ``SyncRecord`` (``read_and_plan``: nothing
written yet, and a plan that cannot be carried refuses the sync there, exit 2); ``apply`` writes the plan on the
target (never in a dry run); ``prove`` compares both clusters afterwards (a dry run: as they would be), its proof
part of the sync's verdict; ``record`` puts a row per binding, credential or quota into the ledger.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger


@dataclass(frozen=True)
class SyncRecord:
    """Which sync a part records its rows under: the sync's id, the run it belongs to, both clusters' ids, and
    whether it is a dry run (its rows then say what it would do)."""

    sync_id: str
    run_id: str | None
    source_cluster_id: str
    target_cluster_id: str
    dry_run: bool


class Proof(Protocol):
    """What a part proved: ``proven`` when both clusters agree on it."""

    @property
    def proven(self) -> bool: ...


P_co = TypeVar("P_co", bound=Proof, covariant=True)


class AccessPart(Protocol[P_co]):
    """One part of an access sync (see the module)."""

    def apply(self) -> None:
        """Write the plan on the target."""

    def prove(self) -> P_co:
        """Compare both clusters after ``apply`` (a dry run: the plan projected on the target as read)."""

    def record(self, ledger: Ledger) -> None:
        """Every row of the part into the ledger, under the sync's ``SyncRecord``."""
