"""The loopback proxy of the test harness (harness/servers/proxy.py): forwards, cuts, restores, delays, terminates TLS.

First against a tiny echo server (fast, exact about bytes), then in front of a real Apache Kafka broker.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.kafka.proxied import proxied_cluster
from harness.servers.proxy import LoopbackProxy

pytestmark = pytest.mark.integration


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(65536):
            self.request.sendall(data)


@pytest.fixture(scope="module")
def echo_port() -> Iterator[int]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def _round_trip(sock: socket.socket, payload: bytes) -> bytes:
    sock.sendall(payload)
    received = b""
    while len(received) < len(payload):
        chunk = sock.recv(65536)
        if not chunk:
            break
        received += chunk
    return received


def _dead(sock: socket.socket) -> bool:
    """True when the connection was closed or reset (what a client sees after a cut)."""
    try:
        sock.sendall(b"x")
        return sock.recv(1) == b""
    except OSError:
        return True


def test_forwards_bytes_both_ways_in_order(echo_port: int) -> None:
    payload = bytes(range(256)) * 2000  # 512 KB: several chunks
    with LoopbackProxy("127.0.0.1", echo_port) as proxy, socket.create_connection(("127.0.0.1", proxy.port), 5) as s:
        assert _round_trip(s, payload) == payload
        assert proxy.accepted == 1


def test_cut_drops_open_connections_and_refuses_new_ones_until_restored(echo_port: int) -> None:
    with LoopbackProxy("127.0.0.1", echo_port) as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port), 5) as before:
            before.settimeout(5)
            assert _round_trip(before, b"hello") == b"hello"
            proxy.cut()
            assert _dead(before)
        with socket.create_connection(("127.0.0.1", proxy.port), 5) as during:
            during.settimeout(5)
            assert _dead(during)
        proxy.restore()
        with socket.create_connection(("127.0.0.1", proxy.port), 5) as after:
            after.settimeout(5)
            assert _round_trip(after, b"again") == b"again"


def test_blackhole_holds_connections_silently_and_restore_closes_them(echo_port: int) -> None:
    with LoopbackProxy("127.0.0.1", echo_port) as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port), 5) as s:
            s.settimeout(0.5)
            proxy.cut(blackhole=True)
            s.sendall(b"lost")
            with pytest.raises(TimeoutError):  # no answer and no reset: only a timeout tells
                s.recv(10)
            proxy.restore()
            s.settimeout(5)
            assert _dead(s)  # its byte stream lost data, so it is closed for the client to reconnect
        with socket.create_connection(("127.0.0.1", proxy.port), 5) as fresh:
            fresh.settimeout(5)
            assert _round_trip(fresh, b"back") == b"back"


def test_latency_delays_each_direction(echo_port: int) -> None:
    with LoopbackProxy("127.0.0.1", echo_port) as proxy, socket.create_connection(("127.0.0.1", proxy.port), 5) as s:
        s.settimeout(5)
        proxy.set_latency(0.2)
        started = time.monotonic()
        assert _round_trip(s, b"slow") == b"slow"
        # Two crossings of the proxy at 0.2 s each: a lower bound, not a timing assertion on speed.
        assert time.monotonic() - started >= 0.4
        proxy.set_latency(0)
        assert _round_trip(s, b"fast") == b"fast"


def test_closes_itself_after_its_lifetime(echo_port: int) -> None:
    proxy = LoopbackProxy("127.0.0.1", echo_port, lifetime=0.5).start()
    try:
        assert proxy._thread is not None
        proxy._thread.join(10)
        assert not proxy._thread.is_alive()
    finally:
        proxy.close()


def test_proxied_broker_serves_clients_only_through_the_proxy(tmp_path: Path, kafka_jars: Path) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    with proxied_cluster("proxy-check", tmp_path) as cluster:
        admin = AdminClient({**cluster.client_config(), "socket.timeout.ms": 3000})
        topic = f"proxy-{uuid.uuid4().hex[:8]}"
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)
        # The broker advertises the proxy's port: metadata names the proxy, not the broker's own port.
        brokers = admin.list_topics(timeout=10).brokers
        assert {b.port for b in brokers.values()} == {cluster.proxy.port}
        cluster.proxy.cut()
        with pytest.raises(KafkaException):
            admin.list_topics(timeout=2)
        cluster.proxy.restore()
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(KafkaException):
                assert topic in admin.list_topics(timeout=2).topics
                break
            assert time.monotonic() < deadline, "client did not reconnect after restore"
        assert cluster.proxy.accepted >= 2
