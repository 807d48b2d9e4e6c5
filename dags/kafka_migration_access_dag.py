"""DAG ``kafka_migration_access``: carry the source cluster's ACL bindings and SCRAM users to the target and
prove them, triggered by hand.

sync: the permissions the sync needs are checked on both clusters, the bindings planned (topics renamed,
principals mapped) and written add-only, the users created with the passwords of connection
``kafka_migration_scram`` (Param credentials_conn_id), and the result proven: both clusters' authorizers
decide every action of the bindings alike, and each user given a password logs in to both and tries what its
bindings allow and deny. Recorded in the ledger (``kafka-migrate access show SYNC_ID``). See docs/access.md.
"""

from kafka_migration.airflow.access_tasks import access_dag

dag = access_dag("kafka_migration_access", doc_md=__doc__)
