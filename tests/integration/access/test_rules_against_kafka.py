"""The product's model of Kafka's authorizer (kafka_migration/access/acls/rules.py, ``Authorizer``) against Apache
Kafka's own ``StandardAuthorizer`` (harness/kafka/authorizer: the pinned jar set, in one JVM).

An access sync proves two clusters decide alike by running the model on both clusters' bindings, so a bug of the
model cancels out there. Here the same bindings and requests go to the model and to Kafka, and every decision must
agree. Hypothesis draws the binding sets: every resource type the model knows, LITERAL and PREFIXED, the ``*`` name,
ALLOW and DENY, every operation, specific hosts (IPv4 and IPv6, written short and long) and ``*``, named principals
and ``User:*``, super users, and allow.everyone.if.no.acl.found both ways; half the bindings are siblings of an
earlier one with the other permission, so that ALLOW and DENY meet on one resource. The requests of a drawn set are
every operation (ALL included; DESCRIBE and DESCRIBE_CONFIGS, which other operations imply) on every resource near
a binding's name (the name, longer, shorter) and on a few drawn ones, by the drawn principals and those the
bindings name, from the drawn client addresses and those the bindings' hosts name: some 150,000 decisions in
seconds.

Derandomized, so CI runs the same cases every time; a disagreement fails naming the shrunk case (Hypothesis's
"Falsifying example") and each request decided differently. The run must also have used every rule of the model
(``RULES``), a DENY winning over a matching ALLOW and DESCRIBE allowed beside a DENY of READ included, so that a
change of the strategies cannot quietly stop testing one. Rule bugs planted in the model (a prefix not matching the
name equal to it, a DENY losing to an earlier ALLOW, the host ignored, a DENY of READ denying DESCRIBE) each fail
it with a case of one or two bindings.

    .venv/bin/python -m pytest -q tests/integration/access/test_rules_against_kafka.py
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, replace
from functools import cached_property

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.kafka.authorizer import Case, KafkaAuthorizer
from kafka_migration.access.acls.rules import (
    NO_BINDING_ALLOWED,
    NO_BINDING_DENIED,
    NONE_MATCHING,
    SUPER_USER,
    Authorizer,
)
from kafka_migration.model.access import (
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    Action,
    Decision,
    Operation,
    PatternType,
    PermissionType,
    ResourceType,
)

pytestmark = pytest.mark.integration

EXAMPLES = 250  # binding sets; each is asked hundreds to thousands of requests
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
    resource_type=st.sampled_from(tuple(ResourceType)),
    resource_name=names,
    pattern_type=st.sampled_from(tuple(PatternType)),
    principal=st.sampled_from(BINDING_PRINCIPALS),
    host=st.sampled_from(BINDING_HOSTS),
    operation=st.sampled_from(tuple(Operation)),
    permission=st.sampled_from(tuple(PermissionType)),
)
# Besides its permission, a sibling may change one of these of the binding it copies.
CHANGES = {
    "operation": st.sampled_from(tuple(Operation)),
    "pattern_type": st.sampled_from(tuple(PatternType)),
    "resource_name": names,
    "host": st.sampled_from(BINDING_HOSTS),
    "principal": st.sampled_from(BINDING_PRINCIPALS),
}


@st.composite
def binding_sets(draw: st.DrawFn, most: int = 6) -> list[AclBinding]:
    """Up to ``most`` bindings, each a new one or the sibling of an earlier one: its permission turned (ALLOW to
    DENY or back), and maybe one more field changed. Independent bindings seldom meet on one resource, principal
    and host, and rules such as "a DENY wins over an ALLOW" or "a DENY of READ does not deny DESCRIBE" show only
    when an ALLOW and a DENY do."""
    drawn: list[AclBinding] = []
    for _ in range(draw(st.integers(0, most))):
        if drawn and draw(st.booleans()):
            earlier = draw(st.sampled_from(drawn))
            turned = {
                "permission": PermissionType.DENY
                if earlier.permission == PermissionType.ALLOW
                else PermissionType.ALLOW
            }
            change = draw(st.sampled_from((None, *CHANGES)))
            if change is not None:
                turned[change] = draw(CHANGES[change])
            drawn.append(replace(earlier, **turned))
        else:
            drawn.append(draw(bindings))
    return drawn


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
        for operation in tuple(Operation)
    )


@dataclass(frozen=True)
class Disagreement:
    request: Action
    kafka: str
    model: str

    def describe(self) -> str:
        return f"{self.request.describe()}: Kafka {self.kafka}, the model {self.model}"


# What an ALLOW of these operations also allows (Kafka's documentation: "Operations and Resources").
IMPLIED = {"READ": "DESCRIBE", "WRITE": "DESCRIBE", "DELETE": "DESCRIBE", "ALTER": "DESCRIBE"}
IMPLIED_CONFIGS = {"ALTER_CONFIGS": "DESCRIBE_CONFIGS"}
DENY_OVER_ALLOW = "DENY over an ALLOW that matches too"
IMPLIED_DESPITE_DENY = "DESCRIBE(_CONFIGS) allowed beside a DENY of the operation implying it"


class Variants:
    """The model on the case's bindings changed, built when first asked: to tell whether a decision needed the
    rules that only show when an ALLOW and a DENY meet."""

    def __init__(self, case: Case) -> None:
        self.case = case

    def _model(self, bindings: list[AclBinding]) -> Authorizer:
        return Authorizer(bindings, self.case.super_users, self.case.allow_if_no_acl)

    @cached_property
    def allows_only(self) -> Authorizer:
        return self._model([b for b in self.case.bindings if b.permission == PermissionType.ALLOW])

    @cached_property
    def implied_denies(self) -> Authorizer:
        """As if a DENY of READ denied DESCRIBE too (which it does not)."""
        implied = {**IMPLIED, **IMPLIED_CONFIGS}
        extra = [
            replace(b, operation=implied[b.operation])
            for b in self.case.bindings
            if b.permission == PermissionType.DENY and b.operation in implied
        ]
        return self._model([*self.case.bindings, *extra])


def rules_used(request: Action, decision: Decision, variants: Variants) -> tuple[str, ...]:
    """The rules of the model that gave a decision: the run must have used each of them (``RULES``)."""
    if not isinstance(decision.by, AclBinding):
        return (decision.by,)
    binding = decision.by
    if binding.pattern_type == PatternType.PREFIXED:
        pattern = "a prefix equal to the name" if binding.resource_name == request.resource_name else "a shorter prefix"
    else:
        pattern = "the * name" if binding.resource_name == WILDCARD else "the literal name"
    if binding.operation == Operation.ALL:
        operation = "ALL"
    else:
        operation = "the operation" if binding.operation == request.operation else "an implying operation"
    used = [
        f"{binding.permission} on {pattern}",
        f"{binding.permission} of {operation}",
        "from any host" if binding.host == WILDCARD else "from the client's address",
        "of User:*" if binding.principal == WILDCARD_PRINCIPAL else "of the principal",
    ]
    if binding.permission == PermissionType.DENY and variants.allows_only.decide(request).allowed:
        used.append(DENY_OVER_ALLOW)
    implied = request.operation in ("DESCRIBE", "DESCRIBE_CONFIGS")
    if implied and decision.allowed and not variants.implied_denies.decide(request).allowed:
        used.append(IMPLIED_DESPITE_DENY)
    return tuple(used)


RULES = frozenset(
    {
        SUPER_USER,
        NO_BINDING_ALLOWED,
        NO_BINDING_DENIED,
        NONE_MATCHING,
        *(
            f"{permission} on {pattern}"
            for permission in tuple(PermissionType)
            for pattern in ("a prefix equal to the name", "a shorter prefix", "the * name", "the literal name")
        ),
        *(
            f"{permission} of {operation}"
            for permission in tuple(PermissionType)
            for operation in ("ALL", "the operation")
        ),
        "ALLOW of an implying operation",  # READ, WRITE, DELETE, ALTER imply DESCRIBE; ALTER_CONFIGS DESCRIBE_CONFIGS
        "from any host",
        "from the client's address",
        "of User:*",
        "of the principal",
        DENY_OVER_ALLOW,
        IMPLIED_DESPITE_DENY,
    }
)
USED_AT_LEAST = 25  # decisions given by each rule in a run


def compare(kafka: KafkaAuthorizer, case: Case, used: Counter[str]) -> list[Disagreement]:
    model = Authorizer(case.bindings, case.super_users, case.allow_if_no_acl)
    variants = Variants(case)
    found = []
    for request, result in zip(case.requests, kafka.decide(case), strict=True):
        decision = model.decide(request)
        used.update(rules_used(request, decision, variants))
        if decision.allowed != result.allowed:
            found.append(Disagreement(request, result.name, decision.describe()))
    return found


def report(case: Case, found: list[Disagreement]) -> str:
    lines = [
        f"Kafka's StandardAuthorizer and the model (kafka_migration/access/acls/rules.py) decide {len(found)} of "
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
        drawn=binding_sets(),
        super_users=st.lists(st.sampled_from(SUPER_USERS), unique=True, max_size=2),
        allow_if_no_acl=st.booleans(),
        principals=st.lists(st.sampled_from(PRINCIPALS), min_size=1, max_size=2, unique=True),
        addresses=st.lists(st.sampled_from(CLIENT_ADDRESSES), min_size=1, max_size=2, unique=True),
        resources=st.lists(st.tuples(st.sampled_from(tuple(ResourceType)), names), min_size=1, max_size=3),
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
