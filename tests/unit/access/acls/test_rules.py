"""access/acls/rules.py: ACL bindings carried to the target, the sync's plan, and the authorizer's decisions computed
with Apache Kafka's rules (StandardAuthorizer), on data alone."""

from __future__ import annotations

import time

import pytest

from kafka_migration.access.acls.rules import (
    NO_BINDING_ALLOWED,
    NO_BINDING_DENIED,
    NONE_MATCHING,
    SUPER_USER,
    Authorizer,
    Refused,
    carrier,
    client_address,
    decision_differences,
    plan_bindings,
    selection,
    translate,
)
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.access import AclBinding, Action, PatternType, PermissionType, ResourceType


def acl(
    name: str,
    operation: str,
    permission: str = PermissionType.ALLOW,
    principal: str = "User:app",
    pattern: str = PatternType.LITERAL,
    kind: str = ResourceType.TOPIC,
    host: str = "*",
) -> AclBinding:
    return AclBinding(kind, name, pattern, principal, host, operation, permission)


def ask(
    name: str, operation: str, principal: str = "User:app", kind: str = ResourceType.TOPIC, host: str = "10.0.0.1"
) -> Action:
    return Action(principal, host, kind, name, operation)


# -- the authorizer's decision -----------------------------------------------------------------------------------


def test_a_literal_allow_allows_its_operation_only() -> None:
    authorizer = Authorizer([acl("orders", "WRITE")])
    assert authorizer.decide(ask("orders", "WRITE")).allowed
    assert not authorizer.decide(ask("orders", "READ")).allowed
    assert authorizer.decide(ask("orders", "READ")).by == NONE_MATCHING
    assert not authorizer.decide(ask("orders", "WRITE", principal="User:other")).allowed


def test_deny_wins_over_allow_whatever_the_order() -> None:
    bindings = [acl("orders", "ALL"), acl("ord", "WRITE", PermissionType.DENY, pattern=PatternType.PREFIXED)]
    for ordered in (bindings, bindings[::-1]):
        decision = Authorizer(ordered).decide(ask("orders", "WRITE"))
        assert not decision.allowed and decision.by == bindings[1]


def test_prefixed_and_wildcard_patterns_and_principals() -> None:
    authorizer = Authorizer(
        [
            acl("pay.", "READ", pattern=PatternType.PREFIXED),
            acl("*", "DESCRIBE", principal="User:*"),
            acl("audit", "READ", principal="User:*", kind=ResourceType.GROUP),
        ]
    )
    assert authorizer.decide(ask("pay.eu", "READ")).allowed
    assert not authorizer.decide(ask("pa", "READ")).allowed  # shorter than the prefix
    assert authorizer.decide(ask("anything", "DESCRIBE", principal="User:nobody")).allowed
    assert authorizer.decide(ask("audit", "READ", principal="User:x", kind=ResourceType.GROUP)).allowed
    assert not authorizer.decide(ask("audit", "READ", principal="User:x")).allowed  # a TOPIC named audit: none


def test_a_prefix_matches_the_name_equal_to_it() -> None:
    """Kafka's PREFIXED pattern matches every name that starts with it, the prefix itself included. Asked of one
    cluster alone: comparing two clusters' decisions cannot see a rule both get wrong the same way."""
    allowed = Authorizer([acl("pay.", "READ", pattern=PatternType.PREFIXED)]).decide(ask("pay.", "READ"))
    assert allowed.allowed and allowed.by == acl("pay.", "READ", pattern=PatternType.PREFIXED)
    denied = Authorizer(
        [acl("orders", "ALL"), acl("orders", "WRITE", PermissionType.DENY, pattern=PatternType.PREFIXED)]
    )
    assert denied.decide(ask("orders", "WRITE")).by == acl(
        "orders", "WRITE", PermissionType.DENY, pattern=PatternType.PREFIXED
    )
    assert not denied.decide(ask("orders", "WRITE")).allowed


def test_implied_describe_for_allow_only() -> None:
    """READ, WRITE, DELETE and ALTER allow DESCRIBE; ALTER_CONFIGS allows DESCRIBE_CONFIGS; a DENY of READ does
    not deny DESCRIBE (Kafka's StandardAuthorizerData.findResult)."""
    for operation in ("READ", "WRITE", "DELETE", "ALTER"):
        assert Authorizer([acl("t", operation)]).decide(ask("t", "DESCRIBE")).allowed, operation
    assert not Authorizer([acl("t", "CREATE")]).decide(ask("t", "DESCRIBE")).allowed
    assert Authorizer([acl("t", "ALTER_CONFIGS")]).decide(ask("t", "DESCRIBE_CONFIGS")).allowed
    both = Authorizer([acl("t", "ALL"), acl("t", "READ", PermissionType.DENY)])
    assert both.decide(ask("t", "DESCRIBE")).allowed and not both.decide(ask("t", "READ")).allowed
    assert not Authorizer([acl("t", "ALL"), acl("t", "ALL", PermissionType.DENY)]).decide(ask("t", "DESCRIBE")).allowed


