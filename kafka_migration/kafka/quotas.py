"""Client quotas, the door access/ goes through: describe every quota of a cluster, set and remove exact ones.

Neither confluent-kafka nor librdkafka has a client-quota API (librdkafka issue #5227), so these go through
kafka-python's protocol messages (``kafka_python``). Both messages are answered by any broker (KRaft
brokers forward AlterClientQuotas to the controller).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kafka_migration.kafka.acls import READ_QUOTAS, WRITE_QUOTAS, Permission
from kafka_migration.kafka.kafka_python import KafkaPythonClient
from kafka_migration.model.access import Quota, QuotaEntity
from kafka_migration.model.config import ClusterConfig


def _raise_for(client: KafkaPythonClient, code: int, message: str | None, what: str, needs: Permission) -> None:
    from kafka.errors import for_code

    if code:
        error = for_code(code)
        raise client.refused(error(message) if message else error(), what, needs)


class QuotaCluster:
    """A cluster's client quotas, read and written through kafka-python."""

    def __init__(self, config: ClusterConfig, timeout: float = 15.0) -> None:
        self.config = config
        self.client = KafkaPythonClient(config, timeout)

    def __enter__(self) -> QuotaCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.client.close()

    def quotas(self) -> tuple[Quota, ...]:
        """Every quota of every entity (one DescribeClientQuotas with an empty, non-strict filter: all entities,
        defaults and ip entities included)."""
        from kafka.protocol.admin import DescribeClientQuotasRequest

        response = self.client.send(DescribeClientQuotasRequest(components=[], strict=False))
        _raise_for(self.client, response.error_code, response.error_message, "describe client quotas", READ_QUOTAS)
        found: list[Quota] = []
        for entry in response.entries or ():
            entity = QuotaEntity(tuple((e.entity_type, e.entity_name) for e in entry.entity))
            found.extend(Quota(entity, value.key, float(value.value)) for value in entry.values)
        return tuple(sorted(found))

    def alter(self, upsert: Sequence[Quota] = (), remove: Iterable[Quota] = ()) -> None:
        """Set ``upsert`` and remove ``remove`` (by entity and key) in one AlterClientQuotas request; setting a
        value a quota already has is a no-op in Kafka, so a retried sync is safe."""
        from kafka.protocol.admin import AlterClientQuotasRequest

        ops: dict[QuotaEntity, list[Any]] = {}
        for quota in upsert:
            ops.setdefault(quota.entity, []).append(
                AlterClientQuotasRequest.EntryData.OpData(key=quota.key, value=quota.value, remove=False)
            )
        for quota in remove:
            ops.setdefault(quota.entity, []).append(
                AlterClientQuotasRequest.EntryData.OpData(key=quota.key, value=0.0, remove=True)
            )
        if not ops:
            return
        entries = [
            AlterClientQuotasRequest.EntryData(
                entity=[
                    AlterClientQuotasRequest.EntryData.EntityData(entity_type=kind, entity_name=name)
                    for kind, name in entity.parts
                ],
                ops=entity_ops,
            )
            for entity, entity_ops in ops.items()
        ]
        response = self.client.send(AlterClientQuotasRequest(entries=entries, validate_only=False))
        for entry in response.entries:
            _raise_for(self.client, entry.error_code, entry.error_message, "set client quotas", WRITE_QUOTAS)
