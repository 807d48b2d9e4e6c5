"""One writer per target topic through the real CLI and Spark, and a ledger lost at the end of a run.

The killed holder whose lease is taken over is tests/spark/test_resume.py::test_killed_copy_resumes_...
(a run killed mid-copy, its lease expires, the next run takes it over and resumes exactly).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from harness.data.seed import create_topic
from kafka_migration.exceptions import LedgerUnavailableError
from kafka_migration.ledger import Ledger
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.run.pipeline import run_migration
from kafka_migration.spark.submit import SparkLauncher, SparkSettings
from tests.spark.test_resume import _assert_exact_copy, _cli, _fill
from tests.unit.ledger.test_leases import wait_until_expired

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def test_two_cli_runs_at_the_same_moment_one_copies_the_other_refuses(  # type: ignore[no-untyped-def]
    clusters, unique, tmp_path: Path, ledger_url: str
) -> None:
    topic = f"lease{unique}"
    create_topic(clusters.source, topic, 2)
    _fill(clusters.source, topic, 2, 200, "a")

    processes = [
        subprocess.Popen(
            _cli(clusters, topic, tmp_path / name, ledger_url),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("first", "second")
    ]
    outputs = [p.communicate(timeout=600) for p in processes]
    codes = [p.returncode for p in processes]
    assert sorted(codes) == [0, 2], outputs
    (won,) = [out for out, code in zip(outputs, codes, strict=True) if code == 0]
    (lost,) = [out for out, code in zip(outputs, codes, strict=True) if code == 2]

    ledger = Ledger.open(ledger_url)
    (run,) = ledger.runs()  # the refused run wrote nothing, not even a run row
    assert run.status == "verified" and run.run_id in won[0]
    message = lost[1]
    assert f"target topic {topic} is held by run {run.run_id} (cli process" in message
    assert " since 20" in message and "stops before writing anything" in message
    assert "Traceback" not in message
    _assert_exact_copy(clusters, topic, 2)  # every record exactly once
    assert ledger.leases.active() == []  # released at the end


# PostgreSQL only: the database itself refuses connections (ALLOW_CONNECTIONS false) while the run ends.
@pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True)
def test_ledger_lost_at_the_end_is_never_reported_verified_and_a_rerun_finishes(  # type: ignore[no-untyped-def]
    clusters, unique, tmp_path: Path, ledger_url: str
) -> None:
    topic = f"ledgerlost{unique}"
    create_topic(clusters.source, topic, 2)
    _fill(clusters.source, topic, 2, 200, "a")
    url = make_url(ledger_url)
    admin = psycopg.connect(host=url.host, port=url.port or 5432, user=url.username, dbname="postgres", autocommit=True)

    def ledger_reachable(yes: bool) -> None:
        admin.execute(f'ALTER DATABASE "{url.database}" ALLOW_CONNECTIONS {str(yes).lower()}')
        if not yes:  # and drop the connections the run holds
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (url.database,))

    def run(on_line=None, lease_ttl=None):  # type: ignore[no-untyped-def]
        return run_migration(
            ClusterConfig("source", {"bootstrap.servers": clusters.source}),
            ClusterConfig("target", {"bootstrap.servers": clusters.target}),
            MigrationOptions(include=topic),
            tmp_path,
            Ledger.open(ledger_url),
            launch=SparkLauncher(SparkSettings(master="local[2]"), on_line),
            lease_ttl=lease_ttl,
        )

    def lose_ledger_when_verified(line: str) -> None:
        # The verify application logs each topic it finished; then only writing its results file remains.
        if "kafka_migration.spark: verify " in line and "(1 of 1 topic done)" in line:
            ledger_reachable(False)

    try:
        with pytest.raises(LedgerUnavailableError) as lost:
            # a 10 s lease outlives the few seconds the ledger is down before the run ends
            run(on_line=lose_ledger_when_verified, lease_ttl=10)
    finally:
        ledger_reachable(True)
        admin.close()
    message = str(lost.value)
    assert "copied and verified in Spark, but its evidence could not be stored in the ledger" in message
    assert "NOT reported verified and no checkpoint moved" in message and "Run the same command again" in message
    ledger = Ledger.open(ledger_url)
    (first,) = ledger.runs()
    assert first.status == "running"  # never "verified" without the evidence
    assert ledger.checkpoints(*_cluster_ids(ledger, first.run_id)) == {}

    # The lost ledger could not release the lease either: it expires after its time to live (10 s here).
    wait_until_expired(ledger, first.run_id)
    outcome = run()  # the rerun resumes the same partitions, copies nothing twice and records the evidence
    assert outcome.verified
    assert any(f"took over the lease on target topic {topic}" in w for w in outcome.plan.warnings)
    copied = outcome.copy[topic]
    assert copied.records == 0 and sum(p["resumed_records"] for p in copied.partitions) == 200
    _assert_exact_copy(clusters, topic, 2)
    assert [r.status for r in ledger.runs()] == ["verified", "running"]
    assert len(ledger.checkpoints(*_cluster_ids(ledger, first.run_id))) == 2


def _cluster_ids(ledger: Ledger, run_id: str) -> tuple[str, str]:
    run = ledger.run(run_id)
    assert run is not None
    return run.source_cluster_id, run.target_cluster_id
