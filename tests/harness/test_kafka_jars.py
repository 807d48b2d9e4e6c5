"""harness/kafka/jars: the JVM command the harness runs brokers with (no broker started here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.kafka import jars
from harness.kafka.node import KafkaCluster, new_cluster_id, write_properties
from harness.kafka.security import SaslSsl, ScramUser


def test_the_version_comes_from_the_pom_and_the_jars_live_beside_it_per_version(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(jars.HOME_VARIABLE, raising=False)
    assert jars.kafka_version() == "4.2.1"
    assert jars.jar_dir() == jars.REPO / ".kafka" / "4.2.1" / "jars"
    assert jars.stamp().name == f".fetched-{jars.pom_hash()}"


def test_a_cluster_id_never_starts_with_a_dash() -> None:
    ids = {new_cluster_id() for _ in range(2000)}
    assert len(ids) == 2000
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)


def test_scram_users_with_characters_the_storage_tool_would_cut_are_refused() -> None:
    assert ScramUser("app", "pw+/=").format_argument() == "SCRAM-SHA-512=[name=app,password=pw+/=]"
    with pytest.raises(ValueError, match="may not hold"):
        ScramUser("app", "a,b").format_argument()


def test_server_properties_of_a_sasl_cluster_with_acls(tmp_path: Path) -> None:
    from harness.kafka.certs import make_pki

    security = SaslSsl(make_pki(tmp_path / "pki"), users=(ScramUser("migrator", "m"),), acls=True)
    cluster = KafkaCluster("c", tmp_path / "c", 9092, 9093, new_cluster_id(), security, extra_listeners={"X": 9094})
    tmp_path.joinpath("c").mkdir()
    properties = cluster.server_properties()
    assert properties["listeners"] == "SASL_SSL://127.0.0.1:9092,X://127.0.0.1:9094,CONTROLLER://127.0.0.1:9093"
    assert properties["listener.security.protocol.map"] == "CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,X:SASL_SSL"
    assert properties["super.users"] == "User:admin;User:ANONYMOUS"
    assert security.format_arguments() == [
        "--add-scram",
        "SCRAM-SHA-512=[name=admin,password=admin-secret]",
        "--add-scram",
        "SCRAM-SHA-512=[name=migrator,password=m]",
    ]
    written = write_properties(tmp_path / "p", {"a": "C:\\x"}).read_text()
    assert written == "a=C:\\\\x\n"
