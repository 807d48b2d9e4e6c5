"""harness.servers.postgres: the fresh databases that the ledger tests, the compose test and the benchmark's
deployed Airflow run on, on a throwaway server the harness starts itself (or the one named)."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import psycopg
import pytest
from sqlalchemy.engine import make_url

from harness.bench import whole
from harness.servers.ports import free_port
from harness.servers.postgres import (
    ADMIN_URL_VARIABLE,
    admin_connect,
    database_url,
    ensure_server,
    start_server,
    temporary_databases,
)
from tests.conftest import postgres_databases
from tests.leaks import leaked

pytestmark = pytest.mark.integration


def _exists(name: str) -> bool:
    with admin_connect() as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None


@pytest.fixture(autouse=True)
def _server() -> Iterator[None]:
    with postgres_databases():  # none: only that the server answers (else a skip, a failure in CI)
        yield


def test_each_prefix_gets_an_empty_database_that_is_dropped_with_its_connections_open() -> None:
    with temporary_databases("km_harness_a", "km_harness_b") as (first, second):
        assert first.startswith("km_harness_a_") and second.startswith("km_harness_b_")
        assert _exists(first) and _exists(second)
        held = psycopg.connect(database_url(first).replace("postgresql+psycopg", "postgresql"))
        assert held.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone() == (0,)
    assert not _exists(first) and not _exists(second)  # dropped although `held` was still open
    held.close()


def test_a_database_url_keeps_the_driver_of_the_url_it_stands_in_for() -> None:
    password = "Planted/pw+4711"
    like = f"postgresql+psycopg://airflow:{quote(password, safe='')}@postgres:5432/airflow?connect_timeout=3"
    url = database_url("km_x", like=like)
    port = make_url(ensure_server()).port
    assert url.startswith(f"postgresql+psycopg://postgres@127.0.0.1:{port}/km_x")
    assert leaked(password, url) == [] and url.endswith("connect_timeout=3")


def test_the_deployed_airflow_of_the_bench_gets_a_database_of_its_own() -> None:
    with whole.deployed_metadata() as url:
        assert url is not None and url.startswith("postgresql+psycopg://")
        name = url.rsplit("/", 1)[1]
        assert name.startswith("km_bench_airflow_") and _exists(name)
    assert not _exists(name)


def test_without_a_server_the_deployed_airflow_of_the_bench_runs_on_sqlite(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ADMIN_URL_VARIABLE, f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/postgres")
    with whole.deployed_metadata() as url:
        assert url is None
    assert "PostgreSQL not reachable" in capsys.readouterr().out


def test_a_throwaway_server_starts_from_the_binaries_and_leaves_nothing_behind() -> None:
    """What `make test` does on a fresh machine where no server runs: initdb and pg_ctl in a folder of its own."""
    server = start_server()
    try:
        with psycopg.connect(host="127.0.0.1", port=server.port, user="postgres", dbname="postgres") as conn:
            assert conn.execute("SHOW fsync").fetchone() == ("off",)
    finally:
        server.stop()
    assert not server.directory.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(host="127.0.0.1", port=server.port, user="postgres", dbname="postgres", connect_timeout=2)
