"""TLS settings checked before the first connection (kafka_migration/kafka/tls.py); never a value in a message.

The handshake probe (diagnose_tls) needs a TLS server: it is exercised against real TLS
proxies in tests/integration/test_tls.py.
"""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.kafka.tls import check_tls_settings, diagnose_tls, uses_tls
from tests.leaks import leaked

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nsecret-key-body\n-----END ENCRYPTED PRIVATE KEY-----\n"


@pytest.fixture
def ca_file(tmp_path: Path) -> Path:
    path = tmp_path / "ca.pem"
    path.write_text(PEM)
    return path


def _refusal(settings: dict[str, str]) -> str | None:
    """The check's refusal of the settings, None when it accepts them."""
    try:
        check_tls_settings("source", settings)
    except ConfigurationError as exc:
        return str(exc)
    return None


def test_inline_and_path_material_accepted(ca_file: Path) -> None:
    """Each form is accepted, and the same form one detail off is refused: the check read what it accepted."""
    accepted_and_near_miss = [
        (
            {"ssl.ca.pem": PEM, "ssl.certificate.pem": PEM, "ssl.key.pem": KEY},
            {"ssl.ca.pem": PEM, "ssl.certificate.pem": PEM, "ssl.key.pem": "secret-key-body"},  # not PEM text
        ),
        ({"ssl.ca.location": str(ca_file)}, {"ssl.ca.location": f"{ca_file}.gone"}),  # a file that does not exist
        ({"ssl.ca.location": "probe"}, {"ssl.ca.location": "probes"}),  # librdkafka: look for the system's CA store
        ({}, {"ssl.certificate.pem": PEM}),  # no TLS material at all; a client certificate without its key
    ]
    assert [_refusal(accepted) for accepted, _ in accepted_and_near_miss] == [None] * 4
    refusals = [_refusal(near_miss) for _, near_miss in accepted_and_near_miss]
    assert all(refusals) and leaked("secret-key-body", " ".join(map(str, refusals))) == []


def test_both_forms_of_one_piece_rejected(ca_file: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"target cluster sets both ssl\.ca\.pem and ssl\.ca\.location"):
        check_tls_settings("target", {"ssl.ca.pem": PEM, "ssl.ca.location": str(ca_file)})


def test_inline_pem_that_is_a_path_points_to_the_location_setting() -> None:
    with pytest.raises(ConfigurationError) as info:
        check_tls_settings("source", {"ssl.key.pem": "/etc/secret/client-key-value.pem"})
    message = str(info.value)
    assert "ssl.key.pem of the source cluster does not hold PEM text" in message
    assert "ssl.key.location" in message
    assert leaked("client-key-value", message) == []  # the value (possibly a secret) is never quoted


