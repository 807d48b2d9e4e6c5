"""Scenario 5: the whole verified run as a user times it, each way side by side, start-up included.

a. script: harness/handwritten_copy_compare.py, a hand-written copy-and-compare script (one consumer,
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
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.bench.common import RECORD_BYTES, SPARK, cli_run_command, fmt, load1, median, ratio, say, table_row
from harness.bench_kafka import end_offsets, seed_topics

if TYPE_CHECKING:
    from harness.bench.session import Session

NAME = "whole"
PARTITIONS = 8
TOPIC = "bench.whole"
ONE_TOPIC = "bench.whole1"
WARMUP_TOPIC = "bench.whole.warmup"
REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "harness" / "handwritten_copy_compare.py"
BIN = Path(sys.executable).parent
KINDS = ("script", "cli", "dag", "dag_api_up")
DAG_KINDS = ("dag", "dag_api_up", "dag_deployed")
ONE_KINDS = ("script", "cli")
TIMING_PARTS = ("wall", "plan", "startup", "copy", "verify", "overlap", "bookkeeping")
TARGETS = {
    "whole.cli_ratio": (">= 1.5", lambda v: v >= 1.5),
    "whole.dag_deployed_over_cli": ("<= 1.3", lambda v: v <= 1.3),
    "one_partition.ratio": (">= 1.0", lambda v: v >= 1.0),
}


# --- pure helpers (tests/harness/test_bench_whole.py) ------------------------------------------------


def rotation(kinds: tuple[str, ...], repetition: int) -> tuple[str, ...]:
    """The order of the runs in one repetition: each kind goes first in turn."""
    shift = repetition % len(kinds)
    return kinds[shift:] + kinds[:shift]


def find_timings(report: Any) -> dict[str, float] | None:
    """The run's parts (RunTimings.to_dict) from a report.json or a ledger row: a ``timings`` mapping with
    a ``wall`` entry, at the top or one level down (e.g. under ``run``); None when the run has none."""
    if not isinstance(report, dict):
        return None
    candidates = [report.get("timings")] + [v.get("timings") for v in report.values() if isinstance(v, dict)]
    for found in candidates:
        if isinstance(found, str):
            try:
                found = json.loads(found)
            except ValueError:
                continue
        if isinstance(found, dict) and found.get("wall") is not None:
            return {k: float(found[k]) for k in TIMING_PARTS if found.get(k) is not None}
    return None


def parse_db_time(value: Any) -> float | None:
    """Epoch seconds of a timestamp as Airflow's SQLite metadata DB stores it (UTC, naive or with offset)."""
    if value in (None, ""):
        return None
    stamp = value if isinstance(value, datetime) else datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def _trigger(run: dict[str, Any]) -> float | None:
    stamps = (parse_db_time(run.get(k)) for k in ("queued_at", "created_at", "start_date"))
    return next((t for t in stamps if t is not None), None)


def trigger_to_summary(run: dict[str, Any]) -> float | None:
    """Seconds from a DAG run's trigger to the end of its summary task (or of a per-topic result beside it
    that ended later: ``summary_end``), from its metadata DB row.

    The trigger is ``queued_at`` (set when a run is triggered through the API or UI), else ``created_at``
    (the row's creation: ``dags test`` queues nothing and sets start_date to the logical date, i.e. the
    command's launch, before it parses the DAG folder twice), else ``start_date``.
    """
    begin, end = _trigger(run), parse_db_time(run.get("summary_end"))
    if begin is None or end is None:
        return None
    return round(end - begin, 3)


def summary_end(tasks: list[dict[str, Any]]) -> Any:
    """When the run's verdict was complete: the end of its summary task, or of a per-topic result task that
    ran beside it and ended later (the latest end of any task); None while the summary has not ended."""
    if not any(t["task_id"] == "summary" and t.get("end_date") for t in tasks):
        return None
    return max((t["end_date"] for t in tasks if t.get("end_date")), key=lambda v: parse_db_time(v) or 0.0)


