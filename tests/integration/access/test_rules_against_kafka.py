"""The product's model of Kafka's authorizer (kafka_migration/access/rules.py, ``Authorizer``) against Apache
Kafka's own ``StandardAuthorizer`` (harness/kafka/authorizer: the pinned jar set, in one JVM).

An access sync proves two clusters decide alike by running the model on both clusters' bindings, so a bug of the
model cancels out there. Here the same bindings and requests go to the model and to Kafka, and every decision must
agree. Hypothesis draws the binding sets: every resource type the model knows, LITERAL and PREFIXED, the ``*`` name,
ALLOW and DENY, every operation, specific hosts (IPv4 and IPv6, written short and long) and ``*``, named principals
and ``User:*``, super users, and allow.everyone.if.no.acl.found both ways. The requests of a drawn set are every
operation (ALL included; DESCRIBE and DESCRIBE_CONFIGS, which other operations imply) on every resource near a
binding's name (the name, longer, shorter) and on a few drawn ones, by the drawn principals and those the bindings
name, from the drawn client addresses and those the bindings' hosts name: some 250,000 decisions in seconds.

Derandomized, so CI runs the same cases every time; a disagreement fails naming the shrunk case (Hypothesis's
"Falsifying example") and each request decided differently. The run must also have used every rule of the model
(``RULES``), so that a change of the strategies cannot quietly stop testing one.

    .venv/bin/python -m pytest -q tests/integration/access/test_rules_against_kafka.py
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.kafka.authorizer import Case, KafkaAuthorizer
from kafka_migration.access.rules import NO_BINDING_ALLOWED, NO_BINDING_DENIED, NONE_MATCHING, SUPER_USER, Authorizer
from kafka_migration.model.access import (
    ALL,
    OPERATIONS,
    PATTERN_TYPES,
    PERMISSIONS,
    PREFIXED,
    RESOURCE_TYPES,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    Action,
    Decision,
)

pytestmark = pytest.mark.integration

EXAMPLES = 150  # binding sets; each is asked hundreds to thousands of requests
AT_LEAST = 10_000  # decisions compared in a run
PRINCIPALS = ("User:alice", "User:bob", "User:admin", "Group:alice")  # who asks (Group: a principal of another type)
BINDING_PRINCIPALS = (*PRINCIPALS, WILDCARD_PRINCIPAL)
SUPER_USERS = ("User:admin", "User:bob")
# Where a client connects from: a broker's authorizer compares its address as Java writes it (IPv6 in full, an
# IPv4-mapped address as IPv4) with a binding's host as the binding writes it.
CLIENT_ADDRESSES = ("10.0.0.1", "10.0.0.2", "::1", "2001:db8::1", "::ffff:10.0.0.1", "::10.0.0.1")
# A binding's host -> a client address it matches; a binding on "::1" (IPv6 written short) matches none.
ADDRESS_OF_HOST = {
    "10.0.0.1": "10.0.0.1",
    "10.0.0.2": "10.0.0.2",
    "0:0:0:0:0:0:0:1": "::1",
    "2001:db8:0:0:0:0:0:1": "2001:db8::1",
    "0:0:0:0:0:0:a00:1": "::10.0.0.1",
}
BINDING_HOSTS = (WILDCARD, *ADDRESS_OF_HOST, "::1")

# Short names over a small alphabet, so that names, prefixes and the * wildcard collide often.
names = st.text("ab", min_size=1, max_size=3) | st.just(WILDCARD) | st.text("ab*", min_size=1, max_size=3)
bindings = st.builds(
    AclBinding,
    resource_type=st.sampled_from(RESOURCE_TYPES),
    resource_name=names,
    pattern_type=st.sampled_from(PATTERN_TYPES),
    principal=st.sampled_from(BINDING_PRINCIPALS),
    host=st.sampled_from(BINDING_HOSTS),
    operation=st.sampled_from(OPERATIONS),
    permission=st.sampled_from(PERMISSIONS),
)


def near(name: str) -> set[str]:
    """Resource names that test a binding's name: itself, longer, and shorter (a prefix of it)."""
    return {name, f"{name}a", f"{name}b", *([name[:-1]] if len(name) > 1 else [])}


def requests_of(
    drawn: list[AclBinding], principals: list[str], addresses: list[str], resources: list[tuple[str, str]]
) -> tuple[Action, ...]:
    """Every operation on every resource near a binding's name and on the drawn ones, asked by the drawn principals
    and those the bindings name, from the drawn addresses and those the bindings' hosts name: so that most
    bindings match some requests, and every request of a binding's resource is also asked by others."""
    near_bindings = {(b.resource_type, name) for b in drawn for name in near(b.resource_name)}
    who = set(principals) | {b.principal for b in drawn if b.principal != WILDCARD_PRINCIPAL}
    where = set(addresses) | {ADDRESS_OF_HOST[b.host] for b in drawn if b.host in ADDRESS_OF_HOST}
    return tuple(
        Action(principal, address, kind, name, operation)
        for kind, name in sorted(near_bindings | set(resources))
        for principal in sorted(who)
        for address in sorted(where)
        for operation in OPERATIONS
    )


