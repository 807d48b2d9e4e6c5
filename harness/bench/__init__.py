"""``make bench``: the project's Spark copy and verification against single-process baselines.

Starts two embedded brokers (source, target), seeds the source once, then runs, in one
session, alternating and repeated (medians reported), the scenarios chosen with
``--scenarios`` (default all), one module each:

* ``copy`` (copy_verify.py): 1. copy N records of one 8-partition topic, project vs one process;
  3. verification of that copy vs a plain read loop; the PySpark worker memory at N and N/2.
* ``many`` (many.py): 2. T topics x 4 partitions x 1,000 records, the whole run.
* ``cluster`` (cluster.py): 4. the copy and verification of M records on a Spark standalone
  cluster (master + 2 workers on this machine, shipped executor environment) next to local mode.

Every repetition copies into a fresh target cluster (the target broker is restarted: it is
memory only and starts in milliseconds), and every project run has a fresh ledger and run
directory. Results: a table on stdout and ``.bench/results.json`` (runner.py). Not a test:
nothing here asserts timings.

    python -m harness.bench [--quick] [--repeat N] [--records N] [--topics N] [--cluster-records N]
                            [--scenarios copy,many,cluster]
"""
