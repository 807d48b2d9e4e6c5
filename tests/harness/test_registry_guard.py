"""harness/registry/guard.py: the guard answers 401 and 403 as a secured Confluent-compatible registry does, forwards
only what it lets through, and speaks TLS with the test PKI's server certificate.

The registry behind it here is an HTTP server in this process that answers every request with what it received
(seconds, no JVM): what the guard decides is the subject, and a request it refuses must never reach that server. The
guard in front of a real Apicurio registry, driven by ``kafka-migrate``, is tests/integration/test_registry_auth.py.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from harness.kafka.certs import Pki, make_pki
from harness.registry.guard import Role, User, is_write

CCOMPAT = "/apis/ccompat/v7"


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, str, str | None]]

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append((self.command, self.path, self.headers.get("Authorization")))  # type: ignore[attr-defined]
        data = json.dumps({"method": self.command, "path": self.path, "body": body.decode()}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = do_PUT = do_DELETE = do_GET


@pytest.fixture
def upstream() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    server.seen = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("guard-pki"))


def _url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}{CCOMPAT}"


def _call(
    url: str, method: str = "GET", auth: str | None = None, body: object = None, context: ssl.SSLContext | None = None
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if auth is not None:
        request.add_header("Authorization", auth)
    if data is not None:
        request.add_header("Content-Type", "application/vnd.schemaregistry.v1+json")
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


READER, WRITER = User("reader", "read-pw-1", Role.READ), User("writer", "write-pw-2", Role.WRITE)
TOKEN = "token-3f9a"


def test_wrong_or_missing_credentials_answer_401_and_reach_nothing(registry_guard, upstream) -> None:  # type: ignore[no-untyped-def]
    guard = registry_guard(_url(upstream), users=[READER, WRITER], tokens={TOKEN: Role.WRITE})
    for auth in (
        None,
        _basic("reader", "wrong"),
        _basic("nobody", "read-pw-1"),
        "Bearer not-the-token",
        "Basic !!!",
        "Digest x",
    ):
        assert _call(f"{guard.url}/subjects", auth=auth) == (401, {"error_code": 401, "message": "Unauthorized"})
    assert upstream.seen == []  # type: ignore[attr-defined]
    assert [a.status for a in guard.requests] == [401] * 6 and not any(a.forwarded for a in guard.requests)


def test_a_read_only_user_reads_and_looks_up_but_a_write_answers_403(registry_guard, upstream) -> None:  # type: ignore[no-untyped-def]
    guard = registry_guard(_url(upstream), users=[READER, WRITER])
    reader = _basic("reader", "read-pw-1")
    assert _call(f"{guard.url}/subjects", auth=reader)[0] == 200
    assert _call(f"{guard.url}/subjects/a-value", "POST", reader, {"schema": "{}"})[0] == 200  # a lookup
    assert (
        _call(f"{guard.url}/compatibility/subjects/a-value/versions/latest", "POST", reader, {"schema": "{}"})[0] == 200
    )
    refused = _call(f"{guard.url}/subjects/a-value/versions", "POST", reader, {"schema": "{}"})
    assert refused == (403, {"error_code": 40301, "message": "User is denied operation Write on Subject: a-value"})
    assert _call(f"{guard.url}/config", "PUT", reader, {"compatibility": "NONE"})[0] == 403
    assert _call(f"{guard.url}/subjects/a-value", "DELETE", reader)[0] == 403
    status, echoed = _call(f"{guard.url}/subjects/a-value/versions", "POST", _basic("writer", "write-pw-2"), {"x": 1})
    assert (status, echoed["path"], json.loads(echoed["body"])) == (
        200,
        f"{CCOMPAT}/subjects/a-value/versions",
        {"x": 1},
    )
    seen = upstream.seen  # type: ignore[attr-defined]
    assert [(m, p) for m, p, _ in seen] == [
        ("GET", f"{CCOMPAT}/subjects"),
        ("POST", f"{CCOMPAT}/subjects/a-value"),
        ("POST", f"{CCOMPAT}/compatibility/subjects/a-value/versions/latest"),
        ("POST", f"{CCOMPAT}/subjects/a-value/versions"),
    ]
    assert all(auth is None for _, _, auth in seen)  # the credentials stop at the guard
    assert [(a.who, a.status) for a in guard.answered(forwarded=False)] == [("reader", 403)] * 3


def test_a_bearer_token_has_its_role(registry_guard, upstream) -> None:  # type: ignore[no-untyped-def]
    guard = registry_guard(_url(upstream), tokens={TOKEN: Role.WRITE, "read-token-7": Role.READ})
    assert _call(f"{guard.url}/subjects/b-value/versions", "POST", f"Bearer {TOKEN}", {})[0] == 200
    assert _call(f"{guard.url}/subjects/b-value/versions", "POST", "Bearer read-token-7", {})[0] == 403
    assert _call(f"{guard.url}/subjects", auth="Bearer read-token-7")[0] == 200
    assert [a.who for a in guard.answered(forwarded=True)] == ["token:write", "token:read"]


def test_tls_with_the_ca_and_a_refused_handshake_without_it(registry_guard, upstream, pki: Pki) -> None:  # type: ignore[no-untyped-def]
    guard = registry_guard(_url(upstream), users=[READER], tls=pki.server)
    assert guard.url.startswith("https://127.0.0.1:")
    trusted = ssl.create_default_context(cafile=str(pki.ca))
    assert _call(f"{guard.url}/subjects", auth=_basic("reader", "read-pw-1"), context=trusted)[0] == 200
    for cafile in (pki.wrong_ca, None):  # another CA, or the system's
        context = ssl.create_default_context(cafile=str(cafile) if cafile else None)
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            _call(f"{guard.url}/subjects", auth=_basic("reader", "read-pw-1"), context=context)
    with pytest.raises((urllib.error.URLError, ConnectionError)):  # plain HTTP to the TLS port
        _call(guard.url.replace("https://", "http://") + "/subjects")
    deadline = time.monotonic() + 5  # the guard's side of a refused handshake may end after the client's
    while guard.tls_failures < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert guard.tls_failures == 3 and len(upstream.seen) == 1  # type: ignore[attr-defined]


def test_what_counts_as_a_write() -> None:
    assert not is_write("GET", f"{CCOMPAT}/subjects/x-value/versions")
    assert not is_write("POST", f"{CCOMPAT}/subjects/x-value")
    assert not is_write("POST", f"{CCOMPAT}/subjects/x-value?normalize=false")
    assert not is_write("POST", f"{CCOMPAT}/compatibility/subjects/x-value/versions/latest")
    assert is_write("POST", f"{CCOMPAT}/subjects/x-value/versions")
    assert is_write("POST", f"{CCOMPAT}/subjects/x-value/versions?normalize=false")
    assert is_write("PUT", f"{CCOMPAT}/mode")
    assert is_write("DELETE", f"{CCOMPAT}/subjects/x-value/versions/1")
    assert is_write("POST", "/apis/registry/v3/admin/import")


def test_the_guard_keeps_no_secret_in_its_repr(registry_guard, upstream, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    guard = registry_guard(_url(upstream), users=[READER], tokens={TOKEN: Role.WRITE})
    assert "read-pw-1" not in repr(guard) and TOKEN not in repr(guard)
