"""DAG ``kafka_failback``: return to the source cluster after a cutover, without losing what the target received.

prepare -> plan -> copy_verify -> summary (topic_result beside it) -> finish

Param ``cutover_id`` names the cutover. The target's topics must be quiet and the groups
idle; a verified incremental run copies every record written to the target after the
cutover back to the source (appended), and the groups' offsets are translated back with proof.
"""

from kafka_migration.airflow.cutover_dags import failback_dag

dag = failback_dag("kafka_failback", doc_md=__doc__)
