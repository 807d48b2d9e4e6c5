"""The SCRAM users of an access sync (an ``AccessPart``, see ``access/part.py``): both clusters' credentials read
and planned with ``rules``; the missing ones created on the target with the operator's passwords (the client salts
and hashes them: only derived keys reach the broker); the proof that each user given a password logs in to the
target; a ledger row per credential, names and outcomes only, never a secret."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafka_migration.access.part import SyncRecord
from kafka_migration.access.users.rules import UsersPlan, plan_users
from kafka_migration.kafka.access import AccessCluster
from kafka_migration.model.access import AccessAction, LoginOutcome, Password, ScramCredential, ScramMechanism

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger

LOGINS_AT_ONCE = 16  # a login is a TLS and SASL handshake, mostly waiting on the broker
NO_PASSWORD_REASON = "no password given for it"


@dataclass(frozen=True)
class Logins:
    """Each user's login to the target with its password (none in a dry run): the outcome, and why it failed."""

    outcomes: Mapping[str, tuple[LoginOutcome, str | None]] = field(default_factory=dict)

    @property
    def failed(self) -> list[str]:
        return sorted(user for user, (outcome, _) in self.outcomes.items() if outcome == LoginOutcome.FAILED)

    @property
    def proven(self) -> bool:
        return not self.failed


class UserSync:
    """One sync's SCRAM users, step by step (see the module)."""

    def __init__(
        self, target: AccessCluster, plan: UsersPlan, passwords: Mapping[str, Password], sync: SyncRecord
    ) -> None:
        self.target, self.plan, self.passwords, self.sync = target, plan, passwords, sync
        self.logins = Logins()

    @classmethod
    def read_and_plan(
        cls, clusters: tuple[AccessCluster, AccessCluster], sync: SyncRecord, passwords: Mapping[str, Password]
    ) -> UserSync:
        """Both clusters' credentials and the plan; refuses (exit 2) a password for a user the source lacks."""
        plan = plan_users(clusters[0].scram_credentials(), clusters[1].scram_credentials(), passwords)
        return cls(clusters[1], plan, passwords, sync)

    @property
    def on_target(self) -> tuple[ScramCredential, ...]:
        """The credentials the target holds once the plan is applied."""
        return (*self.plan.add, *self.plan.present)

    @property
    def logged_in(self) -> dict[str, Password]:
        """The password of each user that logged in to the target (who the live probes may ask as)."""
        return {
            u: self.passwords[u] for u, (outcome, _) in self.logins.outcomes.items() if outcome == LoginOutcome.PROVEN
        }

    @property
    def mechanisms(self) -> dict[str, ScramMechanism]:
        """Each user's mechanism on the target (the first credential's, when it has several)."""
        return {c.user: c.mechanism for c in reversed(self.on_target)}

    def apply(self) -> None:
        self.target.upsert_scram(self.plan.add, self.passwords)

    def prove(self) -> Logins:
        """Each user given a password logs in to the target (not in a dry run: nothing was created to log in as)."""
        if not self.sync.dry_run:
            self.logins = Logins(_log_in(self.target, self.on_target, self.passwords))
        return self.logins

    def record(self, ledger: Ledger) -> None:
        """Each credential, what the sync did with it and its login."""
        added, _, _ = AccessAction.written(self.sync.dry_run)
        logins = self.logins.outcomes
        ledger.record_access_users(
            self.sync.sync_id,
            [
                *((c, added, *logins.get(c.user, (None, None))) for c in self.plan.add),
                *((c, AccessAction.PRESENT, *logins.get(c.user, (None, None))) for c in self.plan.present),
                *((c, AccessAction.NEEDS_PASSWORD, None, NO_PASSWORD_REASON) for c in self.plan.needs_password),
            ],
        )


def _log_in(
    cluster: AccessCluster, credentials: Collection[ScramCredential], passwords: Mapping[str, Password]
) -> dict[str, tuple[LoginOutcome, str | None]]:
    """Each user given a password logs in to ``cluster`` once (its first credential's mechanism), several users at
    a time: a thousand users log in within seconds, not one after another."""
    first: dict[str, ScramCredential] = {}
    for credential in credentials:
        if credential.user in passwords:
            first.setdefault(credential.user, credential)
    with ThreadPoolExecutor(max_workers=LOGINS_AT_ONCE, thread_name_prefix="access-login") as pool:
        outcomes = pool.map(lambda c: cluster.login(c, passwords[c.user]), first.values())
        return dict(zip(first, outcomes, strict=True))
