"""Shared fixtures: two embedded Kafka-protocol brokers (source and target clusters).

The brokers are real Tansu processes (see ../shared/notes/embedded-kafka.md), one
pair per test session; every test names its own topics so tests do not interfere.
Set KAFKA_MIGRATION_TEST_SOURCE / _TARGET to bootstrap addresses to use clusters
you already run instead.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

from harness.embedded import embedded_clusters


def pytest_configure(config: pytest.Config) -> None:
    """One isolated Airflow home for the whole session, set before anything imports airflow.

    Airflow reads AIRFLOW_HOME (and opens its metadata DB settings) at import time; a test
    module that imports it during collection would otherwise bind to ~/airflow.
    """
    import tempfile

    home = Path(tempfile.mkdtemp(prefix="kafka-migration-airflow-"))
    repo = Path(__file__).resolve().parents[1]
    os.environ["AIRFLOW_HOME"] = str(home)
    os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(repo / "dags")
    os.environ["AIRFLOW__CORE__PLUGINS_FOLDER"] = str(repo / "plugins")
    os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
    os.environ["KAFKA_MIGRATION_STATE_DIR"] = str(home / "kafka-migration")


class Clusters:
    def __init__(self, source: str, target: str) -> None:
        self.source = source
        self.target = target


@pytest.fixture(scope="session")
def clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clusters]:
    source = os.environ.get("KAFKA_MIGRATION_TEST_SOURCE")
    target = os.environ.get("KAFKA_MIGRATION_TEST_TARGET")
    if source and target:
        yield Clusters(source, target)
        return
    log_dir: Path = tmp_path_factory.mktemp("brokers")
    with embedded_clusters("test-source", "test-target", log_dir=log_dir) as started:
        src, tgt = started
        yield Clusters(src.bootstrap, tgt.bootstrap)


@pytest.fixture
def unique() -> str:
    """A short suffix that makes topic names unique to one test."""
    return uuid.uuid4().hex[:8]


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty ledger database on each backend: SQLite file, and a new PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'ledger.db'}"
        return
    from harness.postgres import database_url

    with postgres_databases("km_test") as (name,):
        yield database_url(name)


IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")  # .ci/run sets CI=1: every test must run


def missing(reason: str) -> NoReturn:
    """Something a test needs is not here (a tool, a module, a server, a git checkout): a failure under CI,
    which must run every test, and a skip elsewhere. Every skip of the suite goes through here (ruff's TID251
    refuses pytest's own skips in tests/)."""
    __tracebackhide__ = True  # the skip and the failure point at the caller's line
    if IN_CI:
        pytest.fail(f"{reason} (a failure, not a skip: CI is set)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)  # noqa: TID251 (the one skip)


def require_module(name: str) -> ModuleType:
    """``pytest.importorskip`` under the rule of ``missing``: the module, else a skip, or a failure under CI."""
    __tracebackhide__ = True
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"cannot import {name} ({exc}); make venv installs the project's requirements")


@contextlib.contextmanager
def postgres_databases(*prefixes: str) -> Iterator[list[str]]:
    """Fresh PostgreSQL databases for a test (harness.postgres); no server answering is ``missing``."""
    from harness.postgres import admin_url, optional_databases

    with optional_databases(*prefixes, required=IN_CI) as names:
        if names is None:
            missing(f"PostgreSQL not reachable at {admin_url()}")
        yield names


@pytest.fixture(scope="session")
def executor_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packed executor environment, built once per session by ``kafka-migrate package-env`` itself."""
    import subprocess
    import sys

    archive = tmp_path_factory.mktemp("executor-env") / "executor-env.tar.gz"
    done = subprocess.run(
        [str(Path(sys.executable).parent / "kafka-migrate"), "package-env", "--output", str(archive)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"package-env failed:\n{done.stdout}\n{done.stderr}"
    return archive


@pytest.fixture(scope="session")
def spark_standalone(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A real Spark standalone cluster on 127.0.0.1: a master and two workers of one core each
    (harness/spark_cluster.py). Started only by the few tests that ask for it; stopped by process id."""
    from harness.spark_cluster import standalone_cluster

    with standalone_cluster(tmp_path_factory.mktemp("spark-standalone"), workers=2, cores=1) as cluster:
        yield cluster