@dataclass(frozen=True)
class Disagreement:
    request: Action
    kafka: str
    model: str

    def describe(self) -> str:
        return f"{self.request.describe()}: Kafka {self.kafka}, the model {self.model}"


def rules_used(request: Action, decision: Decision) -> tuple[str, ...]:
    """The rules of the model that gave a decision: the run must have used each of them (``RULES``)."""
    if not isinstance(decision.by, AclBinding):
        return (decision.by,)
    binding = decision.by
    if binding.pattern_type == PREFIXED:
        pattern = "a prefix equal to the name" if binding.resource_name == request.resource_name else "a shorter prefix"
    else:
        pattern = "the * name" if binding.resource_name == WILDCARD else "the literal name"
    if binding.operation == ALL:
        operation = "ALL"
    else:
        operation = "the operation" if binding.operation == request.operation else "an implying operation"
    return (
        f"{binding.permission} on {pattern}",
        f"{binding.permission} of {operation}",
        "from any host" if binding.host == WILDCARD else "from the client's address",
        "of User:*" if binding.principal == WILDCARD_PRINCIPAL else "of the principal",
    )


RULES = frozenset(
    {
        SUPER_USER,
        NO_BINDING_ALLOWED,
        NO_BINDING_DENIED,
        NONE_MATCHING,
        *(
            f"{permission} on {pattern}"
            for permission in PERMISSIONS
            for pattern in ("a prefix equal to the name", "a shorter prefix", "the * name", "the literal name")
        ),
        *(f"{permission} of {operation}" for permission in PERMISSIONS for operation in ("ALL", "the operation")),
        "ALLOW of an implying operation",  # READ, WRITE, DELETE, ALTER imply DESCRIBE; ALTER_CONFIGS DESCRIBE_CONFIGS
        "from any host",
        "from the client's address",
        "of User:*",
        "of the principal",
    }
)
USED_AT_LEAST = 25  # decisions given by each rule in a run (the rarest gives some 100 in the derandomized run)


def compare(kafka: KafkaAuthorizer, case: Case, used: Counter[str]) -> list[Disagreement]:
    model = Authorizer(case.bindings, case.super_users, case.allow_if_no_acl)
    found = []
    for request, result in zip(case.requests, kafka.decide(case), strict=True):
        decision = model.decide(request)
        used.update(rules_used(request, decision))
        if decision.allowed != result.allowed:
            found.append(Disagreement(request, result.name, decision.describe()))
    return found


def report(case: Case, found: list[Disagreement]) -> str:
    lines = [
        f"Kafka's StandardAuthorizer and the model (kafka_migration/access/rules.py) decide {len(found)} of "
        f"{len(case.requests)} requests differently.",
        f"super.users={';'.join(case.super_users)!r} "
        f"allow.everyone.if.no.acl.found={str(case.allow_if_no_acl).lower()}",
        "bindings:",
        *(f"  {binding.describe()}" for binding in case.bindings),
        "decided differently (the first 8):",
        *(f"  {d.describe()}" for d in found[:8]),
    ]
    return "\n".join(lines)


def test_the_model_decides_every_request_as_kafkas_standard_authorizer(kafka_authorizer: KafkaAuthorizer) -> None:
    compared = 0
    used: Counter[str] = Counter()

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(
        drawn=st.lists(bindings, max_size=6),
        super_users=st.lists(st.sampled_from(SUPER_USERS), unique=True, max_size=2),
        allow_if_no_acl=st.booleans(),
        principals=st.lists(st.sampled_from(PRINCIPALS), min_size=1, max_size=2, unique=True),
        addresses=st.lists(st.sampled_from(CLIENT_ADDRESSES), min_size=1, max_size=2, unique=True),
        resources=st.lists(st.tuples(st.sampled_from(RESOURCE_TYPES), names), min_size=1, max_size=3),
    )
    def decides_alike(
        drawn: list[AclBinding],
        super_users: list[str],
        allow_if_no_acl: bool,
        principals: list[str],
        addresses: list[str],
        resources: list[tuple[str, str]],
    ) -> None:
        nonlocal compared
        requests = requests_of(drawn, principals, addresses, resources)
        case = Case(tuple(drawn), requests, tuple(super_users), allow_if_no_acl)
        found = compare(kafka_authorizer, case, used)
        compared += len(requests)
        if found:
            raise AssertionError(report(case, found))

    started = time.monotonic()
    decides_alike()
    print(f"{compared} decisions compared with Kafka's in {time.monotonic() - started:.1f} s")
    assert compared >= AT_LEAST, f"only {compared} decisions compared, fewer than {AT_LEAST}: draw more"
    rare = {rule: used[rule] for rule in sorted(RULES) if used[rule] < USED_AT_LEAST}
    assert not rare, f"rules of the model that decided fewer than {USED_AT_LEAST} requests (draw them more): {rare}"
