"""kafka/reach.py: a cluster's bootstrap addresses resolved and connected to, in seconds, before anything starts."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.kafka.reach import bootstrap_addresses, check_reachable
from kafka_migration.model.config import ClusterConfig


@pytest.fixture
def listening() -> Iterator[socket.socket]:
    """A port that accepts connections (the check sends nothing, so no Kafka is needed behind it)."""
    with socket.create_server(("127.0.0.1", 0), backlog=16) as server:
        yield server


def _address(server: socket.socket) -> str:
    return f"127.0.0.1:{server.getsockname()[1]}"


def _connections(server: socket.socket) -> int:
    """How many connections reached the server so far (the kernel completes them before anyone accepts)."""
    server.settimeout(0.2)
    count = 0
    try:
        while True:
            connection, _ = server.accept()
            connection.close()
            count += 1
    except TimeoutError:
        return count


def _closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as server:
        return server.getsockname()[1]  # closed on exit: nothing listens there any more


def _cluster(bootstrap: str, role: str = "source") -> ClusterConfig:
    return ClusterConfig.build(role, bootstrap, None)


def test_addresses_in_every_form_kafka_takes() -> None:
    settings = {"bootstrap.servers": "a:9093, SASL_SSL://b.example.com:9094,[::1]:9095,c,PLAINTEXT://d"}
    assert bootstrap_addresses(settings) == [
        ("a", 9093),
        ("b.example.com", 9094),
        ("::1", 9095),
        ("c", 9092),
        ("d", 9092),
    ]


def test_a_cluster_that_answers_passes(listening: socket.socket) -> None:
    assert check_reachable(_cluster(_address(listening))) is None
    assert _connections(listening) == 1  # it passed because the broker answered, not without asking


def test_one_answering_broker_is_enough(listening: socket.socket) -> None:
    """The client learns the other brokers from it; one broker down for maintenance must not stop a run."""
    down = f"127.0.0.1:{_closed_port()}"
    assert check_reachable(_cluster(f"{down},no-such-host.invalid:9092,{_address(listening)}")) is None
    assert _connections(listening) == 1  # the one that answers was asked
    with pytest.raises(ConfigurationError, match="No bootstrap broker of the source cluster answers"):
        check_reachable(_cluster(f"{down},no-such-host.invalid:9092"))  # the same list without it is refused


def test_a_name_that_does_not_resolve_is_refused_in_one_line_naming_the_role_and_where() -> None:
    with pytest.raises(ConfigurationError) as refused:
        check_reachable(_cluster("no-such-host.invalid:9092", "target"))
    message = str(refused.value)
    assert message.startswith("The target cluster's bootstrap address no-such-host.invalid:9092 does not resolve (")
    assert "check the host name in --target" in message and "\n" not in message


def test_a_port_nothing_listens_on_is_refused() -> None:
    port = _closed_port()
    with pytest.raises(ConfigurationError) as refused:
        check_reachable(_cluster(f"127.0.0.1:{port}"))
    assert f"No bootstrap broker of the source cluster answers at 127.0.0.1:{port} (Connection refused)" in str(
        refused.value
    )
