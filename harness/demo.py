"""``make demo``: the whole migration on two Apache Kafka clusters, through real Airflow and Spark.

Starts a source and a target cluster (Apache Kafka 4.2.1 from the jar set of ``make kafka-jars``,
harness/kafka; DEMO_BROKER=embedded: the embedded Kafka-protocol broker instead, faster to start
and not Apache Kafka), seeds a sample data set, runs the
``kafka_migration`` DAG (metadata DB, DAG run, real operators, spark-submit in
local mode), prints the per-topic summary and checks the target independently.
Exit 0 only when the migration is verified. Brokers stop on exit, error or Ctrl-C.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

REPO = Path(__file__).resolve().parent.parent


def airflow_env(home: Path, source: str, target: str) -> dict[str, str]:
    """Environment for an isolated Airflow home with the demo's connections."""
    return {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
        "AIRFLOW_CONN_KAFKA_SOURCE": json.dumps({"conn_type": "kafka", "extra": {"bootstrap.servers": source}}),
        "AIRFLOW_CONN_KAFKA_TARGET": json.dumps({"conn_type": "kafka", "extra": {"bootstrap.servers": target}}),
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[*]"}),
        "KAFKA_MIGRATION_STATE_DIR": str(home / "kafka-migration"),
    }


def prepare_airflow(env: dict[str, str]) -> None:
    os.environ.update(env)
    bin_dir = Path(sys.executable).parent
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    subprocess.run(
        [str(bin_dir / "airflow"), "db", "migrate"], check=True, stdout=subprocess.DEVNULL, env=os.environ.copy()
    )


_SHOW = (
    re.compile(r"\[DAG TEST\] (starting|end) task task_id=(\S+) map_index=(-?\d+)"),
    re.compile(r"kafka_migration\.spark: ((?:copy|verify) .*topics? done\)(?::[^\[]*)?)"),
)


def _follow(path: Path, stop: threading.Event, out: TextIO) -> None:
    """Print the few log lines that tell a person how the run is going."""
    with path.open(errors="replace") as log:
        while True:
            line = log.readline()
            if not line:
                if stop.is_set():
                    return
                time.sleep(0.2)
                continue
            task = _SHOW[0].search(line)
            if task:
                verb, task_id, index = task.groups()
                label = task_id if index == "-1" else f"{task_id}[{index}]"
                print(f"  {'started ' if verb == 'starting' else 'finished'} {label}", file=out, flush=True)
                continue
            spark = _SHOW[1].search(line)
            if spark:
                print(f"    {spark.group(1)}", file=out, flush=True)


def run_dag(conf: dict[str, object], log_path: Path) -> tuple[str, str]:
    """Run the DAG once with ``dag.test`` (in this process) and return (state, run_id).

    Airflow's and Spark's own output goes to ``log_path``; progress lines are echoed.
    """
    from airflow.dag_processing.dagbag import DagBag

    stop = threading.Event()
    log_path.write_text("")
    saved = os.dup(1), os.dup(2)
    console = os.fdopen(os.dup(1), "w")  # the terminal, kept while fd 1 points at the log
    follower = threading.Thread(target=_follow, args=(log_path, stop, console), daemon=True)
    follower.start()
    with log_path.open("a") as log:
        sys.stdout.flush()
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            bag = DagBag(dag_folder=str(REPO / "dags"))
            if bag.import_errors:
                raise SystemExit(f"DAG import errors: {bag.import_errors}")
            run = bag.get_dag("kafka_migration").test(run_conf=conf)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            stop.set()
            follower.join(timeout=5)
            console.close()
    return str(run.state), str(run.run_id)


def clusters(home: Path):  # type: ignore[no-untyped-def]
    """The demo's source and target: Apache Kafka, or with DEMO_BROKER=embedded the embedded broker."""
    import shutil

    broker = os.environ.get("DEMO_BROKER", "kafka")
    if broker == "embedded":
        from harness.servers.embedded import embedded_clusters

        print("Brokers: embedded Kafka-protocol broker (DEMO_BROKER=embedded; not Apache Kafka)")
        return embedded_clusters("demo-source", "demo-target", log_dir=home / "brokers")
    if broker != "kafka":
        raise SystemExit(f"DEMO_BROKER={broker!r}: use kafka (the default) or embedded")
    from harness.kafka import fetch, jars, kafka_clusters

    fetch.ensure()
    print(f"Brokers: Apache Kafka {jars.kafka_version()} (one-node KRaft clusters from the jars in {jars.home()})")
    shutil.rmtree(home / "kafka", ignore_errors=True)  # a new pair of clusters each time
    return kafka_clusters("demo-source", "demo-target", directory=home / "kafka")


def main() -> int:
    sys.path.insert(0, str(REPO))
    from harness.data.read import read_partition, without_offsets
    from harness.data.seed import seed_sample_dataset
    from kafka_migration.model.plan import MigrationPlan
    from kafka_migration.model.results import StepResults
    from kafka_migration.reports.summary import all_verified, render_table, summarize

    home = REPO / ".state" / "demo-airflow"
    home.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with clusters(home) as (source, target):
        print(f"Source cluster at {source.bootstrap}, target cluster at {target.bootstrap}")
        topics = seed_sample_dataset(source.bootstrap)
        print(f"Seeded {len(topics)} topics on the source")
        prepare_airflow(airflow_env(home, source.bootstrap, target.bootstrap))
        conf = {"include": ".*", "exclude": "scratch\\..*", "rename": "{topic}", "dry_run": False}
        print(f"Running DAG kafka_migration with {conf} (Airflow output: {home / 'dag-run.log'})")
        state, run_id = run_dag(conf, home / "dag-run.log")
        state_dir = Path(os.environ["KAFKA_MIGRATION_STATE_DIR"])
        plan_path = max((state_dir / "runs").glob("*/plan.json"), key=lambda p: p.stat().st_mtime)
        plan = MigrationPlan.read(plan_path)
        copy: dict = {}
        verify: dict = {}
        for path in plan_path.parent.glob("copy-job*.json"):
            copy.update(StepResults.read(path).topics)
        for path in plan_path.parent.glob("verify-job*.json"):
            verify.update(StepResults.read(path).topics)
        rows = summarize(plan, copy, verify)
        print()
        print(f"DAG run {run_id}: {state}")
        print(render_table(rows))
        # An independent look at the target, outside the pipeline.
        mismatched = []
        for topic in plan.topics:
            for p in topic.partitions:
                src = without_offsets(read_partition(source.bootstrap, topic.source_topic, p.partition))
                tgt = without_offsets(read_partition(target.bootstrap, topic.target_topic, p.partition))
                if src != tgt:
                    mismatched.append(f"{topic.target_topic}[{p.partition}]")
        print(
            f"Independent check of {sum(len(t.partitions) for t in plan.topics)} target partitions: "
            + ("all identical to the source" if not mismatched else f"DIFFERENT: {', '.join(mismatched)}")
        )
        report = state_dir / "reports" / plan.run_id / "report.html"
        print(f"Sign-off report: {report}" if report.exists() else "No report was written (see the DAG log).")
        elapsed = time.monotonic() - started
        if state == "success" and all_verified(rows) and not mismatched:
            print(
                f"Migration {plan.run_id} verified in {elapsed:.0f}s: {len(rows)} topics, "
                f"{sum(r.copied or 0 for r in rows):,} records, every partition matches."
            )
            return 0
        print(f"Migration {plan.run_id} NOT verified (DAG run {state}); see the task logs under {home / 'logs'}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
