"""The bench's whole-run scenario: its pure helpers (run order, timings lookup, medians and ratios).
No timing is measured here."""

from __future__ import annotations

import math

from harness.bench import runner, whole
from harness.bench.whole import metadata, report


def test_rotation_puts_each_kind_first_in_turn() -> None:
    assert [whole.rotation(("script", "cli", "dag"), i) for i in range(4)] == [
        ("script", "cli", "dag"),
        ("cli", "dag", "script"),
        ("dag", "script", "cli"),
        ("script", "cli", "dag"),
    ]
    assert whole.KINDS == ("script", "cli", "dag", "dag_api_up")


def test_find_timings_at_the_top_under_run_or_as_json_text() -> None:
    parts = {"wall": 10.0, "plan": 1.0, "copy": 4.0, "verify": 3.5, "overlap": 2.0}
    assert metadata.find_timings({"timings": parts}) == parts
    assert metadata.find_timings({"run": {"timings": parts}}) == parts
    assert metadata.find_timings({"run": {"timings": '{"wall": 2, "plan": null}'}}) == {"wall": 2.0}
    assert metadata.find_timings({"run": {"status": "verified"}}) is None
    assert metadata.find_timings({"timings": {"plan": 1.0}}) is None  # no wall: not a run's timings
    assert metadata.find_timings(None) is None


def test_trigger_to_summary_from_metadata_db_stamps() -> None:
    end = {"summary_end": "2026-11-23 10:00:30"}
    queued = {"queued_at": "2026-11-23 10:00:00.500000", "created_at": "2026-11-23 10:00:05", **end}
    assert metadata.trigger_to_summary(queued) == 29.5  # a triggered run: queued_at
    created = {"queued_at": None, "created_at": "2026-11-23 10:00:05", "start_date": "2026-11-23 09:59:58", **end}
    assert metadata.trigger_to_summary(created) == 25.0  # dags test queues nothing: the row's creation
    started = {"start_date": "2026-11-23T10:00:00+00:00", "summary_end": "2026-11-23T10:00:12+00:00"}
    assert metadata.trigger_to_summary(started) == 12.0
    assert metadata.trigger_to_summary(end) is None
    assert metadata.trigger_to_summary({"queued_at": "2026-11-23 10:00:00", "summary_end": None}) is None


def test_the_verdict_is_complete_when_the_summary_and_the_results_beside_it_have_ended() -> None:
    tasks = [
        {"task_id": "summary", "end_date": "2026-11-23 10:00:30.100"},
        {"task_id": "topic_result", "end_date": "2026-11-23 10:00:30.400"},  # beside the summary, ended later
        {"task_id": "copy_verify", "end_date": "2026-11-23 10:00:29"},
    ]
    assert metadata.summary_end(tasks) == "2026-11-23 10:00:30.400"
    assert metadata.summary_end([{**tasks[0], "end_date": None}, tasks[1]]) is None  # the summary still runs


def test_airflow_overhead_before_the_first_task_and_between_tasks() -> None:
    def task(task_id: str, start: str, end: str | None) -> dict:  # type: ignore[type-arg]
        return {
            "task_id": task_id,
            "start_date": f"2026-11-23 10:00:{start}",
            "end_date": end and f"2026-11-23 10:00:{end}",
        }

    run = {
        "created_at": "2026-11-23 10:00:00",
        "summary_end": "2026-11-23 10:00:30",
        "tasks": [
            task("plan", "04", "08"),
            task("copy", "10", "20"),  # two mapped copies overlap: 10..20 and 12..22 are busy 10..22
            task("copy", "12", "22"),
            task("summary", "25", "30"),
            task("sync_groups", "23", None),  # skipped: never ran
        ],
    }
    assert metadata.airflow_overhead(run) == {
        "before_first_task": 4.0,
        "between_tasks": 5.0,  # 08..10, 22..25
        "task_seconds": {"plan": 4.0, "copy": 20.0, "summary": 5.0},
    }
    assert metadata.airflow_overhead({"tasks": []}) == {"task_seconds": {}}


def test_other_is_the_wall_time_in_no_part() -> None:
    parts = {"wall": 20.0, "plan": 1.0, "startup": 3.0, "copy": 8.0, "verify": 7.0, "overlap": 5.0, "bookkeeping": 1.0}
    assert report.other_seconds(parts) == 5.0  # 20 - (1 + 3 + 8 + 7 + 1 - 5)
    assert report.other_seconds({"wall": 2.0, "copy": 3.0}) == 0.0


