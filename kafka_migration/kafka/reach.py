"""Whether a cluster's bootstrap addresses resolve and answer, checked in seconds before anything starts.

librdkafka retries an address that does not resolve or answer until its timeouts run out, so a typo in a host
name would otherwise be found after Spark has started and a planning timeout has passed. This check opens plain
TCP connections only (no Kafka request, no TLS or SASL: those are checked by the clients that follow), so it
works for every security protocol and sends no credentials.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.config import ClusterConfig

CONNECT_TIMEOUT = 5.0  # seconds per address; the addresses are tried side by side
DEFAULT_PORT = 9092


def bootstrap_addresses(settings: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(host, port) of each bootstrap address: ``host:port``, ``PROTOCOL://host:port`` or ``[ipv6]:port``."""
    found = []
    for entry in str(settings.get("bootstrap.servers", "")).split(","):
        address = entry.strip().rpartition("://")[2]
        if not address:
            continue
        if address.startswith("["):
            host, _, rest = address[1:].partition("]")
            port = rest.removeprefix(":")
        else:
            host, _, port = address.rpartition(":") if ":" in address else (address, "", "")
        found.append((host, int(port) if port.isdigit() else DEFAULT_PORT))
    return found


def _resolve(host: str, port: int) -> list[tuple[Any, ...]] | str:
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        return str(exc.args[-1] if exc.args else exc)


def _connect(infos: list[tuple[Any, ...]], timeout: float) -> str | None:
    """None once one of a name's addresses accepts a connection, else why none did."""
    error = "no address"
    for family, kind, proto, _, address in infos:
        try:
            with socket.socket(family, kind, proto) as probe:
                probe.settimeout(timeout)
                probe.connect(address)
                return None
        except OSError as exc:
            error = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
    return error


def check_reachable(config: ClusterConfig, timeout: float = CONNECT_TIMEOUT) -> None:
    """Refuse, in one line that names the cluster and where to fix it, a cluster none of whose bootstrap
    addresses resolves, or none of whose resolved addresses accepts a connection. One that answers is enough:
    the client learns the other brokers from it."""
    addresses = bootstrap_addresses(config.settings)
    if not addresses:
        raise ConfigurationError(
            f"The {config.role} cluster has no bootstrap address; give one (host:port) in {config.where}."
        )
    with ThreadPoolExecutor(max_workers=len(addresses)) as pool:
        resolved = list(pool.map(lambda a: _resolve(*a), addresses))
    names = [f"{host}:{port}" for host, port in addresses]
    if all(isinstance(r, str) for r in resolved):
        reason = resolved[0]
        raise ConfigurationError(
            f"The {config.role} cluster's bootstrap address {', '.join(names)} does not resolve ({reason}): check "
            f"the host name in {config.where}; nothing was started or written."
        )
    reachable = [r for r in resolved if not isinstance(r, str)]
    with ThreadPoolExecutor(max_workers=len(reachable)) as pool:
        errors = list(pool.map(lambda infos: _connect(infos, timeout), reachable))
    if all(error is not None for error in errors):
        raise ConfigurationError(
            f"No bootstrap broker of the {config.role} cluster answers at {', '.join(names)} ({errors[0]}): check the "
            f"port in {config.where} and that the cluster is up and reachable from here; nothing was started or "
            "written."
        )
