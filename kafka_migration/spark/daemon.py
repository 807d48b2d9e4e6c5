"""PySpark's worker daemon, started with the compiled PySpark (see ``pythonpath``).

Named by ``spark.python.daemon.module`` in local mode, where the executors run this very
installation; the daemon and the workers it forks then import PySpark's cached bytecode
instead of compiling it from Spark's source zip, which made each run's Python workers
ready seconds later. Everything else is PySpark's own daemon.
"""

from kafka_migration.spark.pythonpath import prefer_installed_pyspark

if __name__ == "__main__":
    prefer_installed_pyspark()
    from pyspark.daemon import manager

    manager()
