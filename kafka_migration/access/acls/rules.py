"""Pure rules of moving ACL bindings: how a binding is carried to the target (topic rename, principal mapping),
what a sync would add, keep, refuse and remove, and the authorizer's decision computed from a cluster's bindings
with Apache Kafka's own rules, so that both clusters can be proven to decide alike.

The decision follows Kafka's StandardAuthorizer (KRaft): a super user is allowed everything; otherwise the
bindings whose resource pattern matches (LITERAL: the name, or ``*`` for every name; PREFIXED: a prefix of the
name) are looked at, those of the principal or ``User:*`` and of the host or ``*``: a DENY of the operation (or
ALL) denies; else an ALLOW of the operation (or ALL; READ, WRITE, DELETE and ALTER also allow DESCRIBE, and
ALTER_CONFIGS allows DESCRIBE_CONFIGS, for ALLOW bindings only) allows; else, with no binding on the resource at
all, ``allow.everyone.if.no.acl.found`` decides (false by default), and with some, the action is denied.

Two details as Kafka 4.2.1 has them, found by checking this model against StandardAuthorizer itself
(tests/integration/access/test_rules_against_kafka.py): the LITERAL ``*`` does not match a longer name that
begins with ``*`` (a group ``*x``: StandardAuthorizer takes ``*`` there for a literal name that is a mere prefix,
and skips it; the name ``*`` itself it matches), and a binding's host is compared, as written, with the client's
address as Java writes it (``client_address``: a binding on ``::1`` matches no client, one on ``0:0:0:0:0:0:0:1``
matches a client connecting from ::1).
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache

from kafka_migration.model.access import (
    ACTIONS,
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
from kafka_migration.model.config import DEFAULT_RENAME
from kafka_migration.model.naming import renamed, split_template

IMPLIES_DESCRIBE = frozenset({Operation.DESCRIBE, Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER})
IMPLIES_DESCRIBE_CONFIGS = frozenset({Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS})
SUPER_USER = "super user"
NO_BINDING_ALLOWED = "no binding on the resource (allow.everyone.if.no.acl.found=true)"
NO_BINDING_DENIED = "no binding on the resource"
NONE_MATCHING = "no binding of this principal, host and operation"


@cache
def client_address(host: str) -> str:
    """A client's address as the broker's authorizer compares it with a binding's host: the text of Java's
    ``InetAddress.getHostAddress()``. IPv6 is written in full, each group in lower-case hex without leading zeros
    (``::1`` is ``0:0:0:0:0:0:0:1``), and an IPv4-mapped IPv6 address is its IPv4 address. A binding's host is
    compared as it is written, so Kafka never matches a binding on ``::1`` (nor this model). A host that is not an
    IP address is left as it is."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv4Address):
        return str(address)
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    number = int(address)
    text = ":".join(format(number >> shift & 0xFFFF, "x") for shift in range(112, -1, -16))
    return f"{text}%{address.scope_id}" if address.scope_id else text


def _operation_matches(binding: AclBinding, operation: Operation) -> bool:
    if binding.operation in (Operation.ALL, operation):
        return True
    if binding.permission != PermissionType.ALLOW:
        return False  # a DENY of READ does not deny DESCRIBE
    if operation == Operation.DESCRIBE:
        return binding.operation in IMPLIES_DESCRIBE
    return operation == Operation.DESCRIBE_CONFIGS and binding.operation in IMPLIES_DESCRIBE_CONFIGS


