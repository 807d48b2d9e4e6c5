"""DAG ``kafka_migration``: one bounded, verified migration run, triggered by hand.

plan (and target topics) -> copy_verify (a Spark application per job of topics: copy, and
verification from fresh reads of both clusters) -> summary (evidence, consumer group offsets when
Param sync_groups asks, the report), with topic_result (one per topic) beside it.

Every run is recorded in the ledger; partitions continue from their verified checkpoints.
"""

from kafka_migration.airflow.dag_factory import migration_dag, migration_params

dag = migration_dag(
    dag_id="kafka_migration",
    schedule=None,
    params=migration_params(),
    description="Copy Kafka topics to another cluster in bounded, verified runs",
    doc_md=__doc__,
)
