"""access/quotas/rules.py: client quotas carried to the target (user entities through the principal map), the sync's
plan (add, present, update, different, target only, remove) and the differences left, on data alone."""

from __future__ import annotations

import pytest

from kafka_migration.access.quotas.rules import carry_entity, plan_quotas, quota_differences
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.access import Quota, QuotaEntity, QuotaKey

ALICE = QuotaEntity.of(user="alice")
ALICE_APP = QuotaEntity.of(client_id="app", user="alice")  # given in any order, held in Kafka's
DEFAULT_USER = QuotaEntity.of(user=None)
APP = QuotaEntity.of(client_id="app")
DEFAULT_CLIENT = QuotaEntity.of(client_id=None)
USER_DEFAULT_CLIENT = QuotaEntity.of(user="alice", client_id=None)
IP = QuotaEntity.of(ip="10.1.2.3")
DEFAULT_IP = QuotaEntity.of(ip=None)


def q(entity: QuotaEntity, key: str, value: float) -> Quota:
    return Quota(entity, key, value)


def test_entities_read_as_kafka_configs_names_them() -> None:
    assert ALICE_APP.parts == (("user", "alice"), ("client-id", "app"))
    assert USER_DEFAULT_CLIENT.describe() == "user alice, client-id <default>"
    assert q(DEFAULT_IP, "connection_creation_rate", 10).describe() == "connection_creation_rate=10 for ip <default>"
    assert q(APP, "request_percentage", 12.5).describe() == "request_percentage=12.5 for client-id app"
    with pytest.raises(ConfigurationError, match="at most once"):
        QuotaEntity((("user", "a"), ("user", "b")))
    with pytest.raises(ConfigurationError, match="at most once"):
        QuotaEntity((("group", "a"),))


def test_every_entity_type_and_key_is_added_when_the_target_has_none() -> None:
    entities = [ALICE, ALICE_APP, DEFAULT_USER, APP, DEFAULT_CLIENT, USER_DEFAULT_CLIENT, IP, DEFAULT_IP]
    source = [q(e, key, 1000.0 + i) for i, e in enumerate(entities) for key in tuple(QuotaKey)]
    plan = plan_quotas(source, [])
    assert sorted(plan.add) == sorted(source)
    assert plan.present == plan.update == plan.different == plan.target_only == plan.remove == ()
    assert quota_differences(source, plan.target_after([])) == []


def test_the_plan_keeps_the_same_and_leaves_values_it_did_not_set_alone() -> None:
    source = [
        q(ALICE, "producer_byte_rate", 1024),
        q(APP, "consumer_byte_rate", 2048),
        q(IP, "connection_creation_rate", 5),
    ]
    target = [
        q(ALICE, "producer_byte_rate", 1024),  # the same
        q(APP, "consumer_byte_rate", 4096),  # another value, someone else's
        q(DEFAULT_USER, "request_percentage", 50),  # the target's own
    ]
    plan = plan_quotas(source, target)
    assert plan.add == (q(IP, "connection_creation_rate", 5),)
    assert plan.present == (q(ALICE, "producer_byte_rate", 1024),)
    assert [(c.quota, c.target_value) for c in plan.different] == [(q(APP, "consumer_byte_rate", 2048), 4096)]
    assert plan.target_only == (q(DEFAULT_USER, "request_percentage", 50),) and plan.update == plan.remove == ()
    after = plan.target_after(target)
    differences = quota_differences(source, after)
    assert [(d.entity, d.key, d.source, d.target) for d in differences] == [
        (DEFAULT_USER, "request_percentage", None, 50),
        (APP, "consumer_byte_rate", 2048, 4096),
    ]
    assert differences[1].describe() == "consumer_byte_rate for client-id app: source 2048, target 4096"


def test_only_values_this_tool_set_are_updated_or_removed() -> None:
    set_before = {q(ALICE, "producer_byte_rate", 1024), q(APP, "consumer_byte_rate", 2048)}
    source = [q(ALICE, "producer_byte_rate", 9999)]  # changed on the source; APP's quota gone from it
    target = [*set_before, q(IP, "connection_creation_rate", 7)]  # the ip quota is someone else's
    kept = plan_quotas(source, target, set_before=set_before)
    assert [(c.quota.value, c.target_value) for c in kept.update] == [(9999, 1024)]
    assert kept.remove == () and set(kept.target_only) == {
        q(APP, "consumer_byte_rate", 2048),
        q(IP, "connection_creation_rate", 7),
    }
    stale = plan_quotas(source, target, set_before=set_before, remove_stale=True)
    assert stale.remove == (q(APP, "consumer_byte_rate", 2048),)
    assert stale.target_only == (q(IP, "connection_creation_rate", 7),)  # never another's
    changed_since = plan_quotas([], [q(APP, "consumer_byte_rate", 1)], set_before=set_before, remove_stale=True)
    assert changed_since.remove == ()  # someone changed the value this tool set: no longer its own
    assert stale.target_after(target) == sorted(
        [q(ALICE, "producer_byte_rate", 9999), q(IP, "connection_creation_rate", 7)]
    )


def test_user_entities_follow_the_principal_map() -> None:
    principals = {"User:alice": "User:alice-dc2", "Group:ops": "Group:ops2"}
    assert carry_entity(ALICE_APP, principals) == QuotaEntity.of(user="alice-dc2", client_id="app")
    assert carry_entity(DEFAULT_USER, principals) == DEFAULT_USER  # the default stays the default
    assert carry_entity(APP, principals) == APP
    plan = plan_quotas(
        [q(ALICE, "producer_byte_rate", 1)], [q(QuotaEntity.of(user="alice-dc2"), "producer_byte_rate", 1)], principals
    )
    assert plan.add == () and len(plan.present) == 1
    assert quota_differences([q(ALICE, "producer_byte_rate", 1)], [q(ALICE, "producer_byte_rate", 1)], principals) != []


def test_a_map_that_merges_two_users_with_other_values_is_refused() -> None:
    source = [q(ALICE, "producer_byte_rate", 1), q(QuotaEntity.of(user="bob"), "producer_byte_rate", 2)]
    with pytest.raises(
        ConfigurationError, match="onto one target user with other values: producer_byte_rate for user x"
    ):
        plan_quotas(source, [], {"User:alice": "User:x", "User:bob": "User:x"})
    same = [q(ALICE, "producer_byte_rate", 1), q(QuotaEntity.of(user="bob"), "producer_byte_rate", 1)]
    assert len(plan_quotas(same, [], {"User:alice": "User:x", "User:bob": "User:x"}).add) == 1
