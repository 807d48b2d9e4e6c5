"""harness/data/access.py without a cluster: the passwords file of ``make clusters KIND=acl`` and what
docs/access.md says the practice source holds. The seeding itself runs on Apache Kafka in
tests/integration/test_access_practice.py."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from harness.data import access
from harness.kafka.security import write_private

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
