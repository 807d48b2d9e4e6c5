"""kafka/kafka_python.py: the product's librdkafka settings as kafka-python's arguments, the TLS context built from
the same files or inline PEM, refusals that name a setting (never its value), and no secret in kafka-python's log.
No broker: what these build is used against real ones in tests/integration/test_access_quotas.py."""

from __future__ import annotations

import logging
import ssl
from pathlib import Path

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.kafka.kafka_python import KafkaPythonClient, kafka_python_settings
from kafka_migration.kafka.tls import tls_context
from kafka_migration.model.config import ClusterConfig

SECRET = "s3cret-value"


def config(**settings: object) -> ClusterConfig:
    return ClusterConfig("target", {"bootstrap.servers": "SASL_SSL://h1:9093, h2:9094", **settings})


def test_sasl_scram_settings_become_kafka_python_arguments() -> None:
    found = kafka_python_settings(
        config(
            **{
                "security.protocol": "sasl_ssl",
                "sasl.mechanisms": "scram-sha-512",
                "sasl.username": "u",
                "sasl.password": SECRET,
                "client.id": "me",
                "socket.keepalive.enable": True,
            }
        ),
        timeout=7,
    )
    assert found == {
        "bootstrap_servers": ["h1:9093", "h2:9094"],
        "client_id": "me",
        "security_protocol": "SASL_SSL",
        "request_timeout_ms": 7000,
        "bootstrap_timeout_ms": 7000,
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "u",
        "sasl_plain_password": SECRET,
    }
    plain = kafka_python_settings(ClusterConfig("source", {"bootstrap.servers": "h:9092"}), timeout=1)
    assert plain["security_protocol"] == "PLAINTEXT" and "sasl_mechanism" not in plain


def test_bootstrap_addresses_reach_kafka_python_as_it_reads_them() -> None:
    from kafka.cluster import collect_hosts

    found = kafka_python_settings(ClusterConfig("source", {"bootstrap.servers": "[::1],SSL://h:9093,g"}), timeout=1)
    assert found["bootstrap_servers"] == ["[::1]:9092", "h:9093", "g:9092"]  # model/bootstrap's parse, written back
    assert [(host, port) for host, port, _ in collect_hosts(found["bootstrap_servers"], randomize=False)] == [
        ("::1", 9092),
        ("h", 9093),
        ("g", 9092),
    ]


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("sasl.oauthbearer.client.secret", SECRET),
        ("ssl.keystore.location", "/keys/client.p12"),
        ("sasl.kerberos.keytab", "/etc/krb5.keytab"),
    ],
)
def test_settings_kafka_python_cannot_honour_are_refused_by_name(setting: str, value: str) -> None:
    with pytest.raises(ConfigurationError, match=f"setting {setting} cannot be used") as refused:
        kafka_python_settings(config(**{"security.protocol": "SASL_SSL", setting: value}), timeout=1)
    assert value not in str(refused.value)
    with pytest.raises(ConfigurationError, match=r"sasl\.mechanism.*'OAUTHBEARER' is not one of"):
        kafka_python_settings(config(**{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}), timeout=1)


def test_the_tls_context_trusts_the_ca_from_a_file_or_inline_and_presents_the_client_identity(
    test_pki,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    by_file, presented = tls_context(
        {
            "ssl.ca.location": str(test_pki.ca),
            "ssl.certificate.location": str(test_pki.client.cert),
            "ssl.key.location": str(test_pki.client.key),
            "ssl.key.password": test_pki.client_key_password,
        },
        tmp_path,
    )
    assert presented and by_file.check_hostname and by_file.verify_mode == ssl.CERT_REQUIRED
    assert len(by_file.get_ca_certs()) == 1
    inline, presented = tls_context(
        {
            "ssl.ca.pem": test_pki.ca_pem,
            "ssl.certificate.pem": test_pki.client.cert_pem,
            "ssl.key.pem": test_pki.client.key_pem,
            "ssl.key.password": test_pki.client_key_password,
            "ssl.endpoint.identification.algorithm": "none",
        },
        tmp_path,
    )
    assert presented and len(inline.get_ca_certs()) == 1 and not inline.check_hostname
    assert all(written.stat().st_mode & 0o077 == 0 for written in tmp_path.iterdir())  # the key: its owner's only
    identity = {"ssl.certificate.pem": test_pki.client.cert_pem, "ssl.key.pem": test_pki.client.key_pem}
    _, presented = tls_context(identity)
    assert not presented  # no scratch directory (the handshake probe's case): an inline identity is not presented
    with pytest.raises(ConfigurationError, match="mutual TLS needs both"):
        tls_context({"ssl.certificate.location": str(test_pki.client.cert)}, tmp_path)
    half = config(**{"security.protocol": "SSL", "ssl.certificate.location": str(test_pki.client.cert)})
    with pytest.raises(ConfigurationError, match="The target cluster has a client certificate but no client key"):
        KafkaPythonClient(half)._arguments()  # checked as librdkafka's clients are (check_tls_settings)
    (tmp_path / "not-a-ca.pem").write_text("not a certificate")
    wrong = KafkaPythonClient(config(**{"security.protocol": "SSL", "ssl.ca.location": str(tmp_path / "not-a-ca.pem")}))
    with pytest.raises(ConfigurationError, match="TLS settings cannot be loaded"):
        wrong._arguments()


def test_kafka_pythons_log_of_its_configuration_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    from kafka_migration.kafka.kafka_python import _quiet_configuration_log

    _quiet_configuration_log()
    with caplog.at_level(logging.DEBUG, logger="kafka"):
        logging.getLogger("kafka.admin.client").debug(
            "Starting KafkaAdminClient with configuration: %s", {"sasl_plain_password": SECRET}
        )
        logging.getLogger("kafka.admin.client").debug("KafkaAdminClient started.")
    assert SECRET not in caplog.text and "KafkaAdminClient started." in caplog.text
