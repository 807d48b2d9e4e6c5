"""Which way a run goes, for the advice of its errors. Pure: no Kafka, Airflow or Spark.

An ordinary run writes topics it owns on the target, so when the ledger and a target topic no
longer agree, deleting that topic and copying it again is a way out. A failback is an ordinary
run in the reverse direction (cutover/point.py): its "target" is the original cluster, whose
topics hold everything written before the cutover. Deleting one, or forgetting the checkpoints
that place the failback after the cutover point, would lose or double those records; so a
failback's errors say what happened and point to the way out that changes no existing topic:
copying the records back under new names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Failback:
    """The run is the failback of ``cutover_id``: from the cutover's target back to its original cluster."""

    cutover_id: str
    source_bootstrap: str  # the run's source: the cluster the cutover switched to
    target_bootstrap: str  # the run's target: the original cluster

    def way_out(self, source_topic: str, target_topic: str) -> str:
        """The safe way out when target topic ``target_topic`` (on the original cluster) cannot take the failback."""
        return (
            f"This run is the failback of cutover {self.cutover_id}: target topic {target_topic} is on the original "
            "cluster and holds its records from before the cutover, so do not delete it, empty it or forget its "
            "checkpoints; the failback stopped before writing anything. To bring the records of "
            f"{source_topic} back without changing any existing topic, copy them under new names with an ordinary "
            f"run (kafka-migrate run --source {self.source_bootstrap} --target {self.target_bootstrap} "
            f"--include '{re.escape(source_topic)}' --rename '{{topic}}.failback'), and point the consumers at them."
        )

    def gap_way_out(self, source_topic: str) -> str:
        """When records the failback should bring back left the cluster the cutover switched to (retention)."""
        return (
            f"those records are lost, and this failback of cutover {self.cutover_id} does not skip records: it "
            f"stopped before writing anything to the original cluster. To bring back what remains of {source_topic} "
            "without changing any existing topic, copy it under new names with an ordinary run (kafka-migrate run "
            f"--source {self.source_bootstrap} --target {self.target_bootstrap} --include '{re.escape(source_topic)}' "
            "--rename '{topic}.failback')."
        )
