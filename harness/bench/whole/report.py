"""Scenario 5's summary and its part of the table: medians per kind, the ratios, the run's parts and what
Airflow adds outside its tasks."""

from __future__ import annotations

from typing import Any

from harness.bench.common import fmt, median, ratio, table_row
from harness.bench.whole.metadata import TIMING_PARTS

NAME = "whole"
PARTITIONS = 8
DAG_KINDS = ("dag", "dag_api_up", "dag_deployed")


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
