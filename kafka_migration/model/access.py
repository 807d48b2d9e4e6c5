"""Access control as plain values: the access vocabulary as enums, an ACL binding, an action an authorizer decides
and its decision, SCRAM credentials, client quotas, and what a sync recorded of each.

The names are Apache Kafka's own (``kafka-acls.sh``, ``AclBinding``, ``kafka-configs.sh``), so that a binding
reads the same here, in the report and in Kafka's tools. Each enum is a ``StrEnum`` whose values are the text the
ledger, ``report.json``, the CLI's JSON and the console's API have always written: a member serializes as that
text, and compares equal to it. Shared by the rules that translate, plan and decide (``access/acls/rules.py``),
the Kafka calls that read and write bindings, the ledger and the reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TypeVar

from kafka_migration.exceptions import ConfigurationError


class ResourceType(StrEnum):
    """What a binding is on (Kafka's ResourceType without the filter-only ANY and UNKNOWN)."""

    TOPIC = "TOPIC"
    GROUP = "GROUP"
    CLUSTER = "CLUSTER"
    TRANSACTIONAL_ID = "TRANSACTIONAL_ID"
    DELEGATION_TOKEN = "DELEGATION_TOKEN"
    USER = "USER"


class PatternType(StrEnum):
    """Whether a binding's resource name is the whole name (or ``*``) or a prefix of it."""

    LITERAL = "LITERAL"
    PREFIXED = "PREFIXED"


class PermissionType(StrEnum):
    """Whether a binding allows or denies."""

    ALLOW = "ALLOW"
    DENY = "DENY"


class Operation(StrEnum):
    """Every operation a binding may name (Kafka's AclOperation without the filter-only ANY and UNKNOWN)."""

    ALL = "ALL"
    READ = "READ"
    WRITE = "WRITE"
    CREATE = "CREATE"
    DELETE = "DELETE"
    ALTER = "ALTER"
    DESCRIBE = "DESCRIBE"
    CLUSTER_ACTION = "CLUSTER_ACTION"
    DESCRIBE_CONFIGS = "DESCRIBE_CONFIGS"
    ALTER_CONFIGS = "ALTER_CONFIGS"
    IDEMPOTENT_WRITE = "IDEMPOTENT_WRITE"
    CREATE_TOKENS = "CREATE_TOKENS"
    DESCRIBE_TOKENS = "DESCRIBE_TOKENS"


_op = Operation
# The operations an action asks for, per resource type (Kafka's ACL documentation, "Operations and Resources").
ACTIONS: dict[ResourceType, tuple[Operation, ...]] = {
    ResourceType.TOPIC: (
        _op.READ,
        _op.WRITE,
        _op.CREATE,
        _op.DELETE,
        _op.ALTER,
        _op.DESCRIBE,
        _op.DESCRIBE_CONFIGS,
        _op.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (_op.READ, _op.DELETE, _op.DESCRIBE),
    ResourceType.CLUSTER: (
        _op.CREATE,
        _op.ALTER,
        _op.DESCRIBE,
        _op.CLUSTER_ACTION,
        _op.DESCRIBE_CONFIGS,
        _op.ALTER_CONFIGS,
        _op.IDEMPOTENT_WRITE,
        _op.CREATE_TOKENS,
        _op.DESCRIBE_TOKENS,
    ),
    ResourceType.TRANSACTIONAL_ID: (_op.WRITE, _op.DESCRIBE),
    ResourceType.DELEGATION_TOKEN: (_op.DESCRIBE,),
    ResourceType.USER: (_op.CREATE_TOKENS, _op.DESCRIBE_TOKENS),
}
WILDCARD = "*"  # a LITERAL resource name matching every name, a host matching every host
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"  # the one CLUSTER resource's name

Word = TypeVar("Word", bound=StrEnum)


def word(vocabulary: type[Word], value: str, what: str) -> Word:
    """``value`` as a member of ``vocabulary`` (already one, or its text); a refusal names ``what`` and every
    member."""
    try:
        return vocabulary(value)
    except ValueError:
        raise ConfigurationError(f"{what} {value!r} is not one of {', '.join(vocabulary)}.") from None


@dataclass(frozen=True, order=True)
class AclBinding:
    """One ACL binding: who (principal, from host) may or may not (permission) do what (operation) on which
    resources (type, name, and whether the name is the whole name or a prefix)."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: Operation
    permission: PermissionType

    def __post_init__(self) -> None:
        """Each vocabulary field as its enum member (given as one or as its text, as a client or the ledger
        reads it); a value outside it is refused."""
        what = f"ACL binding {self.describe()}:"
        for name, vocabulary, label in (
            ("resource_type", ResourceType, "resource type"),
            ("pattern_type", PatternType, "pattern type"),
            ("operation", Operation, "operation"),
            ("permission", PermissionType, "permission"),
        ):
            object.__setattr__(self, name, word(vocabulary, getattr(self, name), f"{what} {label}"))
        if not self.resource_name or ":" not in self.principal or not self.host:
            raise ConfigurationError(
                f"ACL binding {self.describe()} needs a resource name, a principal TYPE:NAME (User:alice) and a "
                "host ('*' for every host)."
            )

    def describe(self) -> str:
        """As ``kafka-acls.sh --list`` would make a reader say it: ALLOW User:app WRITE on TOPIC orders."""
        pattern = "" if self.pattern_type == PatternType.LITERAL else f" ({self.pattern_type.lower()})"
        host = "" if self.host == WILDCARD else f" from {self.host}"
        return (
            f"{self.permission} {self.principal} {self.operation} on {self.resource_type} "
            f"{self.resource_name}{pattern}{host}"
        )


@dataclass(frozen=True, order=True)
class Action:
    """What an authorizer is asked: may ``principal``, connecting from ``host``, do ``operation`` on the
    resource ``resource_type`` ``resource_name``?"""

    principal: str
    host: str
    resource_type: ResourceType
    resource_name: str
    operation: Operation

    def describe(self) -> str:
        return f"{self.principal} {self.operation} on {self.resource_type} {self.resource_name} from {self.host}"


@dataclass(frozen=True)
class Decision:
    """The authorizer's answer and why: the binding that decided it, else ``super user`` or the default
    (no binding on the resource: ``allow.everyone.if.no.acl.found``; bindings, none matching: denied)."""

    allowed: bool
    by: AclBinding | str

    def describe(self) -> str:
        verdict = "allowed" if self.allowed else "denied"
        return f"{verdict} by {self.by.describe() if isinstance(self.by, AclBinding) else self.by}"


class AccessAction(StrEnum):
    """What an access sync did with a binding, a SCRAM credential or a client quota, as the ledger records it and
    the reports show it."""

    ADDED = "added"
    PRESENT = "present"
    REFUSED = "refused"  # a binding that cannot be carried exactly
    CONFLICT = "conflict"  # a DENY on the target the source lacks
    REMOVED = "removed"
    WOULD_ADD = "would_add"  # a dry run's
    WOULD_REMOVE = "would_remove"
    NEEDS_PASSWORD = "needs_password"  # a SCRAM credential missing on the target, for which no password was given
    UPDATED = "updated"  # a quota value this tool set earlier, changed on the source since
    WOULD_UPDATE = "would_update"
    DIFFERENT = "different"  # the target holds another quota value, not set by this tool: left alone
    TARGET_ONLY = "target_only"  # a quota on the target only: left alone unless this tool set it (removed when asked)

    @classmethod
    def written(cls, dry_run: bool) -> tuple[AccessAction, AccessAction, AccessAction]:
        """What adding, updating and removing are recorded as: done, or (a dry run) what would be."""
        if dry_run:
            return cls.WOULD_ADD, cls.WOULD_UPDATE, cls.WOULD_REMOVE
        return cls.ADDED, cls.UPDATED, cls.REMOVED


class LoginOutcome(StrEnum):
    """A SCRAM user's login to the target with its password."""

    PROVEN = "proven"
    FAILED = "failed"  # the broker's reason beside it
    NOT_PROVABLE = "not_provable"  # the listener does not use SASL


class ScramMechanism(StrEnum):
    SCRAM_SHA_256 = "SCRAM-SHA-256"
    SCRAM_SHA_512 = "SCRAM-SHA-512"


@dataclass(frozen=True)
class RecordedBinding:
    """One binding of a recorded access sync: the sync, the binding as the target holds it (or would; a refused
    one as the source holds it), what the sync did with it and why."""

    sync_id: str
    run_id: str | None
    synced_at: datetime
    source_cluster_id: str
    target_cluster_id: str
    binding: AclBinding
    action: AccessAction
    reason: str | None = None


@dataclass(frozen=True, order=True)
class ScramCredential:
    """A SCRAM credential as a cluster describes it: the user, the mechanism and its iterations. The secret is
    never readable from a cluster (brokers keep only derived keys): a copy needs the operator's password."""

    user: str
    mechanism: ScramMechanism
    iterations: int

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "mechanism", word(ScramMechanism, self.mechanism, f"SCRAM user {self.user}: mechanism")
        )


@dataclass(frozen=True)
class Password:
    """An operator's password for a SCRAM user (and optionally the salt to use). Never shown: its repr hides it,
    and nothing of the package logs, records or reports it."""

    user: str
    password: str
    salt: bytes | None = None

    def __repr__(self) -> str:
        return f"Password(user={self.user!r}, password='***')"


# -- client quotas ---------------------------------------------------------------------------------------------


class QuotaEntityType(StrEnum):
    """Who a quota limits, as kafka-configs.sh names the entity types, in Kafka's order."""

    USER = "user"
    CLIENT_ID = "client-id"
    IP = "ip"


DEFAULT_NAME = "<default>"  # how kafka-configs.sh shows the default entity (the protocol's null name)


class QuotaKey(StrEnum):
    """The quota keys Apache Kafka knows (QuotaConfig); a cluster's own keys are carried too, by name (a
    ``Quota``'s key is any text)."""

    PRODUCER_BYTE_RATE = "producer_byte_rate"
    CONSUMER_BYTE_RATE = "consumer_byte_rate"
    REQUEST_PERCENTAGE = "request_percentage"
    CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
    CONNECTION_CREATION_RATE = "connection_creation_rate"


_ENTITY_ORDER = list(QuotaEntityType)


@dataclass(frozen=True)
class QuotaEntity:
    """Who a quota applies to: one or two (type, name) parts in Kafka's order (user before client-id), a name of
    None meaning the type's default entity (``<default>``)."""

    parts: tuple[tuple[QuotaEntityType, str | None], ...]

    def __post_init__(self) -> None:
        kinds = [kind for kind, _ in self.parts]
        known = set(QuotaEntityType)
        if not kinds or len(set(kinds)) != len(kinds) or any(k not in known for k in kinds):
            raise ConfigurationError(
                f"Quota entity {self.parts!r}: give each of the types {', '.join(QuotaEntityType)} at most once."
            )
        typed = ((QuotaEntityType(kind), name) for kind, name in self.parts)
        object.__setattr__(self, "parts", tuple(sorted(typed, key=lambda p: _ENTITY_ORDER.index(p[0]))))

    @classmethod
    def of(cls, **names: str | None) -> QuotaEntity:
        """``QuotaEntity.of(user="alice", client_id=None)``: user alice with the default client id."""
        return cls(tuple((kind.replace("_", "-"), name) for kind, name in names.items()))

    def name(self, kind: QuotaEntityType) -> str | None:
        return dict(self.parts).get(kind)

    def sort_key(self) -> tuple[tuple[int, bool, str], ...]:
        """Users, then client ids, then ips; each type's default first."""
        return tuple((_ENTITY_ORDER.index(kind), name is not None, name or "") for kind, name in self.parts)

    def __lt__(self, other: QuotaEntity) -> bool:
        return self.sort_key() < other.sort_key()

    def describe(self) -> str:
        """As kafka-configs.sh names it: ``user alice, client-id <default>``."""
        return ", ".join(f"{kind} {DEFAULT_NAME if name is None else name}" for kind, name in self.parts)


@dataclass(frozen=True)
class Quota:
    """One quota: an entity, a key (producer_byte_rate, ...) and its value."""

    entity: QuotaEntity
    key: str
    value: float

    @property
    def slot(self) -> tuple[QuotaEntity, str]:
        """What the quota is set on: a cluster holds one value per entity and key."""
        return self.entity, self.key

    def __lt__(self, other: Quota) -> bool:
        return (self.entity.sort_key(), self.key, self.value) < (other.entity.sort_key(), other.key, other.value)

    def describe(self) -> str:
        value = int(self.value) if float(self.value).is_integer() else self.value
        return f"{self.key}={value} for {self.entity.describe()}"


@dataclass(frozen=True)
class RecordedQuota:
    """One quota of a recorded access sync: the quota as the source has it (carried: user names mapped), the
    target's value before the sync (None: absent), what the sync did with it and why."""

    sync_id: str
    synced_at: datetime
    source_cluster_id: str
    target_cluster_id: str
    quota: Quota
    target_value: float | None
    action: AccessAction
    reason: str | None = None


class AccessVerdict(StrEnum):
    """An access sync's verdict, as ``access sync --output json`` says it and the ledger keeps it."""

    PROVEN = "proven"
    DIFFERENT = "different"


@dataclass(frozen=True)
class AccessCheck:
    """An access sync's verdict as recorded: what was decided on both clusters and with what outcome. The
    bindings, users, quotas and probes it looked at are recorded beside it, under the same ``sync_id``."""

    sync_id: str
    run_id: str | None
    synced_at: datetime
    source_cluster_id: str
    target_cluster_id: str
    source_bootstrap: str
    target_bootstrap: str
    dry_run: bool
    verdict: AccessVerdict
    actions_checked: int
    differences: tuple[str, ...]  # actions decided differently on the two clusters, described
    unreadable: tuple[int, int]  # bindings the source and the target hold that could not be read
    report_sha256: str | None = None  # of the sync's report.json (a dry run writes none)
