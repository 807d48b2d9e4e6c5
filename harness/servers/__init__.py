"""The servers the tests, the demo and the bench start beside the Kafka clusters, each on free loopback ports.

- ports           a free loopback port
- lifetime        server processes that die with the harness process that started them
- proxy           a loopback TCP proxy that cuts, blackholes or delays a connection (network faults)
- postgres        fresh PostgreSQL databases, on a throwaway server when none is named
- spark_cluster   a Spark standalone master and workers (``python -m harness.servers.spark_cluster``)
- airflow_server  a real ``airflow standalone`` in a private home, and a client of its REST API
- embedded        the embedded Kafka-protocol broker (Tansu; not Apache Kafka) of ``DEMO_BROKER=embedded``
"""
