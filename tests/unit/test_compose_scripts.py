"""The scripts docker-compose.yaml mounts into its one-shot services, run here as they are.

make-certs.sh runs with this machine's keytool (the kafka-certs service runs it with the
apache/kafka image's), and a TLS client that trusts only the ca.pem it wrote must accept a
server presenting the keystore it wrote, under the name kafka-source. create-ledger-db.sh
runs against a throwaway PostgreSQL server (harness/servers/postgres.py). format-source.sh, the
brokers, their health checks and the seed service run for real in
tests/integration/test_compose_kafka.py.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import threading
import uuid
from pathlib import Path

import pytest

from tests.conftest import missing
from tests.unit.compose_file import REPO

SCRIPTS = REPO / "docker"
PASSWORD = "test-keystore-pw"


def _run_script(path: Path, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(path)], env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _require(tool: str) -> None:
    if shutil.which(tool) is None:
        missing(f"{tool} is missing")


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    _require("keytool")
    secrets, ca = tmp_path_factory.mktemp("secrets"), tmp_path_factory.mktemp("ca")
    env = {
        "PATH": os.environ["PATH"],
        "SECRETS_DIR": str(secrets),
        "CA_DIR": str(ca),
        "SECRETS_OWNER": subprocess.run(["id", "-un"], capture_output=True, text=True, check=True).stdout.strip(),
        "SOURCE_SSL_PASSWORD": PASSWORD,
        "SOURCE_BROKER_USERNAME": "broker",
        "SOURCE_BROKER_PASSWORD": "broker-pw",
        # keytool starts a JVM seven times: start-up options that make that quicker
        "JAVA_TOOL_OPTIONS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto",
    }
    run = _run_script(SCRIPTS / "kafka/make-certs.sh", env)
    assert run.returncode == 0, run.stderr
    again = _run_script(SCRIPTS / "kafka/make-certs.sh", env)
    assert again.returncode == 0 and "nothing to do" in again.stdout  # a restart keeps the certificates
    return secrets, ca


def test_make_certs_writes_what_the_kafka_image_and_the_clients_read(certs: tuple[Path, Path]) -> None:
    secrets, ca = certs
    assert (ca / "ca.pem").read_text().startswith("-----BEGIN CERTIFICATE-----")
    assert oct((ca / "ca.pem").stat().st_mode & 0o777) == "0o644"
    for name in ("kafka-source.keystore.p12", "keystore_creds", "key_creds", "kafka_server_jaas.conf"):
        assert oct((secrets / name).stat().st_mode & 0o777) == "0o600", name
    assert (secrets / "keystore_creds").read_text() == PASSWORD  # the image reads it with $(cat ...)
    jaas = (secrets / "kafka_server_jaas.conf").read_text()
    assert "ScramLoginModule required" in jaas and 'username="broker"' in jaas and 'password="broker-pw";' in jaas
    properties = (secrets / "client.properties").read_text()
    assert "security.protocol=SASL_SSL" in properties and f"ssl.truststore.location={secrets}/ca.pem" in properties


@pytest.fixture(scope="module")
def broker_pem(certs: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The broker's key and certificate chain out of the PKCS12 keystore, for a Python TLS server."""
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, pkcs12

    secrets, _ = certs
    key, cert, chain = pkcs12.load_key_and_certificates(
        (secrets / "kafka-source.keystore.p12").read_bytes(), PASSWORD.encode()
    )
    assert key is not None and cert is not None
    pem = tmp_path_factory.mktemp("server") / "server.pem"
    pem.write_bytes(
        key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
        + cert.public_bytes(Encoding.PEM)
        + b"".join(c.public_bytes(Encoding.PEM) for c in chain)
    )
    return pem


def _handshake(server_pem: Path, client_context: ssl.SSLContext, hostname: str) -> bytes:
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(server_pem)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        try:
            with server_context.wrap_socket(conn, server_side=True) as tls:
                tls.sendall(b"ok")
        except (ssl.SSLError, OSError):
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
            client_context.wrap_socket(raw, server_hostname=hostname) as tls,
        ):
            return tls.recv(2)
    finally:
        thread.join(timeout=10)
        listener.close()


def test_a_client_trusting_ca_pem_accepts_the_broker_as_kafka_source(
    certs: tuple[Path, Path], broker_pem: Path
) -> None:
    _, ca = certs
    assert _handshake(broker_pem, ssl.create_default_context(cafile=str(ca / "ca.pem")), "kafka-source") == b"ok"


def test_the_broker_certificate_is_refused_under_another_name_or_without_the_ca(
    certs: tuple[Path, Path], broker_pem: Path
) -> None:
    _, ca = certs
    with pytest.raises(ssl.SSLCertVerificationError, match=r"mismatch|match"):
        _handshake(broker_pem, ssl.create_default_context(cafile=str(ca / "ca.pem")), "kafka-target")
    with pytest.raises(ssl.SSLCertVerificationError, match=r"self.signed|unable to get local issuer"):
        _handshake(broker_pem, ssl.create_default_context(), "kafka-source")


def test_every_compose_script_is_valid_bash() -> None:
    for script in sorted(SCRIPTS.rglob("*.sh")):
        assert subprocess.run(["bash", "-n", str(script)], capture_output=True, check=False).returncode == 0, script


def test_create_ledger_db_script_makes_the_role_and_database() -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    from harness.servers.postgres import PostgresMissing, ensure_server, postgres_bindir

    try:
        admin = make_url(ensure_server())
        bindir = postgres_bindir()
    except PostgresMissing as exc:
        missing(str(exc))
    name = f"km_compose_{uuid.uuid4().hex[:8]}"
    server = {"host": admin.host, "port": admin.port, "user": admin.username}
    env = {
        "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",  # psql of the server's version
        "PGHOST": str(admin.host),
        "PGPORT": str(admin.port),
        "POSTGRES_USER": str(admin.username),
        "POSTGRES_DB": "postgres",
        "LEDGER_DB_NAME": name,
        "LEDGER_DB_USER": name,
        "LEDGER_DB_PASSWORD": "it's a pass'word",
    }
    try:
        run = _run_script(SCRIPTS / "postgres/create-ledger-db.sh", env)
        assert run.returncode == 0, run.stderr
        with psycopg.connect(**server, dbname=name) as conn:
            owner = conn.execute(
                "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()"
            ).fetchone()
            assert owner == (name,)
            stored = conn.execute(
                "SELECT rolcanlogin, rolpassword IS NOT NULL FROM pg_authid WHERE rolname = %s", (name,)
            )
            assert stored.fetchone() == (True, True)
    finally:
        with psycopg.connect(**server, dbname="postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'DROP ROLE IF EXISTS "{name}"')