def test_hosts_super_users_and_the_default() -> None:
    authorizer = Authorizer([acl("t", "READ", host="10.0.0.1")], super_users={"User:admin"})
    assert authorizer.decide(ask("t", "READ", host="10.0.0.1")).allowed
    assert not authorizer.decide(ask("t", "READ", host="10.0.0.2")).allowed
    assert authorizer.decide(ask("t", "DELETE", principal="User:admin")).by == SUPER_USER
    assert Authorizer([]).decide(ask("t", "READ")).by == NO_BINDING_DENIED
    open_cluster = Authorizer([acl("t", "READ")], allow_if_no_acl=True)
    assert open_cluster.decide(ask("u", "READ")).by == NO_BINDING_ALLOWED  # no binding on u at all
    assert not open_cluster.decide(ask("t", "WRITE")).allowed  # t has bindings, none for WRITE


def test_the_literal_wildcard_does_not_match_a_longer_name_beginning_with_an_asterisk() -> None:
    """As Kafka 4.2.1's StandardAuthorizer decides (found by tests/integration/access/test_rules_against_kafka.py):
    it takes the LITERAL ``*`` for a literal name that is only a prefix of ``*x`` and skips it. A group or
    transactional id may be named so (a topic may not); the binding then counts as none on that resource."""
    authorizer = Authorizer([acl("*", "READ", kind=ResourceType.GROUP)])
    assert authorizer.decide(ask("*", "READ", kind=ResourceType.GROUP)).allowed
    assert authorizer.decide(ask("x*", "READ", kind=ResourceType.GROUP)).allowed
    assert authorizer.decide(ask("*x", "READ", kind=ResourceType.GROUP)).by == NO_BINDING_DENIED
    open_cluster = Authorizer([acl("*", "READ", PermissionType.DENY, kind=ResourceType.GROUP)], allow_if_no_acl=True)
    assert open_cluster.decide(ask("*x", "READ", kind=ResourceType.GROUP)).by == NO_BINDING_ALLOWED
    assert not open_cluster.decide(ask("x", "READ", kind=ResourceType.GROUP)).allowed
    assert (
        Authorizer([acl("*", "READ", pattern=PatternType.PREFIXED, kind=ResourceType.GROUP)])
        .decide(ask("*x", "READ", kind=ResourceType.GROUP))
        .allowed
    )


def test_a_bindings_host_is_compared_with_the_client_address_as_java_writes_it() -> None:
    """StandardAuthorizer compares a binding's host, as written, with ``InetAddress.getHostAddress()`` of the
    client: IPv6 in full, in lower case, an IPv4-mapped address as IPv4 (found by the check against Kafka)."""
    assert client_address("::1") == "0:0:0:0:0:0:0:1"
    assert client_address("2001:DB8::0db8") == "2001:db8:0:0:0:0:0:db8"
    assert client_address("::ffff:10.0.0.1") == "10.0.0.1"
    assert client_address("::10.0.0.1") == "0:0:0:0:0:0:a00:1"
    assert client_address("fe80::1%eth0") == "fe80:0:0:0:0:0:0:1%eth0"
    assert client_address("10.0.0.1") == client_address("10.0.0.1") == "10.0.0.1"
    assert client_address("broker.example") == "broker.example"  # not an address: as it is
    long_form = Authorizer([acl("t", "READ", host="0:0:0:0:0:0:0:1"), acl("t", "WRITE", host="10.0.0.1")])
    assert long_form.decide(ask("t", "READ", host="::1")).allowed
    assert long_form.decide(ask("t", "WRITE", host="::ffff:10.0.0.1")).allowed
    short_form = Authorizer([acl("t", "READ", host="::1")])
    assert short_form.decide(ask("t", "READ", host="::1")).by == NONE_MATCHING  # Kafka matches no client


# -- carrying bindings to the target -----------------------------------------------------------------------------