def airflow_overhead(run: dict[str, Any]) -> dict[str, Any]:
    """Where a DAG run's trigger-to-summary time went outside its tasks: before the first task started,
    and between tasks (no task running); and each task id's summed run time. From the run's ``tasks``
    rows (task_id, start_date, end_date) as last_run returns them."""
    begin, end = _trigger(run), parse_db_time(run.get("summary_end"))
    intervals = []
    per_task: dict[str, float] = {}
    for task in run.get("tasks") or ():
        start, stop = parse_db_time(task.get("start_date")), parse_db_time(task.get("end_date"))
        if start is None or stop is None:
            continue
        intervals.append((start, stop))
        per_task[task["task_id"]] = round(per_task.get(task["task_id"], 0.0) + stop - start, 3)
    if begin is None or end is None or not intervals:
        return {"task_seconds": per_task}
    intervals.sort()
    busy, cursor = 0.0, intervals[0][0]
    for start, stop in intervals:  # union of the task intervals up to the summary's end
        start, stop = max(start, cursor), min(stop, end)
        if stop > start:
            busy += stop - start
            cursor = stop
    return {
        "before_first_task": round(intervals[0][0] - begin, 3),
        "between_tasks": round(end - intervals[0][0] - busy, 3),
        "task_seconds": per_task,
    }


def other_seconds(timings: dict[str, float]) -> float:
    """The run's wall time in none of its parts (as the report shows it: a second Spark start-up, waits
    between steps); copy and verification overlap by ``overlap``."""
    parts = sum(timings.get(k, 0.0) for k in ("plan", "startup", "copy", "verify", "bookkeeping"))
    return round(max(0.0, timings["wall"] - parts + timings.get("overlap", 0.0)), 3)


def median_parts(samples: list[dict[str, Any]]) -> dict[str, float]:
    """Median of each RunTimings part, and of the rest of the run's wall time ('other'), over the samples
    that recorded them."""
    recorded = [{**s["timings"], "other": other_seconds(s["timings"])} for s in samples if s.get("timings")]
    out = {}
    for part in (*TIMING_PARTS, "other"):
        values = [t[part] for t in recorded if part in t]
        if values:
            out[part] = median(values)
    return out


def summarize_kinds(samples: dict[str, list[dict[str, Any]]], records: int, with_dag: bool = True) -> dict[str, Any]:
    """Medians per kind and the ratios: script s / cli s (> 1: the project is faster), dag s / cli s."""
    out: dict[str, Any] = {"records": records}
    walls = {k: median([s["wall_seconds"] for s in v]) for k, v in samples.items() if v}
    for kind, runs in samples.items():
        if not runs:
            continue
        entry: dict[str, Any] = {"median_wall_seconds": walls[kind], "samples": runs}
        if kind in ("cli", *DAG_KINDS):
            entry["median_parts"] = median_parts(runs)
        if kind in DAG_KINDS:
            entry["median_trigger_to_summary_seconds"] = median(
                [s["trigger_to_summary_seconds"] for s in runs if s.get("trigger_to_summary_seconds") is not None]
            )
            for key in ("before_first_task", "between_tasks"):
                entry[f"median_{key}_seconds"] = median(
                    [s["airflow"][key] for s in runs if (s.get("airflow") or {}).get(key) is not None]
                )
        out[kind] = entry
    nan = float("nan")
    out["ratio"] = ratio(walls.get("script", nan), walls.get("cli", nan)) if "cli" in walls else nan
    for kind in DAG_KINDS if with_dag and "cli" in walls else ():
        if kind in out:
            out[f"{kind}_over_cli"] = ratio(out[kind]["median_trigger_to_summary_seconds"], walls["cli"])
            out[f"{kind}_wall_over_cli"] = ratio(walls[kind], walls["cli"])
    return out


# --- one run of each kind -------------------------------------------------------------------------


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = os.environ.copy()
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"  # spark-submit, airflow, kafka-migrate of this venv
    env.update(extra or {})
    return env


def _launch(cmd: list[str], log: Path, env: dict[str, str]) -> tuple[int, float, str]:
    """Run ``cmd`` to its end; (exit code, wall seconds from launch to exit, its output)."""
    started = time.monotonic()
    with log.open("w") as out:
        code = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO, check=False).returncode
    wall = time.monotonic() - started
    return code, round(wall, 3), log.read_text(errors="replace")


def script_run(source: str, target: str, topic: str, run_dir: Path) -> dict[str, Any]:
    load = load1()
    cmd = [sys.executable, str(SCRIPT), "--source", source, "--target", target, "--topic", topic, "--json"]
    code, wall, output = _launch(cmd, run_dir / "script.log", _env())
    if code != 0:
        raise RuntimeError(f"hand-written script exited {code}:\n{output[-3000:]}")
    figures = json.loads(output.strip().splitlines()[-1])
    return {"records": figures["records"], "wall_seconds": wall, "script": figures, "load1_at_start": load}


