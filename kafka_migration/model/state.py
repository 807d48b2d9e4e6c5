"""What planning reads from a cluster, as plain values. Imports nothing of the package, so that
clients, topics, positions and the pure logic can all share these types without importing each other."""

from __future__ import annotations

from dataclasses import dataclass

# Kafka's own default for max.message.bytes, used when a broker does not report it.
KAFKA_DEFAULT_MAX_MESSAGE_BYTES = 1048588


@dataclass(frozen=True)
class ConfigValue:
    value: str | None
    set_on_topic: bool
    read_only: bool = False
    sensitive: bool = False
    # Where the value comes from, Apache Kafka's ConfigSource name (STATIC_BROKER_CONFIG, DEFAULT_CONFIG, ...);
    # None when not read from a broker.
    origin: str | None = None


@dataclass(frozen=True)
class TopicState:
    """What a cluster holds for one topic, as read at planning time."""

    name: str
    partitions: int
    replication_factor: int
    configs: dict[str, ConfigValue]
    earliest: dict[int, int]
    latest: dict[int, int]
    # Kafka's topic id (a UUID, new for every creation of the name); None when the broker gives none.
    topic_id: str | None = None

    def config(self, name: str) -> str | None:
        entry = self.configs.get(name)
        return entry.value if entry else None

    def topic_settings(self) -> dict[str, str]:
        """Entries set on the topic itself (not broker defaults), secrets and read-only ones left out."""
        return {
            name: entry.value
            for name, entry in self.configs.items()
            if entry.set_on_topic and entry.value is not None and not entry.read_only and not entry.sensitive
        }


@dataclass(frozen=True)
class TopicPair:
    """A source topic as planning read it, the target topic it is copied to, and that topic as read (None: the
    target does not have it)."""

    source: TopicState
    target_topic: str
    existing: TopicState | None


@dataclass(frozen=True)
class TopicDescription:
    """One topic as a broker describes it right after creation: what the checks before the copy need."""

    partitions: int
    topic_id: str | None  # None: the broker gives none (before Kafka 2.8)
    operations: frozenset[str] | None  # what the principal may do on it (None: not reported, before Kafka 2.3)


# Consumer group states in which a group has no members (Kafka's ConsumerGroupState names).
IDLE_GROUP_STATES = frozenset({"EMPTY", "DEAD"})


@dataclass(frozen=True)
class CommittedOffset:
    """A group's committed position in one partition: the next offset it will read, and its metadata string."""

    offset: int
    metadata: str | None = None


@dataclass(frozen=True)
class ConsumerGroup:
    """What a cluster holds for one consumer group: its state, member count and committed offsets.

    ``exists`` is False for a group the cluster does not know (no members, nothing committed).
    """

    group_id: str
    state: str
    members: int
    offsets: dict[tuple[str, int], CommittedOffset]
    exists: bool = True

    @property
    def active(self) -> bool:
        """Members, or a state other than EMPTY/DEAD (a rebalance in progress counts as active)."""
        return self.members > 0 or (self.exists and self.state not in IDLE_GROUP_STATES)
