"""Scenario 5's runs outside Airflow, each a subprocess timed launch to exit: the hand-written script
(harness/bench/handwritten_copy_compare.py) and ``kafka-migrate run``; and what the DAG runs share with
them (the environment, the launch, a project run's figures from its report.json)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from harness.bench.common import cli_run_command, load1
from harness.bench.whole.metadata import find_timings

REPO = Path(__file__).resolve().parents[3]
SCRIPT = "harness.bench.handwritten_copy_compare"  # run as a module from the repository (it imports the baselines)
BIN = Path(sys.executable).parent


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = os.environ.copy()
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"  # spark-submit, airflow, kafka-migrate of this venv
    env.update(extra or {})
    return env


def launch(cmd: list[str], log: Path, env: dict[str, str]) -> tuple[int, float, str]:
    """Run ``cmd`` to its end; (exit code, wall seconds from launch to exit, its output)."""
    started = time.monotonic()
    with log.open("w") as out:
        code = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO, check=False).returncode
    wall = time.monotonic() - started
    return code, round(wall, 3), log.read_text(errors="replace")


def script_command(source: str, target: str, topic: str) -> list[str]:
    """The hand-written script as the bench launches it (``launch`` runs it from the repository)."""
    return [sys.executable, "-m", SCRIPT, "--source", source, "--target", target, "--topic", topic, "--json"]


def script_run(source: str, target: str, topic: str, run_dir: Path) -> dict[str, Any]:
    load = load1()
    cmd = script_command(source, target, topic)
    code, wall, output = launch(cmd, run_dir / "script.log", child_env())
    if code != 0:
        raise RuntimeError(f"hand-written script exited {code}:\n{output[-3000:]}")
    figures = json.loads(output.strip().splitlines()[-1])
    return {"records": figures["records"], "wall_seconds": wall, "script": figures, "load1_at_start": load}


def _newest_report(reports: Path) -> dict[str, Any]:
    found = sorted(reports.glob("*/report.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise RuntimeError(f"no report.json under {reports}")
    return json.loads(found[-1].read_text())


def project_sample(state_dir: Path, wall: float, load: float) -> dict[str, Any]:
    """Records and verdict from the run's report.json; its parts from the report, else the ledger."""
    report = _newest_report(state_dir / "reports")
    if report.get("verdict") != "VERIFIED" and report.get("run", {}).get("status") != "verified":
        raise RuntimeError(f"run {report.get('run', {}).get('run_id')} not verified: {report.get('verdict')}")
    timings = find_timings(report)
    if timings is None:
        from kafka_migration.ledger import Ledger, default_ledger_url

        ledger = Ledger.open(default_ledger_url(state_dir))
        try:
            run = ledger.run(report["run"]["run_id"])
            timings = find_timings({"run": run.to_dict() if run else {}})
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
    code, wall, output = launch(cmd, log, child_env())
    if code != 0:
        raise RuntimeError(f"kafka-migrate run exited {code}:\n{output[-3000:]}")
    return project_sample(state_dir, wall, load)
