"""A guard in front of a real registry: credentials and TLS enforced as a secured Confluent-compatible registry does.

The test registries (Apicurio Registry, harness.registry.server) check no credentials and serve plain HTTP: Apicurio's
own authentication needs an OIDC server (Keycloak), which this machine does not run. This guard stands in for a
registry's auth layer. It is a threaded HTTP(S) reverse proxy, standard library only, on a free loopback port, that
forwards every request it lets through to the real registry and answers the rest itself, the way Confluent Schema
Registry with basic or bearer authentication and role-based access does:

- no ``Authorization`` header, an unknown user, a wrong password or an unknown bearer token: **401**,
  ``{"error_code": 401, "message": "Unauthorized"}`` (with ``WWW-Authenticate``);
- a user or token whose role is ``READ`` asking for a write: **403**, ``{"error_code": 40301, "message": "User is
  denied operation Write on Subject: <subject>"}``. Reads are GET and HEAD and the two POSTs Confluent's registry
  counts as reads (``POST /subjects/{subject}``, which looks a schema up, and ``POST /compatibility/...``, which
  tests one); every other request (registering ``POST /subjects/{subject}/versions``, PUT, DELETE) is a write;
- a ``WRITE`` role: everything forwarded.

With ``tls`` (a server certificate and key, e.g. harness.kafka.certs' test PKI, whose server certificate names
127.0.0.1 and localhost) it speaks HTTPS only; the TLS handshake runs in the connection's own thread, so a client
that refuses the certificate costs nothing but its connection (counted in ``tls_failures``).

The ``Authorization`` header is not forwarded. Every answered request is kept in ``requests`` (method, path, who,
status, whether it reached the registry), so that a test sees what a client did, and that a refused write never
reached the registry. A guard closes itself after ``lifetime`` seconds (default 15 minutes), and its threads are
daemons, so it never keeps a test process alive.

```python
with RegistryGuard(registry.ccompat_url, users=[User("alice", "pw", Role.READ)], tls=pki.server) as guard:
    guard.url  # https://127.0.0.1:PORT/apis/ccompat/v7: what a client is given
```
"""

from __future__ import annotations

import base64
import binascii
import enum
import http.client
import json
import re
import socket
import ssl
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Protocol
from urllib.parse import unquote, urlsplit

HOST = "127.0.0.1"
LIFETIME = 15 * 60.0  # seconds
UPSTREAM_TIMEOUT = 60.0  # seconds per forwarded request: Apicurio can be slow to answer its first ones
HANDSHAKE_TIMEOUT = 10.0
POLL = 0.05  # seconds: how soon close() returns
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "authorization",
    "content-length",
}
_LOOKUP = re.compile(r"/subjects/[^/]+/?$")  # POST: look a schema up under a subject (a read)
_SUBJECT = re.compile(r"/subjects/([^/?]+)")


class Role(enum.Enum):
    READ = "read"  # GET, HEAD, lookups and compatibility tests
    WRITE = "write"  # everything


@dataclass(frozen=True)
class User:
    """A basic-auth user of the guard."""

    name: str
    password: str
    role: Role

    def __repr__(self) -> str:
        return f"User({self.name!r}, role={self.role.value})"


class TlsIdentity(Protocol):
    """A server certificate and its (unencrypted) key as PEM files: harness.kafka.certs.Identity."""

    @property
    def cert(self) -> Path: ...

    @property
    def key(self) -> Path: ...


@dataclass(frozen=True)
class Answered:
    """One request the guard answered: who asked (a user's name, ``token:<role>``, or None), what status it
    answered, and whether it was forwarded to the registry."""

    method: str
    path: str
    who: str | None
    status: int
    forwarded: bool


def is_write(method: str, path: str) -> bool:
    """Whether Confluent's registry counts the request as a write (path without the API's prefix or with it)."""
    if method in ("GET", "HEAD", "OPTIONS"):
        return False
    if method == "POST":
        plain = urlsplit(path).path
        if _LOOKUP.search(plain) or "/compatibility/" in plain:
            return False
    return True


