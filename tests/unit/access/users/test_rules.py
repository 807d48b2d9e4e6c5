"""access/users/rules.py: which SCRAM credentials move and which need a password."""

from __future__ import annotations

import pytest

from kafka_migration.access.users.rules import plan_users
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.access import Password, ScramCredential

ALICE = ScramCredential("alice", "SCRAM-SHA-512", 4096)
ALICE_256 = ScramCredential("alice", "SCRAM-SHA-256", 4096)
BOB = ScramCredential("bob", "SCRAM-SHA-512", 8192)


def test_a_user_moves_with_every_mechanism_only_with_a_password() -> None:
    target = [ScramCredential("bob", "SCRAM-SHA-512", 4096)]  # other iterations: not the same credential
    plan = plan_users([ALICE, ALICE_256, BOB], target, {"alice": Password("alice", "s3cret")})
    assert plan.add == (ALICE_256, ALICE) and plan.present == ()
    assert plan.needs_password == (BOB,) and plan.users_needing_a_password == ["bob"]
    assert plan_users([ALICE], [ALICE], {}).present == (ALICE,)


def test_a_password_for_a_user_the_source_lacks_is_refused_naming_it_not_its_secret() -> None:
    with pytest.raises(ConfigurationError, match="has no SCRAM credential for: alcie") as refused:
        plan_users([ALICE], [], {"alcie": Password("alcie", "hunter2")})
    assert "hunter2" not in str(refused.value)
