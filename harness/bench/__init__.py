"""``make bench``: the project's Spark copy and verification against single-process baselines and
MirrorMaker 2, on real Apache Kafka.

Starts a source cluster (one-node KRaft Apache Kafka from the pinned jar set, harness/kafka),
seeds it once, then runs, in one session, alternating and repeated (medians reported), the
scenarios chosen with ``--scenarios`` (default all but ``replicated``), one module each:

* ``copy`` (copy_verify.py): 1. copy N records of one 8-partition topic, project vs one process;
  3. verification of that copy vs a plain read loop; the PySpark worker memory at N and N/2.
* ``many`` (many.py): 2. T topics x 4 partitions x 1,000 records, the whole run.
* ``cluster`` (cluster.py): 4. the copy and verification of M records on a Spark standalone
  cluster (master + 2 workers on this machine, shipped executor environment) next to local mode,
  as two applications and as the run's one application; the cluster again with its executors
  started from a class-data archive (class_archive.py).
* ``whole`` (whole/): 5. the whole verified run launch to exit: a hand-written script, the CLI, the DAG.
* ``scale`` (scale.py): 6. planning and a whole run at thousands of topics.
* ``mm2`` (mirrormaker.py): 7. MirrorMaker 2 side by side: moving W records, consumer group
  accuracy at the positions a switch-over gets wrong, peak memory and CPU.
* ``large`` (large.py): 8. copy and verification of 10 KB records.
* ``replicated`` (replicated/): 9. on a three-node source and target of their own (RF 3,
  min.insync.replicas=2, acks=all): the verified CLI run vs MirrorMaker 2 vs Kafka's own perf tools;
  each run on a target cleaned of its topics, not a fresh cluster. Opt-in: it starts six broker JVMs.
* ``access`` (access/): 10. ACL bindings and SCRAM users moved and proven. Opt-in.
* ``schemas`` (schemas.py): 11. whole verified CLI runs of Avro records with the registry's wire header,
  ``--schema-ids translate`` against ``off`` on the same data (two schema registries, started here). Opt-in.

Every repetition copies into a fresh target cluster (a new one-node cluster with a new cluster
id; the previous one is stopped and its data removed; starting one is not measured), and every
project run has a fresh run directory. Results: a table on stdout and ``.bench/results.json``
(runner.py). Not a test: nothing here asserts timings.

    python -m harness.bench [--quick] [--repeat N] [--records N] [--topics N] [--cluster-records N]
                            [--mm2-records N] [--replicated-records N] [--schema-records N]
                            [--scenarios copy,many,cluster,whole,scale,mm2,large,replicated,access,schemas]
"""
