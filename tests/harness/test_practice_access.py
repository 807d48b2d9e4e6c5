"""The secrets of the practice clusters without a cluster: the passwords file of ``make clusters KIND=acl``
(harness/data/access.py), the SCRAM users' way into ``kafka-storage format`` (harness/kafka/node.py), and what
docs/access.md says the practice source holds. The seeding itself runs on Apache Kafka in
tests/integration/test_access_practice.py."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest

from harness.data import access
from harness.kafka import KafkaCluster, SaslSsl, ScramUser, node
from harness.kafka.security import ADMIN, write_private

REPO = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_secret_file_is_the_owners_alone_even_where_a_readable_one_was(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("old")
    path.chmod(0o644)
    write_private(path, '{"sasl.password": "x"}')
    assert _mode(path) == 0o600 and path.read_text() == '{"sasl.password": "x"}'


def test_each_seed_draws_new_passwords_for_every_user_into_a_file_of_the_owners(tmp_path: Path) -> None:
    path = tmp_path / "scram-passwords.json"
    first = access.write_passwords(path)
    assert json.loads(path.read_text()) == first and _mode(path) == 0o600
    assert set(first) == set(access.USERS) and len(set(first.values())) == len(access.USERS)
    assert all(len(password) >= 20 for password in first.values())
    second = access.write_passwords(path)
    assert json.loads(path.read_text()) == second
    assert all(second[user] != first[user] for user in access.USERS)


def test_the_walk_through_counts_what_the_seed_holds() -> None:
    section = (REPO / "docs" / "access.md").read_text().split("## Practise on two local clusters", 1)[1]
    section = section.split("\n## ", 1)[0]
    records = sum(count for _, count in access.TOPICS.values())
    assert f"with {records} records between them" in section
    assert f"the {len(access.BINDINGS)} bindings and {len(access.QUOTAS)} quotas it would add" in section
    for user in access.USERS:
        assert f"`{user}`" in section
    for topic in access.TOPICS:
        assert f"`{topic}`" in section
    for binding in access.BINDINGS:
        assert f"`{binding.resource_name}`" in section or binding.resource_name == "kafka-cluster", binding


def test_scram_passwords_reach_kafka_storage_format_in_a_file_of_the_owners_not_on_its_command_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    test_pki,  # type: ignore[no-untyped-def]
) -> None:
    """Formatting a SASL cluster's storage creates its SCRAM users (harness/kafka/node.py); the JVM takes them from a
    java @-file that only its owner may read and that is gone once the format ends."""
    user = ScramUser("app", "app-s3cret")
    cluster = KafkaCluster("fmt", tmp_path / "fmt", 1, 2, "AAAAAAAAAAAAAAAAAAAAAA", SaslSsl(test_pki, users=(user,)))
    seen: list[tuple[list[str], str, int]] = []

    def run(command: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        argument_file = Path(command[-1].removeprefix("@"))
        seen.append((command, argument_file.read_text(), _mode(argument_file)))
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(node.jars, "java_command", lambda main, **_: ["java", "-Xmx256m", "-cp", "jars", main])
    monkeypatch.setattr(node.subprocess, "run", run)
    cluster.format()

    [(command, arguments, mode)] = seen
    assert command == ["java", "-Xmx256m", "-cp", "jars", f"@{tmp_path / 'fmt' / 'format.args'}"]
    assert not any(secret in " ".join(command) for secret in ("app-s3cret", ADMIN.password))
    assert mode == 0o600
    assert arguments.splitlines() == [
        '"kafka.tools.StorageTool"',
        '"format"',
        '"--cluster-id"',
        '"AAAAAAAAAAAAAAAAAAAAAA"',
        '"--config"',
        f'"{tmp_path / "fmt" / "server.properties"}"',
        '"--standalone"',
        '"--add-scram"',
        f'"SCRAM-SHA-512=[name=admin,password={ADMIN.password}]"',
        '"--add-scram"',
        '"SCRAM-SHA-512=[name=app,password=app-s3cret]"',
    ]
    assert not (tmp_path / "fmt" / "format.args").exists()
