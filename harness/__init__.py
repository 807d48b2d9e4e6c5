"""The test, demo and bench harness: everything around the product that runs it for real. Nothing here is
product code, and the product imports none of it.

- kafka/    Apache Kafka from the pinned jar set: clusters (one-node, TLS, SASL_SSL, ACLs, proxied,
            replicated), their certificates, and MirrorMaker 2 (``python -m harness.kafka``)
- servers/  the other servers the tests start: loopback proxy, PostgreSQL, Spark standalone, Airflow,
            free ports, the embedded broker of ``DEMO_BROKER=embedded``
- data/     what goes onto the clusters and is read back: the sample data sets (``python -m
            harness.data.seed``: the compose stack's kafka-seed), partition reads, topics, groups,
            transactions, compaction
- bench/    ``make bench`` (``python -m harness.bench``): the scenarios, their baselines and sampler
- demo.py   ``make demo``
"""
