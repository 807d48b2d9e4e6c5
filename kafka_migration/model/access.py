"""Access control as plain values: an ACL binding, an action an authorizer decides, and its decision.

The names are Apache Kafka's own (``kafka-acls.sh``, ``AclBinding``), upper case, so that a binding reads the
same here, in the report and in Kafka's tools. Shared by the rules that translate, plan and decide
(``access.rules``), the Kafka calls that read and write bindings, the ledger and the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from kafka_migration.exceptions import ConfigurationError

TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER = (
    "TOPIC",
    "GROUP",
    "CLUSTER",
    "TRANSACTIONAL_ID",
    "DELEGATION_TOKEN",
    "USER",
)
RESOURCE_TYPES = (TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER)
LITERAL, PREFIXED = "LITERAL", "PREFIXED"
PATTERN_TYPES = (LITERAL, PREFIXED)
ALLOW, DENY = "ALLOW", "DENY"
PERMISSIONS = (ALLOW, DENY)
ALL = "ALL"
# Every operation a binding may name (Kafka's AclOperation without the filter-only ANY and UNKNOWN).
OPERATIONS = (
    ALL,
    "READ",
    "WRITE",
    "CREATE",
    "DELETE",
    "ALTER",
    "DESCRIBE",
    "CLUSTER_ACTION",
    "DESCRIBE_CONFIGS",
    "ALTER_CONFIGS",
    "IDEMPOTENT_WRITE",
    "CREATE_TOKENS",
    "DESCRIBE_TOKENS",
)
# The operations an action asks for, per resource type (Kafka's ACL documentation, "Operations and Resources").
ACTIONS: dict[str, tuple[str, ...]] = {
    TOPIC: ("READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"),
    GROUP: ("READ", "DELETE", "DESCRIBE"),
    CLUSTER: (
        "CREATE",
        "ALTER",
        "DESCRIBE",
        "CLUSTER_ACTION",
        "DESCRIBE_CONFIGS",
        "ALTER_CONFIGS",
        "IDEMPOTENT_WRITE",
        "CREATE_TOKENS",
        "DESCRIBE_TOKENS",
    ),
    TRANSACTIONAL_ID: ("WRITE", "DESCRIBE"),
    DELEGATION_TOKEN: ("DESCRIBE",),
    USER: ("CREATE_TOKENS", "DESCRIBE_TOKENS"),
}
WILDCARD = "*"  # a LITERAL resource name matching every name, a host matching every host
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"  # the one CLUSTER resource's name


@dataclass(frozen=True, order=True)
class AclBinding:
    """One ACL binding: who (principal, from host) may or may not (permission) do what (operation) on which
    resources (type, name, and whether the name is the whole name or a prefix)."""

    resource_type: str
    resource_name: str
    pattern_type: str
    principal: str
    host: str
    operation: str
    permission: str

    def __post_init__(self) -> None:
        for field_name, value, allowed in (
            ("resource type", self.resource_type, RESOURCE_TYPES),
            ("pattern type", self.pattern_type, PATTERN_TYPES),
            ("operation", self.operation, OPERATIONS),
            ("permission", self.permission, PERMISSIONS),
        ):
            if value not in allowed:
                raise ConfigurationError(
                    f"ACL binding {self.describe()}: {field_name} {value!r} is not one of {', '.join(allowed)}."
                )
        if not self.resource_name or ":" not in self.principal or not self.host:
            raise ConfigurationError(
                f"ACL binding {self.describe()} needs a resource name, a principal TYPE:NAME (User:alice) and a "
                "host ('*' for every host)."
            )

    def describe(self) -> str:
        """As ``kafka-acls.sh --list`` would make a reader say it: ALLOW User:app WRITE on TOPIC orders."""
        pattern = "" if self.pattern_type == LITERAL else f" ({self.pattern_type.lower()})"
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
    resource_type: str
    resource_name: str
    operation: str

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


# What an access sync did with a binding (as the ledger records it and the report shows it).
ADDED, PRESENT, REFUSED, CONFLICT, REMOVED = "added", "present", "refused", "conflict", "removed"
WOULD_ADD, WOULD_REMOVE = "would_add", "would_remove"  # a dry run's
NEEDS_PASSWORD = "needs_password"  # a SCRAM credential missing on the target, for which no password was given


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
    action: str
    reason: str | None = None


@dataclass(frozen=True, order=True)
class ScramCredential:
    """A SCRAM credential as a cluster describes it: the user, the mechanism and its iterations. The secret is
    never readable from a cluster (brokers keep only derived keys): a copy needs the operator's password."""

    user: str
    mechanism: str  # SCRAM-SHA-256 or SCRAM-SHA-512
    iterations: int


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

