"""A cluster's bootstrap addresses (librdkafka's ``bootstrap.servers``), parsed in one place.

The settings check (``ClusterConfig``), kafka-python's arguments, the TLS probe and lineage's names of a cluster
all read the same string; each used to parse it its own way, and they disagreed on IPv6 and missing ports.
An address is ``[PROTOCOL://]HOST[:PORT]``: HOST a name, an IPv4 address or an IPv6 address in brackets, PORT
1 to 65535, 9092 when left out (librdkafka's and kafka-python's default). An IPv6 address without brackets is
refused: its last group could not be told from a port.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kafka_migration.exceptions import BootstrapAddressError

DEFAULT_PORT = 9092

_ADDRESS = re.compile(r"(?:[A-Za-z_]+://)?(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^\s:/,\[\]]+))(?::(?P<port>\d+))?")


@dataclass(frozen=True)
class BrokerAddress:
    """One bootstrap address: the host as written (an IPv6 address without its brackets) and the port."""

    host: str
    port: int

    def __str__(self) -> str:
        """``host:port``, an IPv6 host in brackets: the form librdkafka and kafka-python read back."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def broker_address(text: str) -> BrokerAddress:
    """One address of ``bootstrap.servers`` (surrounding blanks ignored); BootstrapAddressError when it is not
    ``[PROTOCOL://]HOST[:PORT]`` with a port from 1 to 65535."""
    match = _ADDRESS.fullmatch(text.strip())
    port = int(match["port"] or DEFAULT_PORT) if match else 0
    if match is None or not 0 < port < 65536:
        raise BootstrapAddressError(text.strip())
    return BrokerAddress(match["v6"] or match["host"], port)


def broker_addresses(bootstrap: str) -> tuple[BrokerAddress, ...]:
    """Every address of a comma-separated ``bootstrap.servers``, in the order given."""
    return tuple(broker_address(text) for text in str(bootstrap).split(","))


def first_broker(bootstrap: str) -> BrokerAddress:
    """The first address of ``bootstrap.servers``: the one the TLS probe asks and lineage names a cluster by."""
    return broker_address(str(bootstrap).split(",", maxsplit=1)[0])
