"""Report accuracy (issue 12): per-topic time is the topic's own task time, shared Spark jobs are marked, and
the run's wall time and its parts are kept in the ledger (both backends) and shown in the report."""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from kafka_migration.ledger import Ledger
from kafka_migration.ledger.store import MIGRATIONS
from kafka_migration.ledger.urls import check_ledger_url
from kafka_migration.model.plan import MigrationPlan, PartitionPlan, TopicPlan
from kafka_migration.model.results import OK, StepResults, TopicOutcome
from kafka_migration.model.timings import RunTimings
from kafka_migration.reports.signoff import build_report, generate_report, render_html, render_markdown, verify_report
from kafka_migration.reports.summary import render_table, results_timings, summarize, timings_line
from kafka_migration.run.evidence import RunEvidence, record_run
from kafka_migration.run.pipeline import RunOutcome
from tests.conftest import require_module
from tests.unit.ledger.test_ledger import SOURCE, TARGET

TIMINGS = RunTimings(wall=8.2, plan=0.8, startup=0.4, copy=5.1, verify=5.3, overlap=4.0, bookkeeping=0.6)


def shared_plan(run_id: str = "run-shared", shared: bool = True) -> MigrationPlan:
    """A big topic (2 partitions) and a small one (1 partition), planned into one Spark job (else one each)."""
    big = TopicPlan(
        "big",
        "big",
        (PartitionPlan(0, 0, 1000, 0, 0, 1000), PartitionPlan(1, 0, 1000, 0, 0, 1000)),
        3,
        {},
        {},
        create=True,
    )
    jobs = (("big", "small"),) if shared else (("big",), ("small",))
    small = TopicPlan("small", "small", (PartitionPlan(0, 0, 1, 0, 0, 1),), 3, {}, {}, create=True)
    return MigrationPlan(run_id, "now", SOURCE, TARGET, {"include": ".*"}, (big, small), {}, jobs)


def step_outcomes(plan: MigrationPlan, job_topics: int = 2) -> tuple[dict[str, TopicOutcome], dict[str, TopicOutcome]]:
    """Copy and verify outcomes as a shared Spark job writes them: ``seconds`` is the job's time for both topics."""
    task = {"big": 4.0, "small": 0.01}
    copy, verify = {}, {}
    for t in plan.topics:
        copy[t.source_topic] = TopicOutcome(
            t.source_topic,
            t.target_topic,
            OK,
            4.2,
            [
                {
                    "partition": p.partition,
                    "records": p.end - p.start,
                    "bytes": 200 * (p.end - p.start),
                    "resumed_records": 0,
                    "seconds": task[t.source_topic],
                    "started": 100.0,
                    "ended": 100.0 + task[t.source_topic],
                }
                for p in t.partitions
            ],
            job_topics=job_topics,
        )
        verify[t.source_topic] = TopicOutcome(
            t.source_topic,
            t.target_topic,
            OK,
            3.0,
            [
                {
                    "partition": p.partition,
                    "match": True,
                    "target_end": p.end,
                    "source_records": p.end - p.start,
                    "target_records": p.end - p.start,
                    "source_checksum": "sha256:a",
                    "target_checksum": "sha256:a",
                    "first_difference": None,
                    "first_source_offset": None,
                    "first_target_offset": None,
                    "seconds": task[t.source_topic] / 2,
                    "started": 102.0,
                    "ended": 102.0 + task[t.source_topic] / 2,
                    "offset_map": [[p.start, p.target_start]],
                }
                for p in t.partitions
            ],
            job_topics=job_topics,
        )
    return copy, verify


def recorded_ledger(url: str, timings: RunTimings | None = TIMINGS, job_topics: int = 2) -> tuple[Ledger, str]:
    ledger = Ledger.open(url)
    p = shared_plan(shared=job_topics > 1)
    ledger.start_run(p, trigger="cli")
    copy, verify = step_outcomes(p, job_topics)
    record_run(ledger, RunEvidence(p, copy, verify), timings, Path(tempfile.mkdtemp(prefix="reports-")))
    assert ledger.run(p.run_id).status == "verified"  # type: ignore[union-attr]
    return ledger, p.run_id


# -- the ledger, on both backends ---------------------------------------------------------------------