def test_rename_and_principal_mapping() -> None:
    principals = {"User:app": "User:app-dc2"}
    assert translate(acl("orders", "WRITE"), "dc1.{topic}", principals) == acl(
        "dc1.orders", "WRITE", principal="User:app-dc2"
    )
    prefixed = acl("pay.", "READ", pattern=PatternType.PREFIXED)
    assert translate(prefixed, "dc1.{topic}") == acl("dc1.pay.", "READ", pattern=PatternType.PREFIXED)
    assert translate(acl("*", "DESCRIBE"), "dc1.{topic}") == acl("*", "DESCRIBE")  # every topic, on either side
    group = acl("billing", "READ", kind=ResourceType.GROUP)
    assert translate(group, "dc1.{topic}") == group  # groups keep their names
    refused = translate(prefixed, "{topic}.copy")
    assert isinstance(refused, Refused) and "adds '.copy' after the topic name" in refused.reason


def test_the_plan_adds_keeps_refuses_names_conflicts_and_removes_only_its_own() -> None:
    source = [acl("orders", "WRITE"), acl("orders", "READ"), acl("pay.", "READ", pattern=PatternType.PREFIXED)]
    created_earlier = acl("gone", "READ")  # this tool wrote it; the source no longer has it
    foreign = acl("theirs", "READ")  # someone else's: never touched
    deny = acl("orders", "WRITE", PermissionType.DENY, principal="User:intern")
    target = [acl("orders", "READ"), created_earlier, foreign, deny]
    plan = plan_bindings(source, target, "{topic}.copy", created_before=[created_earlier], remove_stale=True)
    assert plan.add == (acl("orders.copy", "READ"), acl("orders.copy", "WRITE"))
    assert plan.present == ()  # orders READ is on the target under the old name, not the renamed one
    assert [r.binding for r in plan.refused] == [acl("pay.", "READ", pattern=PatternType.PREFIXED)]
    assert plan.conflicts == (deny,) and plan.remove == (created_earlier,)
    same_names = plan_bindings(source[:2], target, created_before=[created_earlier])
    assert same_names.present == (acl("orders", "READ"),) and same_names.remove == ()  # add-only by default


def test_a_binding_of_an_unknown_kind_is_refused_naming_it() -> None:
    with pytest.raises(ConfigurationError, match="operation 'WRTIE' is not one of ALL, READ, WRITE"):
        acl("orders", "WRTIE")


# -- proving the two clusters decide alike -----------------------------------------------------------------------


def test_after_a_sync_the_clusters_decide_alike_and_a_planted_difference_is_found() -> None:
    source = [
        acl("orders", "WRITE"),
        acl("orders", "READ", principal="User:reader"),
        acl("pay.", "READ", pattern=PatternType.PREFIXED, principal="User:reader"),
        acl("billing", "READ", kind=ResourceType.GROUP, principal="User:reader"),
        acl("tx-", "WRITE", pattern=PatternType.PREFIXED, kind=ResourceType.TRANSACTIONAL_ID),
        acl("orders", "READ", PermissionType.DENY, principal="User:intern"),
        acl("*", "DESCRIBE", principal="User:*"),
    ]
    rename, principals = "dc1.{topic}", {"User:reader": "User:reader-dc2"}
    plan = plan_bindings(source, [], rename, principals)
    synced = Authorizer(plan.add + plan.present)
    actions = selection(source)
    carry = carrier(rename, principals)
    assert len(actions) > 40
    assert decision_differences(Authorizer(source), synced, actions, carry) == []
    planted = Authorizer([*plan.add, acl("dc1.orders", "WRITE", PermissionType.DENY)])  # a DENY the source lacks
    found = decision_differences(Authorizer(source), planted, actions, carry)
    assert [d.source_action for d in found] == [ask("orders", "WRITE", host="203.0.113.7")]
    assert "target (User:app WRITE on TOPIC dc1.orders from 203.0.113.7) denied by DENY" in found[0].describe()


def test_ten_thousand_bindings_decide_their_selection_quickly() -> None:
    """The scale the issue names (10,000 bindings); not a timing assertion of the product's speed, a bound that
    catches a decision that scans every binding (quadratic: minutes)."""
    bindings = [acl(f"topic-{i}", op, principal=f"User:u{i % 1000}") for i in range(5000) for op in ("READ", "WRITE")]
    authorizer = Authorizer(bindings)
    actions = selection(bindings)
    started = time.monotonic()
    assert decision_differences(authorizer, authorizer, actions, carrier()) == []
    assert len(actions) == 5000 * 8 and time.monotonic() - started < 60


# -- DELEGATION_TOKEN and USER resources -------------------------------------------------------------------------