class Authorizer:
    """A cluster's bindings, indexed so that deciding one action looks at the bindings of its resource only
    (literal names and prefixes in maps): 10,000 bindings decide 100,000 actions in seconds."""

    def __init__(
        self, bindings: Iterable[AclBinding], super_users: Collection[str] = (), allow_if_no_acl: bool = False
    ) -> None:
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_if_no_acl
        self._literal: dict[tuple[ResourceType, str], list[AclBinding]] = defaultdict(list)
        prefixed: dict[ResourceType, dict[str, list[AclBinding]]] = defaultdict(lambda: defaultdict(list))
        for binding in bindings:
            if binding.pattern_type == PatternType.LITERAL:
                self._literal[(binding.resource_type, binding.resource_name)].append(binding)
            else:
                prefixed[binding.resource_type][binding.resource_name].append(binding)
        self._prefixed = {kind: dict(names) for kind, names in prefixed.items()}

    def _on_resource(self, resource_type: ResourceType, name: str) -> list[AclBinding]:
        """The bindings whose pattern matches the resource, of any principal, host and operation."""
        found = list(self._literal.get((resource_type, name), ()))
        if not name.startswith(WILDCARD):  # "*" itself is found above; Kafka skips "*" for "*x" (see the module)
            found += self._literal.get((resource_type, WILDCARD), ())
        prefixed = self._prefixed.get(resource_type)
        if prefixed:
            for end in range(1, len(name) + 1):
                found += prefixed.get(name[:end], ())
        return found

    def decide(self, action: Action) -> Decision:
        if action.principal in self.super_users:
            return Decision(True, SUPER_USER)
        on_resource = self._on_resource(action.resource_type, action.resource_name)
        host = client_address(action.host)
        allowed_by = None
        for binding in on_resource:
            if binding.principal not in (action.principal, WILDCARD_PRINCIPAL):
                continue
            if binding.host not in (WILDCARD, host) or not _operation_matches(binding, action.operation):
                continue
            if binding.permission == PermissionType.DENY:
                return Decision(False, binding)
            allowed_by = allowed_by or binding
        if allowed_by is not None:
            return Decision(True, allowed_by)
        if not on_resource:
            return Decision(self.allow_if_no_acl, NO_BINDING_ALLOWED if self.allow_if_no_acl else NO_BINDING_DENIED)
        return Decision(False, NONE_MATCHING)


# -- carrying a binding to the target --------------------------------------------------------------------------


@dataclass(frozen=True)
class Refused:
    """A source binding that cannot be carried to the target exactly, and why."""

    binding: AclBinding
    reason: str

    def describe(self) -> str:
        return f"{self.binding.describe()}: {self.reason}"


def translate(
    binding: AclBinding, rename: str = DEFAULT_RENAME, principals: Mapping[str, str] | None = None
) -> AclBinding | Refused:
    """The binding as the target needs it: topic names through the run's rename template (``model/naming``'s
    one rename), principals through the mapping (unmapped ones unchanged). A PREFIXED topic binding is carried
    exactly only when the template adds nothing after ``{topic}``: ``pre.{topic}`` turns prefix ``orders`` into
    ``pre.orders``, which matches exactly the renamed topics, while ``{topic}.copy`` has no prefix that does."""
    mapping = principals or {}
    principal = mapping.get(binding.principal, binding.principal)
    if binding.resource_type == ResourceType.USER:  # the resource is a principal (User:name): mapped too
        return _carry_user_resource(binding, principal, mapping)
    every_topic = binding.pattern_type == PatternType.LITERAL and binding.resource_name == WILDCARD  # on either side
    if binding.resource_type != ResourceType.TOPIC or every_topic:
        return replace(binding, principal=principal)
    _, after = split_template(rename)
    if binding.pattern_type == PatternType.PREFIXED and after:
        return Refused(
            binding,
            f"rename {rename!r} adds {after!r} after the topic name, so no prefix on the target matches exactly the "
            f"renamed topics of prefix {binding.resource_name!r}; grant it on the target by hand (it is not "
            "moved), or migrate with a rename that only prepends",
        )
    return replace(binding, resource_name=renamed(rename, binding.resource_name), principal=principal)


def _carry_user_resource(binding: AclBinding, principal: str, mapping: Mapping[str, str]) -> AclBinding | Refused:
    """A binding on USER resources (CREATE_TOKENS, DESCRIBE_TOKENS for other users): a literal name is mapped like
    a principal; a prefix stays, unless it covers a mapped principal whose new name it does not cover."""
    name = binding.resource_name
    if binding.pattern_type == PatternType.LITERAL:
        return replace(binding, principal=principal, resource_name=mapping.get(name, name))
    broken = sorted(old for old, new in mapping.items() if old.startswith(name) and not new.startswith(name))
    if broken:
        return Refused(
            binding,
            f"the principal map moves {', '.join(broken[:3])} out of the prefix {name!r}, so no prefix on the target "
            "matches exactly the same users; grant it on the target by hand (it is not moved), or map them within "
            "the prefix",
        )
    return replace(binding, principal=principal)