def _newest_report(reports: Path) -> dict[str, Any]:
    found = sorted(reports.glob("*/report.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise RuntimeError(f"no report.json under {reports}")
    return json.loads(found[-1].read_text())


def _project_sample(state_dir: Path, wall: float, load: float) -> dict[str, Any]:
    """Records and verdict from the run's report.json; its parts from the report, else the ledger."""
    report = _newest_report(state_dir / "reports")
    if report.get("verdict") != "VERIFIED" and report.get("run", {}).get("status") != "verified":
        raise RuntimeError(f"run {report.get('run', {}).get('run_id')} not verified: {report.get('verdict')}")
    timings = find_timings(report)
    if timings is None:
        from kafka_migration.ledger import Ledger, default_ledger_url

        ledger = Ledger.open(default_ledger_url(state_dir))
        try:
            timings = find_timings({"run": ledger.run(report["run"]["run_id"]) or {}})
        finally:
            ledger.engine.dispose()
    return {
        "records": report["totals"]["records_verified"],
        "run_id": report["run"]["run_id"],
        "wall_seconds": wall,
        "timings": timings,
        "load1_at_start": load,
    }


def cli_run(source: str, target: str, topic: str, state_dir: Path, log: Path) -> dict[str, Any]:
    load = load1()
    cmd = cli_run_command(source, target, re.escape(topic), state_dir)
    code, wall, output = _launch(cmd, log, _env())
    if code != 0:
        raise RuntimeError(f"kafka-migrate run exited {code}:\n{output[-3000:]}")
    return _project_sample(state_dir, wall, load)


def _kafka_connection(bootstrap: str) -> str:
    """An Airflow connection of type kafka (librdkafka settings in extra), as AIRFLOW_CONN_* holds it."""
    return json.dumps({"conn_type": "kafka", "extra": {"bootstrap.servers": bootstrap}})


def _dag_sample(
    state_dir: Path, wall: float, load: float, dag_run: dict[str, Any], seconds: float | None
) -> dict[str, Any]:
    """A DAG run's sample: the project's figures from its report, trigger to summary, Airflow's share."""
    sample = _project_sample(state_dir, wall, load)
    sample["trigger_to_summary_seconds"] = seconds
    sample["airflow"] = airflow_overhead(dag_run)
    sample["dag_run"] = dag_run
    return sample


class Airflow:
    """A temporary AIRFLOW_HOME with a migrated SQLite metadata DB, as tests/e2e/conftest.py sets it up."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.state_dir = home / "kafka-migration"
        self.env = {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "KAFKA_MIGRATION_STATE_DIR": str(self.state_dir),
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": SPARK.settings.master}),
        }

    def migrate(self) -> float:
        started = time.monotonic()
        self.home.mkdir(parents=True, exist_ok=True)
        code, _, output = _launch([str(BIN / "airflow"), "db", "migrate"], self.home / "migrate.log", _env(self.env))
        if code != 0:
            raise RuntimeError(f"airflow db migrate exited {code}:\n{output[-3000:]}")
        return round(time.monotonic() - started, 1)

    def run(self, source: str, target: str, topic: str, log: Path, api_up: bool = False) -> dict[str, Any]:
        """One ``airflow dags test`` of the DAG; ``api_up``: with the Execution API initialised first."""
        load = load1()
        env = _env(
            {
                **self.env,
                "AIRFLOW_CONN_KAFKA_SOURCE": _kafka_connection(source),
                "AIRFLOW_CONN_KAFKA_TARGET": _kafka_connection(target),
            }
        )
        conf = json.dumps({"include": re.escape(topic), "dry_run": False})
        airflow = [sys.executable, "-m", "harness.servers.airflow_api_up"] if api_up else [str(BIN / "airflow")]
        code, wall, output = _launch([*airflow, "dags", "test", "kafka_migration", "-c", conf], log, env)
        dag_run = self.last_run()
        if code != 0 or dag_run.get("state") != "success":
            raise RuntimeError(f"airflow dags test exited {code}, DAG run {dag_run.get('state')}:\n{output[-3000:]}")
        return _dag_sample(self.state_dir, wall, load, dag_run, trigger_to_summary(dag_run))

    def last_run(self) -> dict[str, Any]:
        """The newest kafka_migration DAG run's row (state, queued_at, created_at, start_date), its task
        instances (``tasks``) and when its verdict was complete (``summary_end``); empty when there is none."""
        with sqlite3.connect(self.home / "airflow.db") as db:
            db.row_factory = sqlite3.Row
            row = db.execute(
                "SELECT run_id, state, queued_at, created_at, start_date, end_date FROM dag_run "
                "WHERE dag_id = 'kafka_migration' ORDER BY id DESC LIMIT 1"
            ).fetchone()
            if row is None:
                return {}
            tasks = [
                dict(t)
                for t in db.execute(
                    "SELECT task_id, map_index, state, start_date, end_date FROM task_instance "
                    "WHERE dag_id = 'kafka_migration' AND run_id = ? ORDER BY start_date",
                    (row["run_id"],),
                )
            ]
        return {**dict(row), "tasks": tasks, "summary_end": summary_end(tasks)}


class DeployedAirflow:
    """``airflow standalone`` with the repository's DAGs: runs triggered over REST, timed from its API.

    ``metadata_url``: Airflow's metadata database (PostgreSQL, as docker-compose.yaml runs it); None:
    SQLite in the home, where the scheduler starts a triggered run only at the next whole second (it
    selects queued runs with ``run_after <= now()``, and SQLite's now() has no fraction of a second).
    """

    def __init__(self, home: Path, source: str, metadata_url: str | None = None) -> None:
        self.home = home
        self.source = source
        self.metadata_url = metadata_url
        self.state_dir = home / "kafka-migration"
        self._stack = contextlib.ExitStack()
        self.api: Any = None

    def __enter__(self) -> DeployedAirflow:
        from harness.servers.airflow_server import airflow_standalone

        env = {
            "AIRFLOW_CONN_KAFKA_SOURCE": _kafka_connection(self.source),
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": SPARK.settings.master}),
            "KAFKA_MIGRATION_STATE_DIR": str(self.state_dir),
        }
        if self.metadata_url:  # psycopg 3 for the async engine too, as docker-compose.yaml sets it
            env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = self.metadata_url
            env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"] = self.metadata_url
        server = self._stack.enter_context(airflow_standalone(self.home, env))
        self.api = server.client()
        self._stack.callback(self.api.close)
        self.api.wait_for_dag("kafka_migration")
        self.api.unpause("kafka_migration")
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _point_target_at(self, bootstrap: str) -> None:
        """The ``kafka_target`` connection (in the metadata DB, so that it can change per run)."""
        body = {
            "connection_id": "kafka_target",
            "conn_type": "kafka",
            "extra": json.dumps({"bootstrap.servers": bootstrap}),
        }
        found = self.api.request("GET", "/api/v2/connections/kafka_target", expect=(200, 404))
        if found.status_code == 404:
            self.api.request("POST", "/api/v2/connections", json=body, expect=(201,))
        else:
            self.api.request("PATCH", "/api/v2/connections/kafka_target", json=body)

    def run(self, target: str, topic: str) -> dict[str, Any]:
        load = load1()
        self._point_target_at(target)
        started = self.api.trigger("kafka_migration", {"include": re.escape(topic), "dry_run": False})
        run_id = started["dag_run_id"]
        final = self.api.wait_for_run("kafka_migration", run_id, timeout=900)
        if final["state"] != "success":
            raise RuntimeError(
                f"DAG run {run_id} ended {final['state']}\n{self.api.describe_run('kafka_migration', run_id)}"
            )
        tasks = self.api.task_instances("kafka_migration", run_id)
        dag_run = {**final, "tasks": tasks, "summary_end": summary_end(tasks)}
        seconds = trigger_to_summary(dag_run)
        if seconds is None:
            raise RuntimeError(f"DAG run {run_id}: no trigger or summary time in {final}")
        # No process of its own to time: the wall time is what the user waits, trigger to summary.
        return _dag_sample(self.state_dir, seconds, load, dag_run, seconds)


# --- the scenario ---------------------------------------------------------------------------------


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


def summarize(raw: dict[str, Any], sizes: dict[str, int]) -> dict[str, Any]:
    if not raw["whole"]["script"]:
        return {}
    whole = summarize_kinds(raw["whole"], raw["whole"]["script"][0]["records"])
    whole["cli_ratio"] = whole.pop("ratio")
    one = summarize_kinds(raw["one_partition"], raw["one_partition"]["script"][0]["records"], with_dag=False)
    return {
        "whole": {
            "partitions": PARTITIONS,
            "airflow_db_migrate_seconds": raw.get("airflow_db_migrate_seconds"),
            "deployed_metadata": raw.get("deployed_metadata"),
            **whole,
        },
        "one_partition": {"partitions": 1, **one},
    }


def _parts(entry: dict[str, Any]) -> str:
    parts = entry.get("median_parts") or {}
    shown = [
        f"{k} {parts[k]:.1f}" for k in (*TIMING_PARTS, "other") if k in parts
    ]  # wall: the run's own, inside the process
    return "parts (median s): " + ", ".join(shown) if shown else "parts: not recorded by this version"


METADATA_NAMES = {
    "postgresql": "PostgreSQL, as docker-compose.yaml",
    "sqlite": "SQLite: a triggered run waits for the next whole second",
}
# Row labels fit the table's 26-character run column: "<label> trigger->summary" / "<label> process".
DAG_LABELS = {"dag_deployed": "DAG deployed", "dag": "DAG test", "dag_api_up": "DAG API up"}


def _row(scenario: str, run: str, records: int, wall: float) -> str:
    return table_row(scenario, run, records, wall, wall)


def table(summary: dict[str, Any]) -> list[str]:
    if "whole" not in summary:
        return []
    w, o = summary["whole"], summary["one_partition"]
    lines = [
        _row(f"5 whole run {w['records']:,}", "hand-written script", w["records"], w["script"]["median_wall_seconds"]),
        _row("", "CLI kafka-migrate run", w["records"], w["cli"]["median_wall_seconds"]),
    ]
    for kind, label in DAG_LABELS.items():
        if kind in w:
            if kind != "dag_deployed":  # no process of its own
                lines.append(_row("", f"{label} process", w["records"], w[kind]["median_wall_seconds"]))
            lines.append(_row("", f"{label} trig->summary", w["records"], w[kind]["median_trigger_to_summary_seconds"]))
    nan = float("nan")
    lines.append(
        f"{'':<28} script/CLI: {fmt(w['cli_ratio'], 2)}x (target >= 1.5); DAG trigger->summary / CLI: "
        f"{fmt(w.get('dag_deployed_over_cli', nan), 2)}x deployed (target <= 1.3), "
        f"{fmt(w.get('dag_over_cli', nan), 2)}x in dags test, {fmt(w.get('dag_api_up_over_cli', nan), 2)}x in dags "
        "test with the Execution API up"
    )
    lines.append(f"{'':<28} CLI {_parts(w['cli'])}")
    for kind, label in DAG_LABELS.items():
        if kind in w:
            d = w[kind]
            lines.append(f"{'':<28} {label} {_parts(d)}")
            lines.append(
                f"{'':<28} {label} outside its tasks (median s): before the first task "
                f"{fmt(d.get('median_before_first_task_seconds', nan), 1)}, between tasks "
                f"{fmt(d.get('median_between_tasks_seconds', nan), 1)}"
            )
    lines += [
        _row(
            f"5 one partition {o['records']:,}", "hand-written script", o["records"], o["script"]["median_wall_seconds"]
        ),
        _row("", "CLI kafka-migrate run", o["records"], o["cli"]["median_wall_seconds"]),
        f"{'':<28} script/CLI: {fmt(o['ratio'], 2)}x (target >= 1.0); CLI {_parts(o['cli'])}",
    ]
    return lines


def notes(summary: dict[str, Any]) -> list[str]:
    if "whole" not in summary:
        return []
    return [
        "",
        "Scenario 5: wall s = launch to exit of each subprocess (interpreter start-up included); ratios are script s / "
        "project s (> 1: the project is faster) and DAG s / CLI s. 'dags test' runs the tasks in one process and "
        "initialises its Execution API inside the first task; 'API up' has it initialised before the run, as a "
        "deployed api-server has; 'deployed' is airflow standalone (LocalExecutor, metadata on "
        f"{METADATA_NAMES.get(summary['whole'].get('deployed_metadata'), 'SQLite')}) triggered over REST: its "
        "scheduler's and task runners' latency included.",
    ]