def _sample(wall: float, **extra: object) -> dict:  # type: ignore[type-arg]
    return {"records": 100, "wall_seconds": wall, **extra}


def test_summarize_takes_medians_and_ratios_script_over_cli_and_dag_over_cli() -> None:
    raw = {
        "whole": {
            "script": [_sample(30.0), _sample(33.0), _sample(36.0)],
            "cli": [_sample(20.0, timings={"wall": 20.0, "copy": 5.0}), _sample(22.0, timings=None), _sample(18.0)],
            "dag": [
                _sample(40.0, trigger_to_summary_seconds=24.0, airflow={"before_first_task": 3.0}),
                _sample(41.0, trigger_to_summary_seconds=26.0, airflow={"before_first_task": 5.0}),
                _sample(42.0, trigger_to_summary_seconds=None),
            ],
            "dag_api_up": [
                _sample(30.0, trigger_to_summary_seconds=21.0),
                _sample(31.0, trigger_to_summary_seconds=23.0),
                _sample(35.0, trigger_to_summary_seconds=28.0),
            ],
            "dag_deployed": [_sample(27.0, trigger_to_summary_seconds=27.0)],
        },
        "one_partition": {"script": [_sample(10.0)], "cli": [_sample(12.5)]},
        "airflow_db_migrate_seconds": 9.0,
    }
    summary = whole.summarize(raw, {})
    w, o = summary["whole"], summary["one_partition"]
    assert w["script"]["median_wall_seconds"] == 33.0 and w["cli"]["median_wall_seconds"] == 20.0
    assert w["cli_ratio"] == 1.65  # script s / CLI s: > 1 means the project is faster
    assert w["dag"]["median_trigger_to_summary_seconds"] == 25.0  # the run without a stamp is left out
    assert w["dag_over_cli"] == 1.25 and w["dag_wall_over_cli"] == 2.05
    assert w["cli"]["median_parts"] == {"wall": 20.0, "copy": 5.0, "other": 15.0}
    assert w["dag"]["median_before_first_task_seconds"] == 4.0
    assert math.isnan(w["dag"]["median_between_tasks_seconds"])
    assert w["dag_api_up_over_cli"] == 1.15 and w["dag_api_up_wall_over_cli"] == 1.55
    assert w["dag_api_up"]["median_parts"] == {}  # none of its samples recorded parts
    assert o["ratio"] == 0.8 and "dag_over_cli" not in o and "dag_api_up_over_cli" not in o
    assert w["dag_deployed_over_cli"] == 1.35
    met = runner.targets_met(summary, [whole])
    # the DAG's target is judged on the deployed Airflow, as a user triggers it
    assert met["whole.cli_ratio"]["met"] and met["whole.dag_deployed_over_cli"]["met"] is False
    assert "whole.dag_over_cli" not in met and "whole.dag_api_up_over_cli" not in met
    assert met["one_partition.ratio"]["met"] is False
    lines = whole.table(summary)
    assert any("script/CLI: 1.65x" in line and "1.35x deployed" in line for line in lines)
    assert any("DAG API up trig->summary" in line for line in lines)
    assert any("DAG deployed trig->summary" in line for line in lines)
    assert not any("DAG deployed process" in line for line in lines)


def test_summarize_without_runs_is_empty_and_a_missing_ratio_is_nan() -> None:
    assert whole.summarize({"whole": {"script": []}, "one_partition": {}}, {}) == {}
    partial = report.summarize_kinds({"script": [_sample(3.0)], "cli": []}, 100)
    assert math.isnan(partial["ratio"])


def test_the_notes_say_which_metadata_database_the_deployed_airflow_ran_on() -> None:
    def note(metadata: str | None) -> str:
        return " ".join(whole.notes({"whole": {"deployed_metadata": metadata}}))

    assert "metadata on PostgreSQL, as docker-compose.yaml" in note("postgresql")
    assert "SQLite: a triggered run waits for the next whole second" in note("sqlite")
    assert "SQLite" in note(None)  # results of a version that did not record it ran on SQLite


def test_the_hand_written_script_starts_as_the_bench_launches_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Its --help, launched exactly as scenario 5 launches the script (from the repository, this venv): an
    import the script cannot resolve fails here, not minutes into a bench run."""
    from harness.bench.whole import runs

    command = [*runs.script_command("127.0.0.1:1", "127.0.0.1:2", "t")[:3], "--help"]
    code, _, output = runs.launch(command, tmp_path / "script.log", runs.child_env())
    assert code == 0 and "--topic" in output, output