# -- what a sync does ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AclPlan:
    """What a sync of the bindings would do on the target: add the missing, keep those present, refuse what
    cannot be carried exactly, name the target's DENY bindings the source lacks (conflicts: left alone, they
    make the target decide differently), and remove the bindings this tool created earlier that the source no
    longer has (only when asked)."""

    add: tuple[AclBinding, ...]
    present: tuple[AclBinding, ...]
    refused: tuple[Refused, ...]
    conflicts: tuple[AclBinding, ...]
    remove: tuple[AclBinding, ...]


def plan_bindings(
    source: Iterable[AclBinding],
    target: Iterable[AclBinding],
    rename: str = DEFAULT_RENAME,
    principals: Mapping[str, str] | None = None,
    created_before: Collection[AclBinding] = (),
    remove_stale: bool = False,
) -> AclPlan:
    """The plan of a sync from the two clusters' bindings. ``created_before``: bindings this tool wrote on the
    target in earlier syncs (the ledger's); only those may be removed, and only with ``remove_stale``."""
    wanted: set[AclBinding] = set()
    refused = []
    for binding in source:
        carried = translate(binding, rename, principals)
        if isinstance(carried, Refused):
            refused.append(carried)
        else:
            wanted.add(carried)
    on_target = set(target)
    conflicts = sorted(b for b in on_target - wanted if b.permission == PermissionType.DENY)
    remove = sorted(b for b in set(created_before) & on_target if b not in wanted) if remove_stale else []
    return AclPlan(
        add=tuple(sorted(wanted - on_target)),
        present=tuple(sorted(wanted & on_target)),
        refused=tuple(sorted(refused, key=lambda r: r.binding)),
        conflicts=tuple(conflicts),
        remove=tuple(remove),
    )


# -- proving the two clusters decide alike ---------------------------------------------------------------------


@dataclass(frozen=True)
class DecisionDifference:
    """An action the two clusters decide differently: the source's action, the target's (renamed, mapped)."""

    source_action: Action
    target_action: Action
    source: Decision
    target: Decision

    def describe(self) -> str:
        return (
            f"{self.source_action.describe()}: source {self.source.describe()}; target "
            f"({self.target_action.describe()}) {self.target.describe()}"
        )


def sample_names(binding: AclBinding) -> tuple[str, ...]:
    """Resource names that exercise a binding: its literal name; for a prefix, the prefix itself and a longer
    name; for ``*``, a name no literal binding is likely to use."""
    if binding.pattern_type == PatternType.PREFIXED:
        return (binding.resource_name, f"{binding.resource_name}-sample")
    if binding.resource_name == WILDCARD:
        return ("km-any-resource",)
    return (binding.resource_name,)


def selection(bindings: Iterable[AclBinding], host: str = "203.0.113.7") -> list[Action]:
    """Every action the bindings speak of: each binding's principal (a named sample principal for ``User:*``),
    from its host (or an arbitrary one for ``*``), every operation of its resource type, on every sample name."""
    actions = set()
    for binding in bindings:
        principal = "User:km-any-principal" if binding.principal == WILDCARD_PRINCIPAL else binding.principal
        where = host if binding.host == WILDCARD else binding.host
        for name in sample_names(binding):
            for operation in ACTIONS[binding.resource_type]:
                actions.add(Action(principal, where, binding.resource_type, name, operation))
    return sorted(actions)


def decision_differences(
    source: Authorizer,
    target: Authorizer,
    actions: Sequence[Action],
    carry: Callable[[Action], Action],
) -> list[DecisionDifference]:
    """The actions the clusters decide differently, each asked on the target as ``carry`` turns it (rename,
    principal mapping). None is the verdict of a sync."""
    found = []
    for action in actions:
        there = carry(action)
        mine, theirs = source.decide(action), target.decide(there)
        if mine.allowed != theirs.allowed:
            found.append(DecisionDifference(action, there, mine, theirs))
    return found


def carrier(rename: str = DEFAULT_RENAME, principals: Mapping[str, str] | None = None) -> Callable[[Action], Action]:
    """An action as the target is asked it: its topic renamed, its principal mapped."""
    mapping = dict(principals or {})

    def carry(action: Action) -> Action:
        name = action.resource_name
        if action.resource_type == ResourceType.TOPIC:
            name = renamed(rename, name)
        elif action.resource_type == ResourceType.USER:
            name = mapping.get(name, name)
        return replace(action, principal=mapping.get(action.principal, action.principal), resource_name=name)

    return carry