def test_timings_and_shared_jobs_round_trip(ledger_url: str) -> None:
    ledger, run_id = recorded_ledger(ledger_url)
    run = ledger.run(run_id)
    assert run is not None and run.timings == TIMINGS and run.wall_seconds == TIMINGS.wall
    assert {(s.source_topic, s.partition): s.job_topics for s in ledger.run_segments(run_id)} == {
        ("big", 0): 2,
        ("big", 1): 2,
        ("small", 0): 2,
    }
    later = RunTimings(wall=12.0, plan=1.0)
    ledger.set_run_timings(run_id, later)
    assert ledger.runs()[0].timings == later
    ledger.set_run_timings(run_id, None)  # nothing measured: what is stored stays
    assert ledger.run(run_id).timings == later  # type: ignore[union-attr]


def test_a_run_without_timings_stores_none(ledger_url: str) -> None:
    ledger, run_id = recorded_ledger(ledger_url, timings=None, job_topics=1)
    run = ledger.run(run_id)
    assert run is not None and run.timings is None and run.wall_seconds is None
    report = build_report(run, ledger.run_segments(run_id))
    assert report["timings"] is None
    assert "No timings were recorded for this run" in render_markdown(report)


def test_upgrade_from_0005_keeps_runs_and_adds_the_columns(ledger_url: str) -> None:
    """A ledger at 0005 (before timings) upgrades in place; its runs report "–" for the time, and 0006
    downgrades cleanly."""
    from alembic import command
    from alembic.config import Config

    engine = create_engine(check_ledger_url(ledger_url))
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0005_cutovers")
    with engine.begin() as connection:
        columns = {c["name"] for c in _columns(connection, "km_runs")}
        assert "timings" not in columns and "plan" in columns
        connection.execute(
            text(
                "INSERT INTO km_runs (run_id, trigger, params, source_cluster_id, source_bootstrap, "
                "target_cluster_id, target_bootstrap, started_at, status, topics, records, warnings) VALUES "
                "('old-run', 'cli', '{}', 'src-cluster', 's:9092', 'tgt-cluster', 't:9092', "
                "'2026-11-20 10:00:00+00:00', 'verified', 0, 0, '[]')"
            )
        )
    engine.dispose()

    ledger = Ledger.open(ledger_url)  # upgrades to head
    old = ledger.run("old-run")
    assert old is not None and old.timings is None
    report = build_report(old, ledger.run_segments("old-run"))
    assert report["timings"] is None and "Where the time went" in render_html(report)

    with ledger.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0005_cutovers")
        assert "timings" not in {c["name"] for c in _columns(connection, "km_runs")}
        assert "job_topics" not in {c["name"] for c in _columns(connection, "km_segments")}
        command.upgrade(config, "head")
    assert ledger.run("old-run").timings is None  # type: ignore[union-attr]
    ledger.engine.dispose()


def _columns(connection, table: str) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    from sqlalchemy import inspect

    return inspect(connection).get_columns(table)


# -- the report ---------------------------------------------------------------------------------------


def test_topics_sharing_a_job_get_their_own_task_time_and_a_mark(tmp_path: Path) -> None:
    ledger, run_id = recorded_ledger(f"sqlite:///{tmp_path / 'ledger.db'}")
    report = build_report(ledger.run(run_id), ledger.run_segments(run_id))
    topics = {t["source_topic"]: t for t in report["topics"]}
    # The sum of each topic's own task seconds, not the job's 4.2 s nor the slowest partition.
    assert topics["big"]["copy_seconds"] == 8.0 and topics["big"]["records_per_second"] == 250.0
    assert topics["small"]["copy_seconds"] == 0.01 and topics["small"]["records_per_second"] == 100.0
    assert topics["big"]["verify_seconds"] == 4.0 and topics["small"]["verify_seconds"] == 0.005
    assert topics["big"]["job_topics"] == topics["small"]["job_topics"] == 2

    markdown = render_markdown(report)
    assert "| `small` | `small` | verified | 1 | 100.0 | 0.0 † |" in markdown
    assert "† shared a Spark job with 1 other topic; time is its own tasks' time" in markdown
    page = render_html(report)
    assert "<sup title='shared a Spark job'>†</sup>" in page
    assert "shared a Spark job with 1 other topic" in page


def test_topics_with_their_own_job_are_not_marked(tmp_path: Path) -> None:
    ledger, run_id = recorded_ledger(f"sqlite:///{tmp_path / 'ledger.db'}", job_topics=1)
    report = build_report(ledger.run(run_id), ledger.run_segments(run_id))
    assert {t["job_topics"] for t in report["topics"]} == {1}
    assert "†" not in render_markdown(report) and "shared a Spark job" not in render_html(report)


