"""Spark settings for a cluster's executors: all of them up before the first task, started lean.

Local mode has one JVM, already running when the first task starts. On a cluster
(standalone, YARN, Kubernetes) the driver asks the cluster manager for executors, each
a JVM of its own that starts, fetches the application's files and starts its Python
daemon; measured on a 2-core machine, that took longer than copying 500,000 records.
These settings are Spark's own and mean the same on every cluster manager. The driver adds
them to its SparkConf before the SparkContext starts (driver.main), under everything the submit
and ``spark-defaults.conf`` set, so the user's values win over each of them, from the CLI's
``--spark-conf``, the Airflow operator's conf or the cluster's defaults alike:

* ``spark.scheduler.minRegisteredResourcesRatio=1.0`` (with Spark's own cap,
  ``maxRegisteredResourcesWaitingTime`` 30 s): the SparkContext is ready once every executor
  asked for has registered. Spark's default on standalone is 0 (YARN and Kubernetes: 0.8):
  the first job then starts on whichever executor registered first, and
  ``sc.defaultParallelism``, from which the driver lays out its tasks (``followers.migrate_units``)
  and warms one Python worker per slot, counts only the executors registered so far. What is
  "asked for" is ``spark.executor.instances`` on YARN and Kubernetes, and ``spark.cores.max`` on
  standalone: without it a standalone application takes every free core of the cluster and
  Spark cannot know how many to wait for, so it starts at once (docs/sizing.md: set it).
* ``spark.dynamicAllocation.enabled=false``: a run knows all its work when it starts; dynamic
  allocation would start with ``minExecutors`` (0 by default), add executors only as tasks wait
  (one more round each ``schedulerBacklogTimeout``) and release idle ones while the driver plans.
  Size a run with ``spark.executor.instances`` and ``spark.executor.cores`` (docs/sizing.md).
* ``-XX:TieredStopAtLevel=1`` in ``spark.executor.extraJavaOptions``: the executor JVM only starts
  Python workers and passes per-partition summaries back; the C2 compiler's threads compete with
  those workers for the CPU while it starts (the driver has the same option, startup.py). Spark
  starts executors with ``-XX:+IgnoreUnrecognizedVMOptions``, so a JVM other than HotSpot ignores it.

Not set, because these tasks make them moot: ``spark.locality.wait`` (the tasks are a parallelized
list of partition slices, which no executor holds: every offer is at the NO_PREF level and launches
at once). ``spark.speculation`` is switched off by the driver itself (driver.py): a second attempt of
a running copy would write the same records beside the first.
"""

from __future__ import annotations

from collections.abc import Mapping

EXECUTOR_JAVA_OPTIONS = "spark.executor.extraJavaOptions"
EXECUTOR_C1_ONLY = "-XX:TieredStopAtLevel=1"
_TIERED = "-XX:TieredStopAtLevel="
CLUSTER_DEFAULTS = {
    "spark.scheduler.minRegisteredResourcesRatio": "1.0",
    "spark.dynamicAllocation.enabled": "false",
}


def is_local(master: str | None) -> bool:
    """Local mode: ``local``, ``local[N]`` (and Spark's own test master ``local-cluster[...]``), where nothing
    is shipped either (executor_env.py)."""
    return (master or "").strip().lower().startswith("local")


def executor_conf(conf: Mapping[str, str], master: str | None) -> dict[str, str]:
    """``conf`` with the executor settings above for a cluster master; unchanged in local mode."""
    conf = dict(conf)
    if is_local(master):
        return conf
    theirs = conf.get(EXECUTOR_JAVA_OPTIONS, "").strip()
    options = theirs if _TIERED in theirs else f"{EXECUTOR_C1_ONLY} {theirs}".strip()
    return {**CLUSTER_DEFAULTS, **conf, EXECUTOR_JAVA_OPTIONS: options}
