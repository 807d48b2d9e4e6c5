"""Pure rules of moving client quotas: how a quota is carried to the target (user entities through the principal
mapping), what a sync would add, keep, update, leave alone and remove, and the differences between two clusters'
quotas, none of which is the verdict.

A cluster holds one value per entity and key. A value on the target is this tool's own when the ledger says a
sync set it (and it has not changed since): only such a value is ever changed (to follow the source) or removed
(``remove_stale``, when the source no longer has it). Any other target value that differs from the source's, or
that the source lacks, is left alone and named: the clusters then limit clients differently.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.access import Quota, QuotaEntity, QuotaEntityType
from kafka_migration.model.text import some


def carry_entity(entity: QuotaEntity, principals: Mapping[str, str] | None = None) -> QuotaEntity:
    """The entity as the target knows it: a named user through the mapping of ``User:name`` (the target's
    principal's name; Kafka's user quotas are keyed by it), the default user, client ids and ips unchanged."""
    user = entity.name(QuotaEntityType.USER)
    if user is None or not principals:
        return entity
    mapped = principals.get(f"User:{user}")
    if mapped is None:
        return entity
    new_name = mapped.split(":", 1)[1]
    return QuotaEntity(tuple((kind, new_name if kind == QuotaEntityType.USER else name) for kind, name in entity.parts))


def carry(quota: Quota, principals: Mapping[str, str] | None = None) -> Quota:
    return replace(quota, entity=carry_entity(quota.entity, principals))


Slot = tuple[QuotaEntity, str]  # an entity and a key: a cluster holds one value for each


def carried(source: Iterable[Quota], principals: Mapping[str, str] | None = None) -> dict[Slot, Quota]:
    """The source's quotas as the target should hold them, by entity and key. Refuses (ConfigurationError, before
    anything is written) a mapping that carries two source entities onto one target entity with other values."""
    wanted: dict[Slot, Quota] = {}
    clashes = []
    for quota in source:
        there = carry(quota, principals)
        before = wanted.get(there.slot)
        if before is not None and before.value != there.value:
            clashes.append(f"{there.key} for {there.entity.describe()}")
        wanted[there.slot] = there
    if clashes:
        raise ConfigurationError(
            f"The principal map carries quotas of two source users onto one target user with other values: "
            f"{some(sorted(set(clashes)), most=3)}; map them to different principals."
        )
    return wanted


@dataclass(frozen=True)
class QuotaChange:
    """A source quota whose slot the target holds with another value (``target_value``)."""

    quota: Quota
    target_value: float

    def describe(self) -> str:
        return f"{self.quota.describe()} (target: {_number(self.target_value)})"


@dataclass(frozen=True)
class QuotaPlan:
    """What a sync of the quotas would do on the target."""

    add: tuple[Quota, ...]  # the target has no value for the entity and key
    present: tuple[Quota, ...]  # the same value on the target
    update: tuple[QuotaChange, ...]  # another value, set by this tool earlier: set to the source's
    different: tuple[QuotaChange, ...]  # another value, not this tool's: left alone
    target_only: tuple[Quota, ...]  # on the target only, left alone
    remove: tuple[Quota, ...]  # on the target only, set by this tool earlier: removed (remove_stale)

    def target_after(self, target: Iterable[Quota]) -> list[Quota]:
        """The target's quotas once the plan is applied (a dry run's projection)."""
        slots = {q.slot: q for q in target}
        for quota in (*self.add, *(c.quota for c in self.update)):
            slots[quota.slot] = quota
        for quota in self.remove:
            slots.pop(quota.slot, None)
        return sorted(slots.values())


def plan_quotas(
    source: Iterable[Quota],
    target: Iterable[Quota],
    principals: Mapping[str, str] | None = None,
    set_before: Collection[Quota] = (),
    remove_stale: bool = False,
) -> QuotaPlan:
    """The plan from both clusters' quotas. ``set_before``: the quotas (entity, key and value) this tool set on
    the target in earlier syncs and has not removed since (the ledger's)."""
    wanted = carried(source, principals)
    there = {q.slot: q for q in target}
    ours = set(set_before)
    add, present, update, different, target_only, remove = [], [], [], [], [], []
    for slot, quota in sorted(wanted.items(), key=lambda item: item[1]):
        held = there.get(slot)
        if held is None:
            add.append(quota)
        elif held.value == quota.value:
            present.append(quota)
        elif held in ours:
            update.append(QuotaChange(quota, held.value))
        else:
            different.append(QuotaChange(quota, held.value))
    for slot, held in sorted(there.items(), key=lambda item: item[1]):
        if slot not in wanted:
            (remove if remove_stale and held in ours else target_only).append(held)
    return QuotaPlan(tuple(add), tuple(present), tuple(update), tuple(different), tuple(target_only), tuple(remove))


@dataclass(frozen=True)
class QuotaDifference:
    """An entity and key the clusters limit differently: the source's value (carried) and the target's, None
    where a cluster has none."""

    entity: QuotaEntity
    key: str
    source: float | None
    target: float | None

    def describe(self) -> str:
        return f"{self.key} for {self.entity.describe()}: source {_number(self.source)}, target {_number(self.target)}"


def quota_differences(
    source: Iterable[Quota], target: Iterable[Quota], principals: Mapping[str, str] | None = None
) -> list[QuotaDifference]:
    """Every entity and key whose value differs between the source (carried) and the target; none is the verdict."""
    wanted = carried(source, principals)
    there = {q.slot: q for q in target}
    found = []
    for slot in sorted(set(wanted) | set(there), key=lambda s: (s[0].sort_key(), s[1])):
        mine, theirs = wanted.get(slot), there.get(slot)
        if mine is None or theirs is None or mine.value != theirs.value:
            found.append(
                QuotaDifference(
                    slot[0], slot[1], None if mine is None else mine.value, None if theirs is None else theirs.value
                )
            )
    return found


def _number(value: float | None) -> str:
    if value is None:
        return "none"
    return str(int(value)) if float(value).is_integer() else str(value)