def test_token_and_user_resources_are_decided_with_their_own_operations() -> None:
    from kafka_migration.model.access import ResourceType

    authorizer = Authorizer(
        [
            acl("User:bob", "CREATE_TOKENS", principal="User:ops", kind=ResourceType.USER),
            acl(
                "User:team-",
                "DESCRIBE_TOKENS",
                principal="User:ops",
                kind=ResourceType.USER,
                pattern=PatternType.PREFIXED,
            ),
            acl(
                "User:team-secret", "DESCRIBE_TOKENS", PermissionType.DENY, principal="User:ops", kind=ResourceType.USER
            ),
            acl("token-1", "DESCRIBE", principal="User:ops", kind=ResourceType.DELEGATION_TOKEN),
        ]
    )
    assert authorizer.decide(ask("User:bob", "CREATE_TOKENS", "User:ops", ResourceType.USER)).allowed
    assert not authorizer.decide(
        ask("User:bob", "DESCRIBE_TOKENS", "User:ops", ResourceType.USER)
    ).allowed  # nothing implied
    assert authorizer.decide(ask("User:team-a", "DESCRIBE_TOKENS", "User:ops", ResourceType.USER)).allowed
    assert not authorizer.decide(
        ask("User:team-secret", "DESCRIBE_TOKENS", "User:ops", ResourceType.USER)
    ).allowed  # DENY wins
    assert authorizer.decide(ask("token-1", "DESCRIBE", "User:ops", ResourceType.DELEGATION_TOKEN)).allowed
    assert not authorizer.decide(ask("token-2", "DESCRIBE", "User:ops", ResourceType.DELEGATION_TOKEN)).allowed


def test_a_user_resource_follows_the_principal_map_and_decides_alike() -> None:
    from kafka_migration.model.access import ResourceType

    principals = {"User:bob": "User:bob-dc2", "User:ops": "User:ops-dc2"}
    source = [
        acl("User:bob", "CREATE_TOKENS", principal="User:ops", kind=ResourceType.USER),
        acl("*", "DESCRIBE_TOKENS", principal="User:ops", kind=ResourceType.USER),
        acl("token-1", "DESCRIBE", principal="User:bob", kind=ResourceType.DELEGATION_TOKEN),
    ]
    carried = [translate(b, "dc1.{topic}", principals) for b in source]
    assert carried == [
        acl("User:bob-dc2", "CREATE_TOKENS", principal="User:ops-dc2", kind=ResourceType.USER),
        acl("*", "DESCRIBE_TOKENS", principal="User:ops-dc2", kind=ResourceType.USER),
        acl(
            "token-1", "DESCRIBE", principal="User:bob-dc2", kind=ResourceType.DELEGATION_TOKEN
        ),  # a token id is not renamed
    ]
    plan = plan_bindings(source, [], "dc1.{topic}", principals)
    check = carrier("dc1.{topic}", principals)
    assert decision_differences(Authorizer(source), Authorizer(plan.add), selection(source), check) == []
    unmapped = [
        acl("User:bob", "CREATE_TOKENS", principal="User:ops-dc2", kind=ResourceType.USER)
    ]  # the name left as it was
    found = decision_differences(Authorizer(source), Authorizer(unmapped), selection(source), check)
    assert {(d.target_action.resource_name, d.target_action.operation) for d in found} >= {
        ("User:bob-dc2", "CREATE_TOKENS")
    }


def test_a_user_prefix_that_the_principal_map_breaks_is_refused() -> None:
    from kafka_migration.model.access import ResourceType

    prefix = acl(
        "User:team-", "DESCRIBE_TOKENS", principal="User:ops", kind=ResourceType.USER, pattern=PatternType.PREFIXED
    )
    kept = translate(prefix, principals={"User:team-a": "User:team-a2", "User:other": "User:x"})
    assert kept == prefix  # every mapped user inside the prefix stays inside it
    refused = translate(prefix, principals={"User:team-a": "User:a-dc2"})
    assert isinstance(refused, Refused) and "moves User:team-a out of the prefix 'User:team-'" in refused.reason


# -- each decision exactly: allowed is True or False (a difference is found by comparing them), and by what ----------


