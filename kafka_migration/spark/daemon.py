"""PySpark's worker daemon, with PySpark compiled and the tasks' imports done before it forks.

Named by ``spark.python.daemon.module`` wherever the executors run a Python that has this
package: in local mode (this very installation) and on a cluster with the shipped executor
environment (executor_env.py). Spark starts one daemon per executor and forks a worker from
it for each concurrent task. Stock PySpark imports ``pyspark.worker`` in every fork, from
Spark's source zip on a cluster, so each worker of each executor compiled PySpark again and
then imported the task's modules (confluent-kafka, this package) on its own. Here the daemon:

* imports PySpark's and py4j's compiled modules (``pythonpath``): the installed packages of the
  same version, else Spark's zips unpacked once per machine;
* imports what every task imports, before the first fork, so that the workers inherit it. PySpark
  imports ``pyspark.worker`` after the fork only because some modules (pandas, pyarrow) start
  threads on import, which a fork would not carry over; none of these does (checked: should
  one ever start a thread, the daemon replaces itself with PySpark's own, which imports nothing
  before forking);
* moves what it imported out of the garbage collector's sight (``gc.freeze``, as Python's docs advise
  before forking): a worker's collections then walk only the task's own objects, not the ~40,000
  of PySpark, confluent-kafka and this package again in every worker.

Everything else is PySpark's own daemon.
"""

import gc
import os
import sys
import threading

# PySpark's worker and the module of the tasks' functions; that module then imports what the tasks import.
PRELOAD = ("pyspark.worker", "kafka_migration.spark.executor_tasks")


def preload(modules: tuple[str, ...] = PRELOAD) -> bool:
    """Import ``modules`` (and ``import_task_modules`` once the tasks' module is in), writing their bytecode
    where it can be cached (an unpacked zip); False when that started a thread. An import error fails
    nothing here: the worker that needs the module raises it again, with the task's context."""
    import importlib

    writes = sys.dont_write_bytecode
    sys.dont_write_bytecode = False  # the first daemon on a machine compiles for the later ones
    try:
        for name in modules:
            try:
                module = importlib.import_module(name)
                getattr(module, "import_task_modules", lambda: None)()
            except Exception as exc:  # the worker raises it again, with the task's context
                print(f"kafka_migration.spark.daemon: not preloaded {name}: {exc}", file=sys.stderr)
    finally:
        sys.dont_write_bytecode = writes
    return threading.active_count() == 1


def main() -> None:
    from kafka_migration.spark.pythonpath import prefer_installed_pyspark, unzipped_spark_zips

    prefer_installed_pyspark()
    unzipped_spark_zips()
    if not preload():  # a fork would lack that thread: PySpark's own daemon, which forks before importing
        os.execv(sys.executable, [sys.executable, "-m", "pyspark.daemon", *sys.argv[1:]])
    from pyspark.daemon import manager

    gc.freeze()
    manager()


if __name__ == "__main__":
    main()