QUOTA_USER, QUOTA_CLIENT_ID, QUOTA_IP = "user", "client-id", "ip"  # Kafka's entity types (kafka-configs.sh)
QUOTA_ENTITY_TYPES = (QUOTA_USER, QUOTA_CLIENT_ID, QUOTA_IP)
DEFAULT_NAME = "<default>"  # how kafka-configs.sh shows the default entity (the protocol's null name)
# The quota keys Apache Kafka knows (QuotaConfig); a cluster's own keys are carried too, by name.
QUOTA_KEYS = (
    "producer_byte_rate",
    "consumer_byte_rate",
    "request_percentage",
    "controller_mutation_rate",
    "connection_creation_rate",
)
# What a sync did with a quota, besides ADDED, PRESENT, REMOVED and the dry run's WOULD_ADD and WOULD_REMOVE.
UPDATED, WOULD_UPDATE = "updated", "would_update"  # a value this tool set earlier, changed on the source since
DIFFERENT = "different"  # the target holds another value, not set by this tool: left alone
TARGET_ONLY = "target_only"  # on the target only: left alone unless this tool set it (then removed when asked)


@dataclass(frozen=True)
class QuotaEntity:
    """Who a quota applies to: one or two (type, name) parts in Kafka's order (user before client-id), a name of
    None meaning the type's default entity (``<default>``)."""

    parts: tuple[tuple[str, str | None], ...]

    def __post_init__(self) -> None:
        kinds = [kind for kind, _ in self.parts]
        if not kinds or len(set(kinds)) != len(kinds) or any(k not in QUOTA_ENTITY_TYPES for k in kinds):
            raise ConfigurationError(
                f"Quota entity {self.parts!r}: give each of the types {', '.join(QUOTA_ENTITY_TYPES)} at most once."
            )
        ordered = tuple(sorted(self.parts, key=lambda p: QUOTA_ENTITY_TYPES.index(p[0])))
        object.__setattr__(self, "parts", ordered)

    @classmethod
    def of(cls, **names: str | None) -> QuotaEntity:
        """``QuotaEntity.of(user="alice", client_id=None)``: user alice with the default client id."""
        return cls(tuple((kind.replace("_", "-"), name) for kind, name in names.items()))

    def name(self, kind: str) -> str | None:
        return dict(self.parts).get(kind)

    def sort_key(self) -> tuple[tuple[int, bool, str], ...]:
        """Users, then client ids, then ips; each type's default first."""
        return tuple((QUOTA_ENTITY_TYPES.index(kind), name is not None, name or "") for kind, name in self.parts)

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
    action: str
    reason: str | None = None


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
    verdict: str  # PROVEN_VERDICT ("proven") or NOT_PROVEN_VERDICT ("different")
    actions_checked: int
    differences: tuple[str, ...]  # actions decided differently on the two clusters, described
    unreadable: tuple[int, int]  # bindings the source and the target hold that could not be read
    report_sha256: str | None = None  # of the sync's report.json (a dry run writes none)


PROVEN_VERDICT, NOT_PROVEN_VERDICT = "proven", "different"  # as `access sync --output json` says it