def test_every_decision_says_true_or_false_and_by_what() -> None:
    deny = acl("orders", "READ", PermissionType.DENY)
    allow = acl("orders", "READ", principal="User:*")
    authorizer = Authorizer([deny, allow, acl("audit", "WRITE")], super_users={"User:admin"})
    decisions = {
        "super user": authorizer.decide(ask("orders", "READ", principal="User:admin")),
        "deny": authorizer.decide(ask("orders", "READ")),
        "allow": authorizer.decide(ask("orders", "READ", principal="User:other")),
        "no binding": authorizer.decide(ask("clicks", "READ")),
        "none matching": authorizer.decide(ask("audit", "READ")),
    }
    assert {name: (d.allowed, d.by) for name, d in decisions.items()} == {
        "super user": (True, SUPER_USER),
        "deny": (False, deny),
        "allow": (True, allow),
        "no binding": (False, NO_BINDING_DENIED),
        "none matching": (False, NONE_MATCHING),
    }
    everyone = Authorizer([acl("audit", "WRITE")], allow_if_no_acl=True).decide(ask("clicks", "READ"))
    assert (everyone.allowed, everyone.by) == (True, NO_BINDING_ALLOWED)


def test_a_one_character_prefix_matches_and_alter_configs_allows_describe_configs_only() -> None:
    authorizer = Authorizer([acl("o", "READ", pattern=PatternType.PREFIXED), acl("orders", "ALTER_CONFIGS")])
    assert authorizer.decide(ask("orders", "READ")).allowed is True
    assert authorizer.decide(ask("orders", "DESCRIBE_CONFIGS")).allowed is True
    assert authorizer.decide(ask("orders", "WRITE")).allowed is False  # ALTER_CONFIGS implies nothing else
    assert Authorizer([acl("orders", "ALTER_CONFIGS")]).decide(ask("orders", "DESCRIBE")).allowed is False


# -- carrying: the default rename, the refusals' wording, USER resources ---------------------------------------------


def test_without_a_rename_a_topic_binding_keeps_its_name() -> None:
    assert translate(acl("orders", "READ")) == acl("orders", "READ")
    assert translate(acl("ord", "READ", pattern=PatternType.PREFIXED), principals={"User:app": "User:app2"}) == acl(
        "ord", "READ", principal="User:app2", pattern=PatternType.PREFIXED
    )
    assert carrier()(ask("orders", "READ")) == ask("orders", "READ")


def test_the_refusals_say_why_and_the_way_out_in_full() -> None:
    prefix = acl("orders", "READ", pattern=PatternType.PREFIXED)
    assert translate(prefix, "{topic}.copy") == Refused(
        prefix,
        "rename '{topic}.copy' adds '.copy' after the topic name, so no prefix on the target matches exactly the "
        "renamed topics of prefix 'orders'; grant it on the target by hand (it is not moved), or migrate with a "
        "rename that only prepends",
    )
    from kafka_migration.model.access import ResourceType

    users = acl(
        "User:team-", "DESCRIBE_TOKENS", principal="User:ops", kind=ResourceType.USER, pattern=PatternType.PREFIXED
    )
    moved = {f"User:team-{n}": f"User:{n}-dc2" for n in "abcd"}
    assert translate(users, principals=moved) == Refused(
        users,
        "the principal map moves User:team-a, User:team-b, User:team-c out of the prefix 'User:team-', so no prefix "
        "on the target matches exactly the same users; grant it on the target by hand (it is not moved), or map "
        "them within the prefix",
    )
    kept = translate(users, principals={"User:ops": "User:ops-dc2"})
    assert kept == acl(
        "User:team-", "DESCRIBE_TOKENS", principal="User:ops-dc2", kind=ResourceType.USER, pattern=PatternType.PREFIXED
    )


def test_a_user_resource_nobody_maps_keeps_its_name_when_asked_on_the_target() -> None:
    from kafka_migration.model.access import ResourceType

    check = carrier("dc1.{topic}", {"User:bob": "User:bob-dc2"})
    assert check(ask("User:carol", "CREATE_TOKENS", principal="User:bob", kind=ResourceType.USER)) == ask(
        "User:carol", "CREATE_TOKENS", principal="User:bob-dc2", kind=ResourceType.USER
    )


def test_refused_bindings_are_listed_in_order() -> None:
    first, second = acl("a", "READ", pattern=PatternType.PREFIXED), acl("b", "READ", pattern=PatternType.PREFIXED)
    plan = plan_bindings([second, first], [], "{topic}.copy")
    assert [r.binding for r in plan.refused] == [first, second]


def test_the_selection_asks_as_a_named_principal_from_the_bindings_host_on_sample_names() -> None:
    wildcard = acl("*", "READ", principal="User:*", kind=ResourceType.GROUP)
    from_host = acl("orders", "WRITE", host="10.1.1.1")
    asked = selection([wildcard, from_host])
    assert {(a.principal, a.host, a.resource_name) for a in asked} == {
        ("User:km-any-principal", "203.0.113.7", "km-any-resource"),
        ("User:app", "10.1.1.1", "orders"),
    }
