"""A loopback TCP proxy for tests: put it between the pipeline and a cluster to cut or slow the network.

The broker advertises the proxy's port (harness.kafka.proxied), so every client connection,
bootstrap and partition leader alike, goes through the proxy. The proxy runs
an asyncio loop in one daemon thread; every method is safe to call from the test's thread.

- ``cut()`` drops every open connection and refuses new ones (accepted, then closed at once:
  clients see a reset and retry); ``cut(blackhole=True)`` instead holds every connection open and
  forwards nothing, the way a lost route looks (clients only notice through their timeouts).
- ``restore()`` forwards again; connections that lost bytes to a blackhole are closed, since their
  byte stream is broken, so clients reconnect.
- ``set_latency(s)`` delays every chunk by ``s`` seconds in each direction (order kept; bandwidth
  is not throttled).
- ``set_fault(fault)`` reads the bytes of every connection and cuts one where the fault says: a module per
  kind of fault (``harness.servers.lost_acks.LostAcks``: the broker writes, its answer never reaches the client).
  ``restore()`` removes it.

It is bounded: it closes itself after ``lifetime`` seconds (default 15 minutes) even if a test
forgets to, and its thread is a daemon, so it never keeps a test process alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, TypeVar

_T = TypeVar("_T")
_CHUNK = 64 * 1024


class StreamWatch(Protocol):
    """A fault's view of one connection, read from its first byte: each returns None (forward the chunk), or where
    in the chunk to cut the connection (what comes before is forwarded)."""

    def to_upstream(self, data: bytes) -> int | None: ...

    def to_client(self, data: bytes) -> int | None: ...


class StreamFault(Protocol):
    """A fault that reads what the proxy forwards (e.g. harness/servers/lost_acks.py): one watch per connection."""

    def watch(self) -> StreamWatch: ...


@dataclass(eq=False)  # identity hash: connections live in a set
class _Connection:
    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    lost_bytes: bool = False
    watch: StreamWatch | None = None

    def abort(self) -> None:
        for writer in (self.client, self.upstream):
            if writer is not None:
                writer.transport.abort()
        for task in self.tasks:
            task.cancel()


class LoopbackProxy:
    """Forward 127.0.0.1:``port`` to ``upstream_host:upstream_port``, with faults on demand.

    The listening socket is bound in the constructor, so ``port`` is known before the upstream
    exists (start the broker afterwards, advertising this port). Connections accepted before the
    upstream listens are closed, as a refused connection would be.
    """

    def __init__(
        self,
        upstream_host: str,
        upstream_port: int,
        *,
        lifetime: float = 900.0,
        connect_timeout: float = 5.0,
    ) -> None:
        self.upstream_host = upstream_host
        self.upstream_port = upstream_port
        self.lifetime = lifetime
        self.connect_timeout = connect_timeout
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self.port: int = int(self._sock.getsockname()[1])
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._stopped: asyncio.Event | None = None
        self._connections: set[_Connection] = set()
        self._mode = "open"  # "open", "refuse" or "blackhole"
        self._latency = 0.0
        self._fault: StreamFault | None = None
        self.accepted = 0  # connections accepted so far (tests use it to prove traffic went through)
        self.forwarded_bytes = 0

    # -- life cycle -------------------------------------------------------------------------

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> LoopbackProxy:
        if self._thread is not None:
            return self
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._serve(ready))
            except BaseException as exc:  # surfaced to start() when it happens before ready
                failure.append(exc)
                ready.set()
            finally:
                with contextlib.suppress(Exception):
                    loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name=f"loopback-proxy-{self.port}", daemon=True)
        self._thread.start()
        if not ready.wait(10.0) or failure:
            raise RuntimeError(f"loopback proxy on port {self.port} did not start: {failure[:1]}")
        return self

    def close(self) -> None:
        """Stop listening, drop every connection and end the thread (idempotent)."""
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(self._stop_now)
            thread.join(10.0)
        self._sock.close()

    def __enter__(self) -> LoopbackProxy:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- faults -----------------------------------------------------------------------------

    def cut(self, *, blackhole: bool = False) -> None:
        """Cut the network: drop open connections and refuse new ones, or blackhole everything."""
        self._call(self._cut(blackhole))

    def restore(self) -> None:
        """Forward again; connections whose bytes a blackhole swallowed are closed."""
        self._call(self._restore())

    def set_latency(self, seconds_each_way: float) -> None:
        if seconds_each_way < 0:
            raise ValueError("latency must be >= 0")
        self._call(self._set_latency(seconds_each_way))

    def set_fault(self, fault: StreamFault) -> None:
        """Read every connection through ``fault`` until ``restore()``. Open connections are dropped first (clients
        reconnect), so that the fault reads each connection from its first byte, as framing needs."""
        self._call(self._set_fault(fault))

    @property
    def is_cut(self) -> bool:
        return self._mode != "open"

    # -- internals (run on the proxy's loop) ------------------------------------------------

    def _call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        if self._loop is None or self._thread is None or not self._thread.is_alive():
            coro.close()
            raise RuntimeError(f"loopback proxy on port {self.port} is not running")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(10.0)

    async def _cut(self, blackhole: bool) -> None:
        self._mode = "blackhole" if blackhole else "refuse"
        if not blackhole:
            for conn in list(self._connections):
                conn.abort()
            self._connections.clear()

    async def _restore(self) -> None:
        self._mode = "open"
        self._fault = None
        for conn in list(self._connections):
            conn.watch = None
            if conn.lost_bytes or conn.upstream is None:
                conn.abort()
                self._connections.discard(conn)

    async def _set_fault(self, fault: StreamFault) -> None:
        self._fault = fault
        for conn in list(self._connections):
            conn.abort()
        self._connections.clear()

    async def _set_latency(self, seconds: float) -> None:
        self._latency = seconds

    def _stop_now(self) -> None:
        if self._stopped is not None:
            self._stopped.set()

    async def _serve(self, ready: threading.Event) -> None:
        self._stopped = asyncio.Event()
        self._server = await asyncio.start_server(self._handle, sock=self._sock)
        ready.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopped.wait(), timeout=self.lifetime)
        self._server.close()
        for conn in list(self._connections):
            conn.abort()
        self._connections.clear()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), timeout=5.0)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self._mode == "refuse":
            writer.transport.abort()
            return
        conn = _Connection(client=writer, watch=None if self._fault is None else self._fault.watch())
        self._connections.add(conn)
        try:
            if self._mode == "blackhole":
                conn.lost_bytes = True
                await self._swallow(reader)
                return
            try:
                up_reader, up_writer = await asyncio.wait_for(
                    asyncio.open_connection(self.upstream_host, self.upstream_port), timeout=self.connect_timeout
                )
            except (TimeoutError, OSError):
                return
            conn.upstream = up_writer
            if self._mode == "refuse" or conn not in self._connections:
                return  # cut while connecting
            conn.tasks = [
                asyncio.ensure_future(self._pipe(reader, up_writer, conn, to_client=False)),
                asyncio.ensure_future(self._pipe(up_reader, writer, conn, to_client=True)),
            ]
            await asyncio.gather(*conn.tasks, return_exceptions=True)
        finally:
            conn.abort()
            self._connections.discard(conn)

    async def _swallow(self, reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(Exception):
            while await reader.read(_CHUNK):
                pass

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, conn: _Connection, *, to_client: bool
    ) -> None:
        """Copy one direction; chunks wait out the latency in a queue, so order is kept. A fault's watch sees each
        chunk as it is forwarded and may cut the connection in its middle."""
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                if not data:
                    return
                delay = due - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                if self._mode == "blackhole":
                    conn.lost_bytes = True
                    continue
                watch = conn.watch
                cut_at = None if watch is None else (watch.to_client if to_client else watch.to_upstream)(data)
                if cut_at is not None:
                    writer.write(data[:cut_at])
                    await writer.drain()
                    conn.abort()
                    return
                writer.write(data)
                await writer.drain()
                self.forwarded_bytes += len(data)

        sender = asyncio.ensure_future(deliver())
        try:
            while True:
                data = await reader.read(_CHUNK)
                await queue.put((time.monotonic() + self._latency, data))
                if not data or sender.done():
                    break
            await sender
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            sender.cancel()
            # One side ended: end the whole connection, as a broken TCP path would.
            conn.abort()
