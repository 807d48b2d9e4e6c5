"""model/bootstrap: the one parser of ``bootstrap.servers``, which the settings check, kafka-python's arguments, the
TLS probe and lineage's names of a cluster all read."""

from __future__ import annotations

import pytest

from kafka_migration.exceptions import BootstrapAddressError, ConfigurationError
from kafka_migration.model.bootstrap import BrokerAddress, broker_address, broker_addresses, first_broker


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [
        ("broker1:9093", "broker1", 9093),
        ("broker1", "broker1", 9092),  # no port: Kafka's default
        (" Broker1.Example.COM:19092 ", "Broker1.Example.COM", 19092),  # blanks dropped, the host as written
        ("10.0.0.7:9094", "10.0.0.7", 9094),
        ("[::1]:9092", "::1", 9092),
        ("[fe80::1]:19093", "fe80::1", 19093),
        ("[::1]", "::1", 9092),  # IPv6 without a port
        ("SASL_SSL://kafka.internal:9094", "kafka.internal", 9094),  # the protocol prefix dropped
        ("PLAINTEXT://[::1]:9095", "::1", 9095),
        ("127.0.0.1:019092", "127.0.0.1", 19092),  # the port as a number
        ("h:1", "h", 1),
        ("h:65535", "h", 65535),
    ],
)
def test_one_address(text: str, host: str, port: int) -> None:
    assert broker_address(text) == BrokerAddress(host, port)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "h:",  # a colon without a port
        "h:0",
        "h:65536",
        "h:port",
        "::1",  # IPv6 without brackets: its last group could be a port
        "::1:9092",
        "[::1",
        "[::1]9092",
        "[not-ipv6]:9092",
        "h:9092/",
        "two words:9092",
        "http://",
    ],
)
def test_what_is_not_an_address_is_refused_naming_it(text: str) -> None:
    with pytest.raises(BootstrapAddressError) as refused:
        broker_address(text)
    assert refused.value.address == text.strip()
    assert isinstance(refused.value, ConfigurationError)  # exit 2: bad input, nothing written
    assert "is not HOST:PORT" in str(refused.value)


def test_several_addresses_in_their_order() -> None:
    assert broker_addresses("b2:9093, [::1]:9094,b1") == (
        BrokerAddress("b2", 9093),
        BrokerAddress("::1", 9094),
        BrokerAddress("b1", 9092),
    )
    with pytest.raises(BootstrapAddressError, match="''"):
        broker_addresses("b1:9092,,b2:9092")  # an empty address between two commas
    with pytest.raises(BootstrapAddressError, match="'b2:x'"):
        broker_addresses("b1:9092,b2:x")  # the bad one named, whichever it is


def test_the_first_address_only_is_read_for_the_first_broker() -> None:
    assert first_broker("[FE80::1]:19092,other:1") == BrokerAddress("FE80::1", 19092)
    assert first_broker("b1,not an address") == BrokerAddress("b1", 9092)


@pytest.mark.parametrize(
    ("address", "text"),
    [
        (BrokerAddress("b1", 9092), "b1:9092"),
        (BrokerAddress("::1", 9092), "[::1]:9092"),  # brackets back around IPv6, as kafka-python and librdkafka read it
        (BrokerAddress("10.0.0.7", 1), "10.0.0.7:1"),
    ],
)
def test_written_back_as_clients_read_it(address: BrokerAddress, text: str) -> None:
    assert str(address) == text
    assert broker_address(text) == address