def test_older_runs_take_the_shared_job_from_their_plan(tmp_path: Path) -> None:
    ledger, run_id = recorded_ledger(f"sqlite:///{tmp_path / 'ledger.db'}")
    segments = [replace(s, job_topics=None) for s in ledger.run_segments(run_id)]  # recorded before 0006
    report = build_report(ledger.run(run_id), segments)
    assert {t["job_topics"] for t in report["topics"]} == {2}


def test_a_topic_with_no_task_has_no_time() -> None:
    """Only empty partitions: no copy task ran for it, so not the shared job's time either."""
    p = shared_plan()
    copy, verify = step_outcomes(p)
    copy["small"] = TopicOutcome("small", "small", OK, 4.2, [], job_topics=2)
    rows = {r.source_topic: r for r in summarize(p, copy, verify)}
    assert rows["small"].seconds == 0.0


def test_where_the_time_went_in_json_markdown_and_html(tmp_path: Path) -> None:
    ledger, run_id = recorded_ledger(f"sqlite:///{tmp_path / 'ledger.db'}")
    files = generate_report(ledger, run_id, tmp_path / "reports")
    data = json.loads(files.json.read_bytes())
    assert data["timings"] == TIMINGS.to_dict()
    markdown = files.markdown.read_text()
    assert "## Where the time went" in markdown
    assert "Wall time 8.2 s" in markdown
    assert "| plan | 0.8 | 10 % |" in markdown and "| Spark start-up | 0.4 | 5 % |" in markdown
    assert "| verification | 5.3 | 65 % | 4.0 s of it during the copy |" in markdown
    assert "| bookkeeping | 0.6 | 7 % |" in markdown and "| **wall** | **8.2** | 100 % | |" in markdown
    page = files.html.read_text()
    assert "<h2 id='timings'>Where the time went</h2>" in page and "<b>8.2 s</b>" in page
    # The digest mechanism still holds: regenerated from the ledger, byte for byte the recorded report.
    again = generate_report(ledger, run_id, tmp_path / "again")
    assert again.json.read_bytes() == files.json.read_bytes()
    assert verify_report(files.json, ledger.run(run_id).report_sha256)[0]  # type: ignore[union-attr]


def test_cli_report_regenerates_the_timings_from_the_ledger(tmp_path: Path) -> None:
    from kafka_migration.cli import main

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    _, run_id = recorded_ledger(url)
    assert main(["report", run_id, "--ledger", url, "--report-dir", str(tmp_path / "reports")]) == 0
    data = json.loads((tmp_path / "reports" / run_id / "report.json").read_text())
    assert data["timings"]["wall"] == 8.2


def test_history_shows_the_wall_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kafka_migration.cli import main

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    recorded_ledger(url)
    assert main(["history", "--ledger", url]) == 0
    header, _rule, row = capsys.readouterr().out.splitlines()[:3]
    assert "wall s" in header and " 8.2 " in row


# -- terminal table and line ----------------------------------------------------------------------------


def test_timings_line() -> None:
    assert timings_line(TIMINGS) == (
        "Wall 8.2 s: plan 0.8, Spark start-up 0.4, copy 5.1, verification 5.3 (4.0 of it during the copy), "
        "bookkeeping 0.6"
    )
    assert timings_line(RunTimings(wall=2.0, copy=1.0, verify=1.0)).endswith("verification 1.0, bookkeeping 0.0")
    assert timings_line(None) == "Wall time: - (not measured)"
    # Wall time in none of the parts (a second Spark start-up, waits) is shown, not hidden.
    assert timings_line(RunTimings(wall=10.0, plan=1.0, copy=3.0, verify=3.0)).endswith("bookkeeping 0.0, other 3.0")


def test_table_shows_own_task_seconds_and_marks_shared_jobs() -> None:
    p = shared_plan()
    rows = {r.source_topic: r for r in summarize(p, *step_outcomes(p))}
    assert rows["big"].seconds == 12.0 and rows["small"].seconds == 0.0  # 2 x 4.0 copy + 2 x 2.0 verify
    table = render_table(list(rows.values()))
    assert "* shared a Spark job with other topics" in table
    assert "12.0*" in table


# -- the DAG's timings from Airflow's records ---------------------------------------------------------------


