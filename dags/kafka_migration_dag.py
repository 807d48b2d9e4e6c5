"""DAG ``kafka_migration``: one bounded, verified migration run, triggered by hand.

plan -> create_topics -> copy (a Spark application per job of topics)
     -> verify (a separate Spark application per job) -> topic_result (one per topic)
     -> sync_groups (optional, Param sync_groups: consumer group offsets to the target) -> summary

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
