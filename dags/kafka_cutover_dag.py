"""DAG ``kafka_cutover``: switch from the source cluster to the target, exactly, triggered by hand.

preflight -> plan -> copy_verify -> summary (topic_result beside it) -> finish

The pre-flight refuses while a selected source topic still receives records (within
``quiet_seconds``) or a selected consumer group has members on either cluster. Then a final
incremental run copies and verifies up to the source end, the groups' offsets are
translated to the target with proof, and the cutover report lists the exact target offset
every group starts from. Undo with the ``kafka_failback`` DAG.
"""

from kafka_migration.airflow.cutover_dags import cutover_dag

dag = cutover_dag("kafka_cutover", doc_md=__doc__)
