"""``kafka-migrate run --schema-ids translate`` against secured registries: basic auth, a bearer token, TLS, a user
without write rights, and wrong credentials, on real brokers and the real registries (Apicurio).

The registries check no credentials and serve plain HTTP (Apicurio's own authentication needs an OIDC server this
machine does not run), so each test puts a guard in front of them (harness/registry/guard.py, ``registry_guard``):
HTTPS with the session's test PKI, basic-auth users with a role (read-only, read-write), bearer tokens, answering 401
and 403 as Confluent's registry does. The run is given the guards' URLs and, as docs/cli.md says, the credentials and
the CA file in ``--source-registry-config`` / ``--target-registry-config`` files; every request it makes reaches
the registries through a guard (the guards' records show who asked what).

One run succeeds (a read-only user on the source, a token on the target, both over TLS) and must translate and
prove every record; the refusals (a wrong password, a wrong or missing token, a read-only user on the target, a
certificate not trusted, a CA file missing) must exit 2 with one line naming the registry and the way out, before
anything is written: no target topic, no subject registered, no run in the ledger. Every planted password and token
is searched for (tests/leaks.py) in the output, the run files, the reports and the ledger's rows, and, during the
successful run, in the process arguments.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness.data.read import read_partition
from harness.data.seed import create_topic, producer, send
from harness.kafka.certs import Pki
from harness.registry.guard import RegistryGuard, Role, User
from kafka_migration.ledger import Ledger
from tests.conftest import Clusters, Registries
from tests.e2e.test_secrets import ArgsSampler, _tables
from tests.leaks import leaks

pytestmark = [pytest.mark.integration, pytest.mark.spark]

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")
REPO = Path(__file__).resolve().parents[2]
TOPICS = {"subject.name.strategy.type": "TOPIC"}  # Apicurio needs it spelled so (tests/harness/test_registry.py)
TIMEOUT = 20.0
ITEM = {"type": "record", "name": "Item", "namespace": "shop", "fields": [{"name": "sku", "type": "string"}]}

_PLANT = uuid.uuid4().hex[:10]
SECRETS = {  # every credential a test plants, right or wrong: none may appear anywhere the run writes
    "source reader's password": f"src-reader-{_PLANT}",
    "target reader's password": f"tgt-reader-{_PLANT}",
    "target writer's password": f"tgt-writer-{_PLANT}",
    "target token": f"tgt-token-{_PLANT}",
    "a wrong password": f"wrong-pw-{_PLANT}",
    "a wrong token": f"wrong-token-{_PLANT}",
}
SOURCE_USERS = [User("reader", SECRETS["source reader's password"], Role.READ)]
TARGET_USERS = [
    User("reader", SECRETS["target reader's password"], Role.READ),
    User("writer", SECRETS["target writer's password"], Role.WRITE),
]
TARGET_TOKENS = {SECRETS["target token"]: Role.WRITE}


def client(url: str) -> SchemaRegistryClient:
    """A client of a registry itself, behind no guard: what the test seeds and checks with."""
    return SchemaRegistryClient({"url": url, "timeout": TIMEOUT})


@dataclass(frozen=True)
class Seeded:
    topic: str
    prefix: str
    clusters: Clusters
    registries: Registries
    pki: Pki


@pytest.fixture(scope="module")
def seeded(clusters: Clusters, registries: Registries, test_pki: Pki) -> Seeded:
    """One source topic (2 partitions) of Avro values under ``<topic>-value``; the target registry's ids run ahead
    of the source's, so that a copy keeping the source's ids would name other schemas."""
    prefix = f"auth{uuid.uuid4().hex[:8]}"
    topic = f"{prefix}.items"
    source = client(registries.source)
    create_topic(clusters.source, topic, 2)
    source.register_schema(f"{topic}-value", Schema(json.dumps(ITEM), "AVRO"))
    target = client(registries.target)
    for i in range(3):
        target.register_schema(f"{prefix}-filler{i}", Schema(json.dumps({**ITEM, "name": f"Filler{i}"}), "AVRO"))
    conf = {**TOPICS, "auto.register.schemas": False, "use.latest.version": True}
    as_item = AvroSerializer(source, json.dumps(ITEM), conf=conf)
    context = SerializationContext(topic, MessageField.VALUE)
    p = producer(clusters.source)
    for i in range(6):
        send(p, topic, i % 2, f"k{i}".encode(), as_item({"sku": f"sku-{i}"}, context))
    p.flush(30)
    return Seeded(topic, prefix, clusters, registries, test_pki)


@dataclass(frozen=True)
class Guards:
    source: RegistryGuard
    target: RegistryGuard


@pytest.fixture
def guards(seeded: Seeded, registry_guard) -> Guards:  # type: ignore[no-untyped-def]
    """Both registries behind guards speaking HTTPS (the test PKI's server certificate)."""
    return Guards(
        registry_guard(seeded.registries.source, users=SOURCE_USERS, tls=seeded.pki.server),
        registry_guard(seeded.registries.target, users=TARGET_USERS, tokens=TARGET_TOKENS, tls=seeded.pki.server),
    )


def settings_file(directory: Path, role: str, **settings: str) -> Path:
    path = directory / f"{role}-registry.json"
    path.write_text(json.dumps(settings))
    return path


def basic(user: User, password: str | None = None) -> str:
    return f"{user.name}:{password or user.password}"


def kafka_migrate(
    seeded: Seeded, guards: Guards, state_dir: Path, rename: str, source: Path, target: Path
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    env["PYTHONPATH"] = str(REPO)
    args = (
        "run", "--source", seeded.clusters.source, "--target", seeded.clusters.target,
        "--include", f"{seeded.prefix}\\..*", "--rename", rename, "--schema-ids", "translate",
        "--source-registry", guards.source.url, "--target-registry", guards.target.url,
        "--source-registry-config", str(source), "--target-registry-config", str(target),
        "--state-dir", str(state_dir),
    )  # fmt: skip
    return subprocess.run([KAFKA_MIGRATE, *args], capture_output=True, text=True, timeout=300, check=False, env=env)


def written(state_dir: Path) -> dict[str, str | bytes]:
    """Everything the run left: its files (run files, reports, the SQLite ledger's bytes) and the ledger's rows."""
    places: dict[str, str | bytes] = {str(f): f.read_bytes() for f in state_dir.rglob("*") if f.is_file()}
    if (state_dir / "ledger.db").exists():
        places.update(
            {f"ledger table {t}": rows for t, rows in _tables(f"sqlite:///{state_dir / 'ledger.db'}").items()}
        )
    return places


def assert_nothing_written(seeded: Seeded, state_dir: Path, target_topic: str, subjects: set[str]) -> None:
    from confluent_kafka.admin import AdminClient

    topics = AdminClient({"bootstrap.servers": seeded.clusters.target}).list_topics(timeout=10).topics
    assert target_topic not in topics  # no topic created, so no record written
    assert set(client(seeded.registries.target).get_subjects()) == subjects  # no subject registered
    assert not list(state_dir.glob("runs/*/plan.json"))  # no run opened
    if (state_dir / "ledger.db").exists():
        ledger = Ledger.open(f"sqlite:///{state_dir / 'ledger.db'}", create=False)
        try:
            assert ledger.runs() == []
        finally:
            ledger.engine.dispose()


def refusal_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one line of a refusal (exit 2), on stderr."""
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


def test_translate_through_registries_with_basic_auth_a_bearer_token_and_tls(
    seeded: Seeded, guards: Guards, tmp_path: Path
) -> None:
    """The source read by a read-only user (basic auth), the target written with a bearer token, both over HTTPS
    with the CA in the settings files: the subject is registered through the guard, every value translated and
    proven, and confluent-kafka's deserializer reads the target with its registry as the source with its own."""
    ca = str(seeded.pki.ca)
    source = settings_file(
        tmp_path, "source", **{"basic.auth.user.info": basic(SOURCE_USERS[0]), "ssl.ca.location": ca}
    )
    target = settings_file(tmp_path, "target", **{"bearer.auth.token": SECRETS["target token"], "ssl.ca.location": ca})
    target_topic = f"secured.{seeded.topic}"
    with ArgsSampler() as ps:
        done = kafka_migrate(seeded, guards, tmp_path / "state", "secured.{topic}", source, target)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified" in done.stdout and "1 subject version (1 registered)" in done.stdout, done.stdout

    # Every request went through the guards, authenticated: reads only on the source, the register on the target.
    assert guards.source.requests and {(a.who, a.forwarded) for a in guards.source.requests} == {("reader", True)}
    assert not any(a.method != "GET" for a in guards.source.requests)
    registered = guards.target.answered(method="POST", forwarded=True)
    assert f"/subjects/{target_topic}-value/versions" in " ".join(a.path for a in registered)
    assert {a.who for a in guards.target.requests} == {"token:write"} and guards.source.tls_failures == 0

    mine, theirs = client(seeded.registries.source), client(seeded.registries.target)
    assert (
        theirs.get_latest_version(f"{target_topic}-value").schema_id
        != mine.get_latest_version(f"{seeded.topic}-value").schema_id
    )

    def decoded(bootstrap: str, topic: str, registry: SchemaRegistryClient) -> list[tuple[Any, bytes]]:
        avro = AvroDeserializer(registry, conf=TOPICS)
        context = SerializationContext(topic, MessageField.VALUE)
        return [
            (avro(r["value"], context), r["value"][1:5]) for p in (0, 1) for r in read_partition(bootstrap, topic, p)
        ]

    before = decoded(seeded.clusters.source, seeded.topic, mine)
    after = decoded(seeded.clusters.target, target_topic, theirs)
    assert [v for v, _ in after] == [v for v, _ in before] and len(before) == 6
    assert all(a != b for (_, a), (_, b) in zip(before, after, strict=True))  # every value names the target's id
    places = {"stdout": done.stdout, "stderr": done.stderr, "ps": ps.text(), **written(tmp_path / "state")}
    assert any(name.startswith("ledger table") for name in places) and any(n.endswith("plan.json") for n in places)
    assert leaks(SECRETS, places) == []


REFUSED = {
    "a wrong password on the source": ("source", {"basic.auth.user.info": f"reader:{SECRETS['a wrong password']}"}),
    "a wrong token on the target": ("target", {"bearer.auth.token": SECRETS["a wrong token"]}),
    "no credentials for the target": ("target", {}),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_refused_credentials_stop_the_run_before_anything_is_written(
    seeded: Seeded, guards: Guards, tmp_path: Path, case: str
) -> None:
    """The registry answers 401: exit 2 before Spark starts or the ledger is opened, one line naming the registry
    (its URL, no secret) and the way out; the guard forwarded nothing of the refused registry's."""
    role, wrong = REFUSED[case]
    ca = {"ssl.ca.location": str(seeded.pki.ca)}
    right = {
        "source": {"basic.auth.user.info": basic(SOURCE_USERS[0]), **ca},
        "target": {"bearer.auth.token": SECRETS["target token"], **ca},
    }
    files = {r: settings_file(tmp_path, r, **({**wrong, **ca} if r == role else right[r])) for r in right}
    subjects = set(client(seeded.registries.target).get_subjects())
    done = kafka_migrate(seeded, guards, tmp_path / "state", "refused.{topic}", files["source"], files["target"])
    line = refusal_line(done)
    guard = guards.source if role == "source" else guards.target
    assert f"Schema registry {guard.url}" in line and "HTTP 401" in line, line
    assert "the credentials were not accepted" in line and f"--{role}-registry-config" in line, line
    assert guard.requests and not guard.answered(forwarded=True)
    assert not (tmp_path / "state" / "ledger.db").exists()  # refused before the ledger was opened
    assert_nothing_written(seeded, tmp_path / "state", f"refused.{seeded.topic}", subjects)
    assert leaks(SECRETS, {"stdout": done.stdout, "stderr": done.stderr, **written(tmp_path / "state")}) == []


def test_a_read_only_user_on_the_target_is_refused_before_anything_is_written(
    seeded: Seeded, guards: Guards, tmp_path: Path
) -> None:
    """A user that may read the target registry but not write it: the run plans (reads pass), and its first
    register answers 403. Exit 2 naming the subject and version it could not register and the way out (write
    rights, or keep mode with a target that holds the ids); no subject registered, no topic, no run."""
    ca = {"ssl.ca.location": str(seeded.pki.ca)}
    source = settings_file(tmp_path, "source", **{"basic.auth.user.info": basic(SOURCE_USERS[0]), **ca})
    target = settings_file(tmp_path, "target", **{"basic.auth.user.info": basic(TARGET_USERS[0]), **ca})
    subjects = set(client(seeded.registries.target).get_subjects())
    done = kafka_migrate(seeded, guards, tmp_path / "state", "readonly.{topic}", source, target)
    line = refusal_line(done)
    subject = f"readonly.{seeded.topic}-value"
    assert f"Subject {subject!r} version 1" in line and f"target registry {guards.target.url}" in line, line
    assert "HTTP 403" in line and "nothing was written" in line, line
    assert "write rights" in line and "--schema-ids keep" in line, line
    (refused,) = guards.target.answered(status=403)
    assert (
        refused.method == "POST"
        and refused.path.split("?")[0].endswith(f"/subjects/{subject}/versions")
        and refused.who == "reader"
    )
    assert all(a.method == "GET" for a in guards.target.answered(forwarded=True))  # no write reached the registry
    assert (tmp_path / "state" / "ledger.db").exists()  # opened (the run planned), and holds no run (below)
    assert_nothing_written(seeded, tmp_path / "state", f"readonly.{seeded.topic}", subjects)
    assert leaks(SECRETS, {"stdout": done.stdout, "stderr": done.stderr, **written(tmp_path / "state")}) == []


TLS_REFUSED = {
    "no CA file (the system's trust)": lambda pki: {},
    "another CA": lambda pki: {"ssl.ca.location": str(pki.wrong_ca)},
}


@pytest.mark.parametrize("case", list(TLS_REFUSED))
def test_a_registry_certificate_not_trusted_is_refused_in_one_line(
    seeded: Seeded, guards: Guards, tmp_path: Path, case: str
) -> None:
    """The source registry's settings lack its CA (or name another): the TLS handshake fails, exit 2 before
    anything is written, one line saying the certificate is not trusted and to give its CA as ssl.ca.location."""
    source = settings_file(
        tmp_path, "source", **{"basic.auth.user.info": basic(SOURCE_USERS[0]), **TLS_REFUSED[case](seeded.pki)}
    )
    target = settings_file(
        tmp_path, "target", **{"bearer.auth.token": SECRETS["target token"], "ssl.ca.location": str(seeded.pki.ca)}
    )
    subjects = set(client(seeded.registries.target).get_subjects())
    done = kafka_migrate(seeded, guards, tmp_path / "state", "untrusted.{topic}", source, target)
    line = refusal_line(done)
    assert f"Schema registry {guards.source.url}" in line and "certificate is not trusted" in line, line
    assert "ssl.ca.location" in line and "--source-registry-config" in line, line
    assert guards.source.tls_failures >= 1 and not guards.source.requests  # no request got through
    assert_nothing_written(seeded, tmp_path / "state", f"untrusted.{seeded.topic}", subjects)
    assert leaks(SECRETS, {"stdout": done.stdout, "stderr": done.stderr, **written(tmp_path / "state")}) == []


def test_a_ca_file_that_does_not_exist_is_refused_in_one_line(seeded: Seeded, guards: Guards, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-ca.pem"
    source = settings_file(
        tmp_path, "source", **{"basic.auth.user.info": basic(SOURCE_USERS[0]), "ssl.ca.location": str(missing)}
    )
    target = settings_file(
        tmp_path, "target", **{"bearer.auth.token": SECRETS["target token"], "ssl.ca.location": str(seeded.pki.ca)}
    )
    done = kafka_migrate(seeded, guards, tmp_path / "state", "noca.{topic}", source, target)
    line = refusal_line(done)
    assert f"Schema registry {guards.source.url}" in line and str(missing) in line and "ssl.ca.location" in line, line
    assert not guards.source.requests and not guards.target.requests
    assert leaks(SECRETS, {"stdout": done.stdout, "stderr": done.stderr}) == []