def test_missing_file_names_the_setting_and_the_inline_alternative(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as info:
        check_tls_settings("target", {"ssl.ca.location": str(tmp_path / "absent.pem")})
    message = str(info.value)
    assert "ssl.ca.location of the target cluster" in message and "does not exist on this machine" in message
    assert "every executor" in message and "ssl.ca.pem" in message


@pytest.mark.parametrize(
    ("settings", "missing"),
    [({"ssl.certificate.pem": PEM}, "no client key"), ({"ssl.key.pem": KEY}, "no client certificate")],
)
def test_half_a_client_identity_rejected(settings: dict[str, str], missing: str) -> None:
    with pytest.raises(ConfigurationError, match=f"source cluster has a client .* but {missing}"):
        check_tls_settings("source", settings)


@pytest.mark.parametrize(
    ("protocol", "tls"), [("SSL", True), ("sasl_ssl", True), ("PLAINTEXT", False), ("SASL_PLAINTEXT", False)]
)
def test_uses_tls(protocol: str, tls: bool) -> None:
    assert uses_tls({"security.protocol": protocol}) is tls


def test_probe_gives_no_verdict_without_tls_or_a_listener() -> None:
    assert diagnose_tls({"bootstrap.servers": "127.0.0.1:1"}) is None
    assert diagnose_tls({"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SSL"}, timeout=1) is None


def test_a_path_missing_on_an_executor_fails_its_reads_and_writes_clearly(tmp_path: Path) -> None:
    from kafka_migration.kafka.reader import read_range
    from kafka_migration.model.config import ClusterPair
    from kafka_migration.run.copy import _producer

    settings = {"bootstrap.servers": "b:9093", "security.protocol": "SSL", "ssl.ca.location": str(tmp_path / "x")}
    clusters = ClusterPair.of_settings(settings, settings)
    with pytest.raises(ConfigurationError, match=r"ssl\.ca\.location of the source cluster .* every executor"):
        next(read_range(clusters.source, "t", 0, 0, 10))
    with pytest.raises(ConfigurationError, match=r"ssl\.ca\.location of the target cluster"):
        _producer(clusters.target, 1024)


def _ssl_error(reason: str) -> ssl.SSLError:
    error = ssl.SSLError(1, f"[SSL: {reason}] alert")
    error.reason = reason
    return error


@pytest.mark.parametrize(
    ("reason", "identity", "cause"),
    [
        # A broker with ssl.client.auth=required answers a client without certificate with an alert:
        # Apache Kafka's Java TLS sends bad_certificate (measured on 4.2.1), OpenSSL servers the other two
        ("SSLV3_ALERT_BAD_CERTIFICATE", False, "requires a client certificate"),
        ("TLSV13_ALERT_CERTIFICATE_REQUIRED", False, "requires a client certificate"),
        ("SSLV3_ALERT_HANDSHAKE_FAILURE", False, "requires a client certificate"),  # TLS 1.2
        ("SSLV3_ALERT_BAD_CERTIFICATE", True, "rejected the client certificate"),
        ("SSLV3_ALERT_CERTIFICATE_EXPIRED", True, "rejected the client certificate"),
        ("TLSV1_ALERT_UNKNOWN_CA", True, "rejected the client certificate"),
        ("WRONG_VERSION_NUMBER", False, "TLS handshake failed (wrong version number)"),
    ],
)
def test_broker_alerts_are_named(reason: str, identity: bool, cause: str) -> None:
    from kafka_migration.kafka.tls import _rejected

    settings = {"ssl.certificate.pem": PEM} if identity else {}
    assert cause in _rejected(_ssl_error(reason), False, settings)


@pytest.mark.parametrize(
    ("code", "cause"),
    [
        (10, "has expired"),
        (9, "not valid yet"),
        (20, "not signed by a trusted CA"),
        (62, "does not name kafka-1"),
        (50, "was rejected"),
    ],
)
def test_certificate_verification_failures_are_named(code: int, cause: str) -> None:
    from kafka_migration.kafka.tls import _verify_cause

    error = ssl.SSLCertVerificationError(1, "certificate verify failed")
    error.verify_code, error.verify_message = code, "openssl says"
    assert cause in _verify_cause(error, "kafka-1")


def test_wrong_key_password_fails_before_connecting_without_quoting_it(tmp_path: Path) -> None:
    from harness.kafka.certs import make_pki
    from kafka_migration.kafka.clients import KafkaCluster
    from kafka_migration.model.config import ClusterConfig

    pki = make_pki(tmp_path, client_key_password="the-right-one")
    settings = {
        "bootstrap.servers": "127.0.0.1:1",
        "security.protocol": "SSL",
        "ssl.ca.pem": pki.ca_pem,
        "ssl.certificate.pem": pki.client.cert_pem,
        "ssl.key.pem": pki.client.key_pem,
        "ssl.key.password": "Wrong-Pass-4711",
    }
    with pytest.raises(ConfigurationError) as info:
        KafkaCluster(ClusterConfig("target", settings)).describe()
    message = str(info.value)
    assert message.startswith("The target cluster settings are refused by librdkafka: ")
    assert "ssl.key.password" in message
    assert leaked("Wrong-Pass-4711", message) == [] and "ENCRYPTED" not in message
