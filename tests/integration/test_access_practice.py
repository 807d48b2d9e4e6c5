"""docs/access.md's "Practise on two local clusters", run as written: its bash blocks, in order, in one shell from the
repository's root, against the ACL-enforcing pair its own ``make clusters KIND=acl`` starts and seeds
(harness/data/access.py). Only the ports differ: free ones (``PORTS=``), so that clusters someone else runs on
19092/29092 do not stand in the way; every documented command names the clusters by their settings files.

Then the target is checked without the product: its bindings listed with confluent-kafka's admin client, its quotas
with Apache Kafka's own kafka-configs.sh, and the users, logged in with their passwords, are allowed and refused by
the target's brokers as the source's bindings say. No password of the seeded users may appear in the output, in
make clusters' log, in the state directory (ledger, reports) or on a process's command line."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from harness.data import access
from harness.kafka.background import PASSWORDS
from harness.kafka.tools import kafka_configs_sasl
from harness.servers.ports import free_port
from kafka_migration.kafka.settings import client_settings

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "access.md"
HEADING = "## Practise on two local clusters"
CLUSTERS = REPO / ".clusters"
STATE = REPO / ".access-practice"


def blocks() -> list[str]:
    section = PAGE.read_text().split(f"\n{HEADING}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", section, flags=re.S)


def _target_bindings(settings: dict[str, object]) -> set[tuple[str, ...]]:
    admin = AdminClient(client_settings(settings))
    everything = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    return {
        (
            "CLUSTER" if b.restype == ResourceType.BROKER else b.restype.name,
            b.name,
            b.resource_pattern_type.name,
            b.principal,
            b.host,
            b.operation.name,
            b.permission_type.name,
        )
        for b in admin.describe_acls(everything, request_timeout=15).result(20)
    }


def _produce_as(settings: dict[str, object], user: str, password: str, topic: str) -> KafkaError | None:
    """One record to ``topic`` as ``user``: None when the broker took it, else its error."""
    login = {**settings, "sasl.username": user, "sasl.password": password, "enable.idempotence": False}
    outcome: list[KafkaError | None] = []
    producer = Producer(client_settings({**login, "message.timeout.ms": 15000}))
    producer.produce(topic, b"written by " + user.encode(), on_delivery=lambda error, _: outcome.append(error))
    producer.flush(20)
    assert outcome, f"no answer to {user}'s record within 20 s"
    return outcome[0]


def _command_lines() -> str:
    lines = []
    for proc in Path("/proc").iterdir():
        try:
            lines.append((proc / "cmdline").read_bytes().decode(errors="replace"))
        except OSError:
            continue
    return "\n".join(lines)


@pytest.fixture
def practice(kafka_jars: Path) -> Iterator[None]:
    """The practice's folders are the checkout's own (as for a reader); the clusters are stopped however it ends."""
    shutil.rmtree(STATE, ignore_errors=True)
    try:
        yield
    finally:
        subprocess.run([sys.executable, "-m", "harness.kafka", "down"], cwd=REPO, check=False, timeout=120)
        shutil.rmtree(STATE, ignore_errors=True)


def test_the_access_practice_runs_as_written(practice: None, tmp_path: Path) -> None:
    script = "\n".join(f"echo '>>> block {i}'\n{b}" for i, b in enumerate(blocks()))
    assert len(blocks()) >= 5 and script.count("make clusters KIND=acl\n") == 1
    script = script.replace("make clusters KIND=acl\n", f"make clusters KIND=acl PORTS={free_port()},{free_port()}\n")
    script = script.replace("make clusters-stop", ": stopped after the checks").replace(
        "rm -rf .access-practice", ": kept for the checks"
    )
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    for name in ("KAFKA_MIGRATION_STATE_DIR", "KAFKA_MIGRATION_LEDGER_URL"):
        env.pop(name, None)
    ended = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + script],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = ended.stdout
    assert ended.returncode == 0, out[-6000:] + ended.stderr[-4000:]

    # make clusters KIND=acl said what the source holds and where the passwords are.
    assert "The source holds 3 SCRAM users, 8 ACL bindings and 4 client quotas" in out
    # The run moved the topics first.
    assert "3 topics, 380 records copied, 3 verified" in out, out[-4000:]
    # The dry run without passwords: not proven, exit 1, naming the three users and the way out.
    blind = out.split(">>> block 2", 1)[1].split(">>> block 3", 1)[0]
    assert "would add 8 bindings" in blind and "Quotas: would set 4 quotas" in blind
    assert "needs a password: alice, bob, carol" in blind
    assert "NOT proven: 3 SCRAM users without a password on the target: give the passwords with --credentials" in blind
    assert blind.rstrip().endswith("exit code 1"), blind
    # With them: the dry run and the sync proven; every user logged in to the target; the live probes alike.
    assert "SCRAM: would create 3 credentials" in out and "SCRAM: created 3 credentials" in out
    assert out.count("Proven: both clusters decide all ") == 2
    for user in access.USERS:
        assert f"login as {user} on the target: proven" in out
        assert f"added        SCRAM SCRAM-SHA-512 user {user}, login proven" in out  # access show
    probes = re.search(r"live probes: (\d+) probes of 3 users, (\d+) answered alike by both clusters", out)
    assert probes is not None and probes.group(1) == probes.group(2) and int(probes.group(1)) > 3, out[-4000:]
    denied = "denied (TOPIC_AUTHORIZATION_FAILED)"
    for probe in (  # as the walk-through says: alice produces orders, bob reads it, carol is refused payments.cards
        "alice: produce to topic orders: source allowed, target allowed (same)",
        f"alice: consume topic orders: source {denied}, target {denied} (same)",
        f"bob: produce to topic orders: source {denied}, target {denied} (same)",
        "bob: consume topic orders: source allowed, target allowed (same)",
        f"carol: consume topic payments.cards: source {denied}, target {denied} (same)",
    ):
        assert f"  probe        {probe}\n" in out, out[-4000:]
    assert re.search(r"^Verdict: proven; \d+ actions decided on both clusters, 0 differently", out, flags=re.M)
    assert not (tmp_path / "home" / ".kafka-migration").exists()  # the practice kept to its own state directory

    # The target, asked without the product.
    target = json.loads((CLUSTERS / "target.json").read_text())
    assert _target_bindings(target) == {
        (b.resource_type, b.resource_name, b.pattern_type, b.principal, b.host, b.operation, b.permission)
        for b in access.BINDINGS
    }
    quotas = kafka_configs_sasl(target, tmp_path, "--describe", "--entity-type", "users")
    assert "user-principal 'alice' are producer_byte_rate=1048576.0" in quotas, quotas
    assert "user-principal 'bob' are consumer_byte_rate=2097152.0" in quotas, quotas
    assert "user-principal 'carol' are controller_mutation_rate=10.0" in quotas, quotas
    billing = kafka_configs_sasl(
        target, tmp_path, "--describe", "--entity-type", "users", "--entity-name", "bob", "--entity-type", "clients"
    )
    assert "client-id 'billing' are request_percentage=50.0" in billing, billing
    passwords = json.loads((CLUSTERS / PASSWORDS).read_text())
    assert _produce_as(target, "alice", passwords["alice"], "orders") is None
    refused = _produce_as(target, "bob", passwords["bob"], "orders")
    assert refused is not None and refused.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, refused

    # No password of theirs anywhere it must not be.
    assert oct((CLUSTERS / PASSWORDS).stat().st_mode & 0o777) == "0o600"
    kept = [out, ended.stderr, (CLUSTERS / "clusters.log").read_text(), _command_lines()]
    kept += [p.read_bytes().decode(errors="replace") for p in STATE.rglob("*") if p.is_file()]
    assert len(kept) > 5  # the ledger and the report's files were read
    for user, password in passwords.items():
        assert all(password not in text for text in kept), f"{user}'s password was written where it must not be"
