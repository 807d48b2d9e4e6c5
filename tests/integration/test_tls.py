"""TLS and mutual TLS to the brokers: Apache Kafka's own SSL listeners (harness/kafka/tls.py).

The source listener checks nothing of the client (server verification only, CA by path); the
target listener requires a client certificate signed by the test CA (``ssl.client.auth=required``:
mutual TLS, everything inline as PEM, the key encrypted with ``ssl.key.password``). A wrong CA,
an expired broker certificate (a second listener of the source broker presents one) and a
missing client certificate each stop the run with exit 2 before anything is written, naming
the cluster and the cause. The full migration over mutual TLS (Spark included) is in
tests/e2e/test_secrets.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.kafka.tls import TlsClusters, seed_topic, tls_clusters, topic_names

pytestmark = pytest.mark.integration

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsClusters]:
    with tls_clusters(tmp_path_factory.mktemp("tls")) as clusters:
        yield clusters


def _run(
    source: dict[str, object], target: dict[str, object], tmp_path: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "source.json").write_text(json.dumps(source))
    (tmp_path / "target.json").write_text(json.dumps(target))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    return subprocess.run(
        [
            KAFKA_MIGRATE,
            "run",
            "--source-config",
            str(tmp_path / "source.json"),
            "--target-config",
            str(tmp_path / "target.json"),
            "--state-dir",
            str(tmp_path / "state"),
            "--master",
            "local[2]",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )


def test_cli_plans_over_tls_and_mutual_tls(tls: TlsClusters, tmp_path: Path, unique: str) -> None:
    """Both connections work: server verification only (CA by path) and mutual TLS (inline, encrypted key).

    A dry run plans against both clusters without Spark; the full migration over mutual TLS is
    the one in tests/e2e/test_secrets.py, which also searches it for leaked secrets.
    """
    topic = f"tls{unique}.orders"
    source, target = tls.source_settings(inline=False), tls.target_settings(inline=True)
    assert "ssl.ca.location" in source and "ssl.certificate.location" not in source  # server verification only
    assert {"ssl.ca.pem", "ssl.certificate.pem", "ssl.key.pem", "ssl.key.password"} <= set(target)
    assert "ENCRYPTED PRIVATE KEY" in target["ssl.key.pem"]
    seed_topic(source, topic, partitions=3, records=30)
    assert tls.target.server_properties()["ssl.client.auth"] == "required"  # the target's only listener

    result = _run(source, target, tmp_path, "--include", f"tls{unique}\\..*", "--dry-run")

    assert result.returncode == 0, result.stdout + result.stderr
    assert topic in result.stdout and "Dry run: nothing was created or copied." in result.stdout
    assert topic not in topic_names(target)


@pytest.mark.parametrize(
    ("case", "cluster", "cause"),
    [
        ("wrong CA", "source", "not signed by a trusted CA"),
        ("expired certificate", "source", "certificate has expired"),
        ("no client certificate", "target", "requires a client certificate (mutual TLS)"),
    ],
)
def test_tls_failures_stop_before_anything_is_written(
    tls: TlsClusters, tmp_path: Path, unique: str, case: str, cluster: str, cause: str
) -> None:
    topic = f"tlsbad{unique}.t"
    source, target = tls.source_settings(), tls.target_settings()
    seed_topic(source, topic, partitions=1, records=10)
    if case == "wrong CA":
        source["ssl.ca.location"] = str(tls.pki.wrong_ca)
    elif case == "expired certificate":
        source["bootstrap.servers"] = tls.expired_source_address
    else:
        for key in ("ssl.certificate.pem", "ssl.key.pem", "ssl.key.password"):
            target.pop(key)
    result = _run(source, target, tmp_path, "--include", f"tlsbad{unique}\\..*")

    assert result.returncode == 2, result.stdout + result.stderr
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith(f"error: Cannot connect to the {cluster} cluster at "), error
    assert cause in error and "Nothing was written" in error
    assert topic not in topic_names(tls.target_settings())
    assert not (tmp_path / "state" / "runs").exists() or not any((tmp_path / "state" / "runs").iterdir())