class RegistryGuard:
    """The guard in front of the registry whose URL (its root or its Confluent-compatible API) is ``upstream``:
    ``url`` is the same URL on the guard. ``users``: basic-auth users; ``tokens``: bearer tokens and their roles;
    ``tls``: serve HTTPS with this certificate."""

    def __init__(
        self,
        upstream: str,
        users: Iterable[User] = (),
        tokens: Mapping[str, Role] | None = None,
        tls: TlsIdentity | None = None,
        lifetime: float = LIFETIME,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"the guard forwards to a plain http:// registry, not {upstream!r}")
        self.upstream_host = parts.hostname
        self.upstream_port = parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.users = {u.name: u for u in users}
        self.tokens = dict(tokens or {})
        self.requests: list[Answered] = []
        self.tls_failures = 0
        self._lock = threading.Lock()
        self._context: ssl.SSLContext | None = None
        if tls is not None:
            self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self._context.load_cert_chain(str(tls.cert), str(tls.key))
        self._server = _Server((HOST, 0), _Handler, self)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(POLL,), name="registry-guard", daemon=True
        )
        self._timer = threading.Timer(lifetime, self.close)
        self._timer.daemon = True
        self._closed = False

    def __repr__(self) -> str:
        return f"RegistryGuard({self.url!r}, users={list(self.users.values())!r}, tokens={len(self.tokens)})"

    @property
    def scheme(self) -> str:
        return "https" if self._context is not None else "http"

    @property
    def url(self) -> str:
        """The upstream URL given, on the guard (what a client takes as the registry's URL)."""
        return f"{self.scheme}://{HOST}:{self.port}{self.prefix}"

    def start(self) -> RegistryGuard:
        self._thread.start()
        self._timer.start()
        return self

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._timer.cancel()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> RegistryGuard:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def answered(self, **match: object) -> list[Answered]:
        """The requests answered so far, those whose fields equal ``match`` (e.g. ``status=403``)."""
        with self._lock:
            kept = list(self.requests)
        return [a for a in kept if all(getattr(a, k) == v for k, v in match.items())]

    # What the handler asks
    def who(self, authorization: str | None) -> tuple[str, Role] | None:
        """The name and role the ``Authorization`` header proves, or None (missing, malformed or wrong)."""
        if not authorization:
            return None
        scheme, _, credentials = authorization.partition(" ")
        if scheme.lower() == "bearer":
            role = self.tokens.get(credentials.strip())
            return None if role is None else (f"token:{role.value}", role)
        if scheme.lower() != "basic":
            return None
        try:
            name, _, password = base64.b64decode(credentials.strip(), validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        user = self.users.get(name)
        return None if user is None or user.password != password else (user.name, user.role)

    def record(self, answered: Answered) -> None:
        with self._lock:
            self.requests.append(answered)

    def failed_handshake(self) -> None:
        with self._lock:
            self.tls_failures += 1

    def wrap(self, connection: socket.socket) -> socket.socket:
        if self._context is None:
            return connection
        connection.settimeout(HANDSHAKE_TIMEOUT)
        wrapped = self._context.wrap_socket(connection, server_side=True)
        wrapped.settimeout(None)
        return wrapped


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type[_Handler], guard: RegistryGuard) -> None:
        self.guard = guard
        super().__init__(address, handler)

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that went away or refused the TLS handshake: nothing to print (the guard counts handshakes)."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as confluent-kafka's httpx client expects
    server: _Server

    def setup(self) -> None:
        try:
            self.request = self.server.guard.wrap(self.request)
        except (ssl.SSLError, OSError):
            self.server.guard.failed_handshake()
            raise
        super().setup()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: ``requests`` keeps what was answered."""

    def do_GET(self) -> None:
        self._guarded()

    do_HEAD = do_POST = do_PUT = do_DELETE = do_OPTIONS = do_GET

    def _guarded(self) -> None:
        guard = self.server.guard
        length = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding"):
            self._answer(411, {"error_code": 411, "message": "Length Required"}, None)
            return
        body = self.rfile.read(int(length)) if length else b""
        who = guard.who(self.headers.get("Authorization"))
        if who is None:
            self._answer(401, {"error_code": 401, "message": "Unauthorized"}, None, authenticate=True)
            return
        name, role = who
        if role is Role.READ and is_write(self.command, self.path):
            found = _SUBJECT.search(urlsplit(self.path).path)
            on = f"Subject: {unquote(found[1])}" if found else "this server"
            message = f"User is denied operation Write on {on}"
            self._answer(403, {"error_code": 40301, "message": message}, name)
            return
        self._forward(body, name)

    def _forward(self, body: bytes, who: str) -> None:
        guard = self.server.guard
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        upstream = http.client.HTTPConnection(guard.upstream_host, guard.upstream_port, timeout=UPSTREAM_TIMEOUT)
        try:
            upstream.request(self.command, self.path, body=body or None, headers=headers)
            answer = upstream.getresponse()
            data = answer.read()
        except OSError as exc:
            self._answer(502, {"error_code": 50201, "message": f"the registry behind the guard: {exc}"}, who)
            return
        finally:
            upstream.close()
        guard.record(Answered(self.command, self.path, who, answer.status, forwarded=True))  # before the client hears
        self.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in HOP_BY_HOP:
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _answer(self, status: int, document: dict[str, object], who: str | None, authenticate: bool = False) -> None:
        data = json.dumps(document).encode()
        self.server.guard.record(Answered(self.command, self.path, who, status, forwarded=False))
        self.send_response(status)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(data)))
        if authenticate:
            self.send_header("WWW-Authenticate", 'Basic realm="SchemaRegistry"')
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
