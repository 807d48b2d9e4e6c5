"""Inside Airflow: a run's events become the summary's OperatorLineage (the provider sends them, once), other
events go through the provider's client, and a verified run's target topics become asset events."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from openlineage.client.serde import Serde

from kafka_migration.airflow.lineage import LINEAGE, TASK, ProviderSink, run_lineage, verified_assets
from kafka_migration.ledger import Ledger
from kafka_migration.lineage.events import group_sync_events
from kafka_migration.model.results import MISMATCH
from kafka_migration.run.evidence import RunEvidence, close_run
from tests.unit.ledger.test_ledger import outcomes, plan
from tests.unit.lineage.test_events import _sync


@pytest.fixture
def routed() -> Iterator[ProviderSink]:
    TASK.runs.clear()
    yield TASK
    TASK.runs.clear()


def _close(tmp_path: Path, match: dict[int, bool]) -> Path:
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    p = plan("kafka_migration__manual__1", 0, 100, 0)
    ledger.start_run(p, trigger="airflow", dag_id="kafka_migration", dag_run_id="manual__1")
    copy, verify = outcomes(p, match)
    if not all(match.values()):
        verify = replace(verify, status=MISMATCH)
    ledger.record_topics(p, [(p.topics[0], copy, verify, None)])
    evidence = RunEvidence(p, {"orders": copy}, {"orders": verify})
    return close_run(ledger, evidence, None, tmp_path / "reports", LINEAGE).json  # as the summary task passes it


def test_the_summary_reports_the_run_as_its_operator_lineage(tmp_path: Path, routed: ProviderSink) -> None:
    report_path = _close(tmp_path, {0: True, 1: True})
    lineage = run_lineage()
    assert [(d.namespace, d.name) for d in lineage.inputs] == [("kafka://s:9092", "orders")]
    assert [(d.namespace, d.name) for d in lineage.outputs] == [("kafka://t:9092", "copy.orders")]
    facet = json.loads(Serde.to_json(lineage.run_facets["kafkaMigration"]))
    report = json.loads(report_path.read_bytes())
    assert facet["runId"] == report["run"]["run_id"] and facet["verdict"] == "VERIFIED"
    ((uri, extra),) = verified_assets(report_path)
    assert uri == "kafka://t:9092/copy.orders"
    assert extra["run_id"] == "kafka_migration__manual__1" and extra["report_sha256"] == facet["reportSha256"]
    assert extra["records_verified"] == report["topics"][0]["records_verified"] == 200


def test_a_run_with_differences_has_no_asset_event(tmp_path: Path, routed: ProviderSink) -> None:
    report_path = _close(tmp_path, {0: True, 1: False})
    assert verified_assets(report_path) == []
    assert "errorMessage" in run_lineage().run_facets


def test_nothing_recorded_is_an_empty_lineage(routed: ProviderSink) -> None:
    lineage = run_lineage()
    assert (lineage.inputs, lineage.outputs, lineage.run_facets) == ([], [], {})


def test_other_events_go_to_the_provider_only_when_it_is_enabled(routed: ProviderSink, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from airflow.providers.openlineage import conf
    from airflow.providers.openlineage.plugins.listener import get_openlineage_listener

    sent = []
    monkeypatch.setattr(get_openlineage_listener().adapter, "emit", sent.append)
    events = group_sync_events(_sync("synced"), "s:1", "t:2", "2026-11-27T10:00:00+00:00")
    monkeypatch.setattr(conf, "is_disabled", lambda: True)
    for event in events:
        routed.send(event)
    assert sent == [] and routed.runs.events == []
    monkeypatch.setattr(conf, "is_disabled", lambda: False)
    for event in events:
        routed.send(event)
    assert sent == events and routed.runs.events == []


def test_the_dag_closes_its_run_with_the_summary_operator() -> None:
    from airflow.dag_processing.dagbag import DagBag

    from kafka_migration.airflow.operators import MigrationSummaryOperator

    bag = DagBag(dag_folder=str(Path(__file__).resolve().parents[3] / "dags"))
    assert not bag.import_errors
    for dag_id in ("kafka_migration", "kafka_nightly_sync", "kafka_cutover", "kafka_failback"):
        summary = bag.dags[dag_id].get_task("summary")
        assert isinstance(summary, MigrationSummaryOperator)
        assert [o.name for o in summary.outlets] == ["kafka_migration.verified_topics"]
        assert summary.trigger_rule == "all_done"


def test_the_provider_stays_off_without_configuration(tmp_path: Path) -> None:
    """Installed but not configured, the OpenLineage provider registers no listener: the DAG tests and a
    deployment without lineage pay nothing for it (a fresh process: the provider caches its decision)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "AIRFLOW__OPENLINEAGE"))}
    code = (
        "from airflow.providers.openlineage import conf\n"
        "from airflow.providers.openlineage.plugins.openlineage import OpenLineageProviderPlugin as P\n"
        "print(conf.is_disabled(), len(P.listeners))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, check=True
    )
    assert run.stdout.split() == ["True", "0"]
    configured = {**env, "AIRFLOW__OPENLINEAGE__TRANSPORT": '{"type": "console"}'}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=configured, cwd=tmp_path, check=True
    )
    assert run.stdout.split() == ["False", "1"]


def test_the_provider_takes_the_summarys_lineage_through_its_default_extractor(tmp_path: Path, routed) -> None:  # type: ignore[no-untyped-def]
    from airflow.providers.openlineage.extractors.base import DefaultExtractor
    from airflow.providers.openlineage.extractors.manager import ExtractorManager

    from kafka_migration.airflow.operators import MigrationSummaryOperator

    summary = MigrationSummaryOperator(task_id="summary")
    assert ExtractorManager().get_extractor_class(summary) is DefaultExtractor
    _close(tmp_path, {0: True, 1: False})
    for lineage in (
        DefaultExtractor(summary).extract_on_complete(None),
        DefaultExtractor(summary).extract_on_failure(None),
    ):
        assert [d.name for d in lineage.outputs] == ["copy.orders"]
        assert set(lineage.run_facets) == {"kafkaMigration", "errorMessage"}
