"""Scenario 5: the whole verified run as a user times it, each way side by side, start-up included.

a. script: harness/bench/handwritten_copy_compare.py, a hand-written copy-and-compare script (one consumer,
   one idempotent producer, then a count and a SHA-256 per partition of both sides), run as a
   subprocess so that its interpreter start-up counts;
b. cli: ``kafka-migrate run --source .. --target .. --include TOPIC --state-dir DIR`` as a subprocess,
   launch to exit (start-up, plan, topics, copy, verification, ledger, report); the run's parts
   (RunTimings) are read from its report.json or ledger when the run records them;
c. dag: the ``kafka_migration`` DAG through a real Airflow (a temporary AIRFLOW_HOME, ``airflow db
   migrate`` once, not measured), ``airflow dags test kafka_migration --conf ..`` as a subprocess:
   its wall time, and trigger to summary from the metadata DB (DagRun queued_at, else the row's
   created_at, to the end of the summary task or of a per-topic result beside it, whichever ends
   last: ``summary_end``): what a user of a deployed Airflow waits for;
d. dag_deployed: the DAG in a running ``airflow standalone`` (LocalExecutor, as the end-to-end tests
   start it: ``harness.servers.airflow_server``; its metadata on a fresh PostgreSQL database, as docker-compose.yaml
   runs it, else on SQLite), triggered over its REST API as a user triggers it, trigger
   (the run's queued_at) to the end of its summary (as in c.); in a phase of its own after the other kinds
   (an idle Airflow's scheduler and dag-processor would load the machine under them), with one
   warm-up run, and the target connection pointed at each run's fresh target cluster over REST;
e. dag_api_up: the same command as c. through ``harness.servers.airflow_api_up``, which initialises the in-process
   Execution API before it (``dags test`` does that inside the first task, ~4-5 s of CPU; a deployed
   api-server does it once at its start, not per run). Its trigger-to-summary is the DAG's own cost:
   what a deployed Airflow adds on top is its scheduler's polling and task start latency.

On W records of 200 B in 8 partitions (script, cli, dag; the order rotates per repetition), and on
one partition of O records (script, cli; alternating). Every run gets a fresh target cluster. The CLI
and the DAG each keep one state directory (ledger) for the session, created by a warm-up run on a
small topic, as for a user who has run before.

Modules: runs (the script and the CLI), airflow (the two Airflow drivers), metadata (a run's timings
and Airflow's rows read), report (summary and table).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from harness.bench.common import RECORD_BYTES, say
from harness.bench.seeding import end_offsets, seed_topics
from harness.bench.whole.airflow import Airflow, DeployedAirflow
from harness.bench.whole.report import NAME, PARTITIONS, notes, summarize, table
from harness.bench.whole.runs import cli_run, script_run

if TYPE_CHECKING:
    from harness.bench.session import Session

__all__ = ["NAME", "PARTITIONS", "TARGETS", "notes", "run", "seed", "summarize", "table"]

TOPIC = "bench.whole"
ONE_TOPIC = "bench.whole1"
WARMUP_TOPIC = "bench.whole.warmup"
KINDS = ("script", "cli", "dag", "dag_api_up")
ONE_KINDS = ("script", "cli")
TARGETS = {
    "whole.cli_ratio": (">= 1.5", lambda v: v >= 1.5),
    "whole.dag_deployed_over_cli": ("<= 1.3", lambda v: v <= 1.3),
    "one_partition.ratio": (">= 1.0", lambda v: v >= 1.0),
}


def rotation(kinds: tuple[str, ...], repetition: int) -> tuple[str, ...]:
    """The order of the runs in one repetition: each kind goes first in turn."""
    shift = repetition % len(kinds)
    return kinds[shift:] + kinds[:shift]


def seed(session: Session) -> None:
    sizes = session.sizes
    for topic, partitions, records, rng_seed in (
        (TOPIC, PARTITIONS, sizes["whole_records"], 16),
        (ONE_TOPIC, 1, sizes["one_partition_records"], 17),
        (WARMUP_TOPIC, 2, 1000, 18),
    ):
        say(f"seeding {topic}: {records:,} records of {RECORD_BYTES} B in {partitions} partition(s)")
        session.seeding[topic] = round(seed_topics(session.source, {topic: partitions}, records, rng_seed=rng_seed), 2)
        say(f"  seeded in {session.seeding[topic]:.1f} s")


def _check(kind: str, sample: dict[str, Any], expected: int) -> None:
    if sample["records"] != expected:
        raise RuntimeError(f"{kind}: {sample['records']} records, expected {expected}")
    extra = ""
    if sample.get("trigger_to_summary_seconds") is not None:
        extra += f", trigger to summary {sample['trigger_to_summary_seconds']:.1f} s"
    if sample.get("timings"):
        extra += ", parts " + " ".join(f"{k} {v:.1f}" for k, v in sample["timings"].items() if k != "wall")
    say(
        f"    {kind}: {sample['records']:,} records, wall {sample['wall_seconds']:.1f} s{extra} "
        f"(load {sample['load1_at_start']})"
    )


def run(session: Session, repeat: int) -> None:
    source = session.source
    raw = session.raw.setdefault(NAME, {"whole": {k: [] for k in KINDS}, "one_partition": {k: [] for k in ONE_KINDS}})
    airflow = Airflow(session.work / "airflow")
    say(f"scenario 5: airflow db migrate in {airflow.home} (not measured)")
    raw["airflow_db_migrate_seconds"] = airflow.migrate()
    cli_state = session.work / "cli-state"

    def one(kind: str, topic: str) -> dict[str, Any]:
        target = session.target.fresh()
        run_dir = session.run_dir()
        if kind == "script":
            return script_run(source, target, topic, run_dir)
        if kind == "cli":
            return cli_run(source, target, topic, cli_state, run_dir / "cli.log")
        return airflow.run(source, target, topic, run_dir / f"{kind}.log", api_up=kind == "dag_api_up")

    say("scenario 5: warm-up, not measured: one CLI run and one DAG run of a small topic (ledgers created)")
    for kind in ("cli", "dag"):
        _check(f"warm-up {kind}", one(kind, WARMUP_TOPIC), sum(end_offsets(source, {WARMUP_TOPIC: 2}).values()))

    expected = sum(end_offsets(source, {TOPIC: PARTITIONS}).values())
    expected_one = sum(end_offsets(source, {ONE_TOPIC: 1}).values())
    for i in range(repeat):
        say(f"scenario 5 (whole run, {PARTITIONS} partitions), repetition {i + 1}/{repeat}")
        for kind in rotation(KINDS, i):
            sample = one(kind, TOPIC)
            _check(kind, sample, expected)
            raw["whole"][kind].append(sample)
        say(f"scenario 5 (whole run, one partition), repetition {i + 1}/{repeat}")
        for kind in rotation(ONE_KINDS, i):
            sample = one(kind, ONE_TOPIC)
            _check(kind, sample, expected_one)
            raw["one_partition"][kind].append(sample)

    with contextlib.ExitStack() as stack:
        metadata_url = stack.enter_context(deployed_metadata())
        raw["deployed_metadata"] = "postgresql" if metadata_url else "sqlite"
        say(
            f"scenario 5: a deployed Airflow (airflow standalone, metadata on {raw['deployed_metadata']}), started "
            "and warmed up, not measured"
        )
        deployed = stack.enter_context(DeployedAirflow(session.work / "airflow-standalone", source, metadata_url))
        warm = deployed.run(session.target.fresh(), WARMUP_TOPIC)
        _check("warm-up dag_deployed", warm, sum(end_offsets(source, {WARMUP_TOPIC: 2}).values()))
        runs = raw["whole"].setdefault("dag_deployed", [])
        for i in range(repeat):
            say(f"scenario 5 (whole run, {PARTITIONS} partitions, deployed Airflow), repetition {i + 1}/{repeat}")
            sample = deployed.run(session.target.fresh(), TOPIC)
            _check("dag_deployed", sample, expected)
            runs.append(sample)


@contextlib.contextmanager
def deployed_metadata() -> Iterator[str | None]:
    """A fresh PostgreSQL database for the deployed Airflow's metadata, as docker-compose.yaml gives it one,
    dropped afterwards; None (SQLite, said so) when the local server cannot be reached."""
    from harness.servers.postgres import admin_url, database_url, optional_databases

    with optional_databases("km_bench_airflow") as names:
        if names is None:
            say(f"scenario 5: PostgreSQL not reachable at {admin_url()}; the deployed Airflow runs on SQLite")
        yield database_url(names[0]) if names else None  # postgresql+psycopg, as docker-compose.yaml