def _results(step: str, outcomes: dict[str, TopicOutcome], ready: float | None) -> StepResults:
    return StepResults(step, "run", [0], outcomes, "not a time", 4.2, driver_started=None, ready=ready)


def test_dag_run_timings_from_stamps() -> None:
    copy, verify = step_outcomes(shared_plan())
    timings = results_timings(90.0, 99.0, [_results("copy", copy, 99.5)], [_results("verify", verify, 101.0)], 110.0)
    assert timings == RunTimings(wall=20.0, plan=9.0, startup=0.5, copy=4.0, verify=2.0, overlap=2.0, bookkeeping=6.0)


def test_dag_run_timings_without_stamps_does_not_fail() -> None:
    """Results written before tasks carried started/ended and Spark its ready stamp: parts unknown, not a crash."""
    copy, verify = step_outcomes(shared_plan())
    for outcome in (*copy.values(), *verify.values()):
        for row in outcome.partitions:
            row.pop("started"), row.pop("ended")
    timings = results_timings(90.0, None, [_results("copy", copy, None)], [_results("verify", verify, None)], 95.0)
    assert timings == RunTimings(wall=5.0, plan=0.0, startup=0.0, copy=0.0, verify=0.0, overlap=0.0, bookkeeping=5.0)
    assert timings_line(timings).startswith("Wall 5.0 s")
    # ... but each job's start and length (in every results file) place the steps roughly.
    steps = [StepResults(s, "run", [0], {}, f"1970-01-01T00:01:{40 + 10 * i}+00:00", 4.0) for i, s in enumerate("cv")]
    timings = results_timings(90.0, 95.0, steps[:1], steps[1:], 125.0)
    assert (timings.copy, timings.verify, timings.overlap, timings.bookkeeping) == (4.0, 4.0, 0.0, 11.0)


def _fake_run(tmp_path: Path, timings: RunTimings | None):  # type: ignore[no-untyped-def]
    """run/pipeline.run_migration as the CLI sees it, without clusters or Spark: records the shared-job run."""

    def fake_run(source, target, options, state_dir, ledger, on_plan=None, reports_dir=None, **_kwargs):  # type: ignore[no-untyped-def]
        p = shared_plan()
        ledger.start_run(p, trigger="cli")
        if on_plan is not None:
            on_plan(p)
        copy, verify = step_outcomes(p)
        evidence = RunEvidence(p, copy, verify)
        return RunOutcome(
            evidence, tmp_path / "runs" / p.run_id, timings, record_run(ledger, evidence, timings, reports_dir)
        )

    return fake_run


def _cli_run(tmp_path: Path) -> int:
    from kafka_migration.cli import main

    return main(
        [
            "run",
            "--source", "127.0.0.1:1",
            "--target", "127.0.0.1:2",
            "--include", ".*",
            "--state-dir", str(tmp_path / "state"),
            "--report-dir", str(tmp_path / "reports"),
        ]
    )  # fmt: skip


def test_cli_run_ends_with_the_breakdown(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """`kafka-migrate run` prints where the time went as its last line, and the report has the same figures."""
    from kafka_migration.kafka import reach
    from kafka_migration.run import pipeline

    # No clusters here (the pipeline is faked too): the reach check before Spark passes as for live clusters.
    monkeypatch.setattr(reach, "check_reachable", lambda config, timeout=0: None)
    monkeypatch.setattr(pipeline, "run_migration", _fake_run(tmp_path, TIMINGS))
    code = _cli_run(tmp_path)
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.rstrip().splitlines()[-1] == timings_line(TIMINGS)
    assert "12.0*" in out and "* shared a Spark job with other topics" in out
    data = json.loads((tmp_path / "reports" / "run-shared" / "report.json").read_text())
    assert data["timings"] == TIMINGS.to_dict()


def test_console_api_gives_the_wall_time_and_its_parts(tmp_path: Path) -> None:
    require_module("airflow")
    from fastapi.testclient import TestClient

    from kafka_migration.airflow.webapp import create_app

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    recorded_ledger(url)
    client = TestClient(create_app(lambda: url, lambda: tmp_path / "reports", state_dir=lambda: tmp_path))
    (run,) = client.get("/api/runs").json()["runs"]
    assert run["timings"]["wall"] == 8.2 and run["duration_seconds"] == 8.2
    assert run["timings"]["plan"] == 0.8
