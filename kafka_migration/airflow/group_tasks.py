"""The consumer group sync of a migration DAG run: its Params checked up front, and the sync the summary runs."""

from __future__ import annotations

import logging
from typing import Any

from kafka_migration.model.text import plural

log = logging.getLogger(__name__)


def check_group_params(params: dict[str, Any]) -> None:
    """Params sync_groups, groups and exclude_groups: of the right type, and valid patterns (ConfigurationError).

    Checked whether or not sync_groups is on: a bad pattern is bad input either way, and must fail
    before anything is copied rather than after.
    """
    from kafka_migration.groups.rules import select_groups
    from kafka_migration.model.config import param_flag, param_text

    param_flag(params, "sync_groups")
    groups = param_text(params, "groups")
    exclude = param_text(params, "exclude_groups")
    select_groups((), groups if groups is not None else ".*", exclude or None)


def sync_consumer_groups(params: dict[str, Any], planned: dict[str, Any]) -> dict[str, Any]:
    """Translate, write and prove the selected groups' offsets on the target (Param ``sync_groups``).

    Linked to the run, so the run's report gets a "Consumer groups" section. Raises unless every partition
    is synced and proven; the summary, which calls it once the topics are verified, reports that after
    closing the run.
    """
    from kafka_migration.airflow.hooks import KafkaClusterHook, LedgerHook
    from kafka_migration.airflow.lineage import LINEAGE
    from kafka_migration.groups.rules import render_sync, verdict_line
    from kafka_migration.groups.sync import GroupSyncOptions, sync_groups

    result = sync_groups(
        KafkaClusterHook(params.get("source_conn_id") or "kafka_source", "source").get_cluster_config(),
        KafkaClusterHook(params.get("target_conn_id") or "kafka_target", "target").get_cluster_config(),
        LedgerHook().get_conn(),
        GroupSyncOptions(
            groups=str(params.get("groups") or ".*"),
            exclude_groups=str(params.get("exclude_groups") or "") or None,
            dry_run=bool(planned.get("dry_run")),
            run_id=planned["run_id"],
        ),
        LINEAGE,
    )
    log.info("\n%s", render_sync(result))
    line = verdict_line(result)
    if not result.ok:
        raise RuntimeError(line)
    log.info("%s", line)
    return {
        "sync_id": result.sync_id,
        "ok": result.ok,
        "groups": len(result.groups),
        "partitions": len(result.partitions),
    }


class SummaryGroupSync:
    """The summary's consumer group sync: run at most once, when asked, and its failure kept until the run is
    closed and its report written (a group that cannot be synced must not cost the run its record)."""

    def __init__(self, params: dict[str, Any] | None, planned: dict[str, Any]) -> None:
        self.params, self.planned = params, planned
        self.error: Exception | None = None
        self.result: dict[str, Any] | None = None

    def run(self) -> None:
        if self.params is None:
            return
        try:
            self.result = sync_consumer_groups(self.params, self.planned)
        except Exception as exc:  # a broker error as much as an unproven partition
            log.error("Consumer group sync failed: %s", exc)
            self.error = exc

    def skip(self, why: str) -> None:
        if self.params is not None:
            log.warning("Consumer groups not synced: %s.", why)

    def check(self) -> None:
        if self.error is not None:
            raise RuntimeError(
                f"The records are verified, but the consumer group sync did not complete: {self.error} (see "
                "this task's log and the report's Consumer groups section)."
            ) from self.error
        if self.result is not None:
            log.info(
                "Consumer groups: %s, %s synced and proven.",
                plural(self.result["groups"], "group"),
                plural(self.result["partitions"], "partition"),
            )
