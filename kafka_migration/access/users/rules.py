"""Pure rules of moving SCRAM users: which credentials the target lacks, which of those the operator's passwords
cover, which need a password, and the passwords given for users the source does not have (refused: a typo
would otherwise create a user nobody asked for). The passwords themselves are read by ``access/inputs.py``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.access import Password, ScramCredential
from kafka_migration.model.text import plural, some


@dataclass(frozen=True)
class UsersPlan:
    """What a sync does with the source's SCRAM credentials on the target."""

    add: tuple[ScramCredential, ...]  # missing on the target (or with other iterations), a password given
    present: tuple[ScramCredential, ...]  # the same user, mechanism and iterations on the target
    needs_password: tuple[ScramCredential, ...]  # missing on the target, no password given: not moved

    @property
    def users_needing_a_password(self) -> list[str]:
        return sorted({c.user for c in self.needs_password})


def plan_users(
    source: Iterable[ScramCredential], target: Iterable[ScramCredential], passwords: Mapping[str, Password]
) -> UsersPlan:
    """Refuses (ConfigurationError, before anything is written) a password for a user the source lacks."""
    wanted = sorted(set(source))
    unknown = sorted(set(passwords) - {c.user for c in wanted})
    if unknown:
        raise ConfigurationError(
            f"The credentials name {plural(len(unknown), 'user')} the source cluster has no SCRAM credential for: "
            f"{some(unknown, most=5)}; remove them from the credentials file, or check the spelling."
        )
    there = set(target)
    add = [c for c in wanted if c not in there and c.user in passwords]
    needs = [c for c in wanted if c not in there and c.user not in passwords]
    return UsersPlan(tuple(add), tuple(c for c in wanted if c in there), tuple(needs))
