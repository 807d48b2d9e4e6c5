"""What a target topic keeps: the configs that decide which records a topic keeps, compared by effective value.

Only configs set on a source topic travel (``topic_configs``), so a retention that comes from the source's
brokers (``log.retention.hours=720``), the cluster's dynamic default or Kafka's own default would be lost
on the way: a topic the pipeline creates would take the target brokers' defaults, and the target's first
retention pass would delete verified records the source still keeps. So these configs are compared by the
value in force on each side, wherever it comes from:

- a topic the pipeline creates gets the source's effective value (unless the target's brokers give a new
  topic that value anyway: ``new_topic_defaults``);
- an existing target topic that keeps less than the source is refused before anything is written, unless
  the operator accepts it (``--accept-target-retention``), which the plan and the report record.

A lower value always keeps less: a shorter time or size retention deletes sooner, a shorter
``delete.retention.ms`` drops tombstones sooner, shorter compaction lags compact superseded records sooner.
``-1`` (no limit) is the most a topic can keep. ``cleanup.policy`` and ``max.message.bytes`` are compared
by ``topics.compatibility_problems`` (a mismatch there is never accepted: it loses data or refuses records).
Pure logic: what planning read (``TopicState``) and the target brokers' configs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafka_migration.model.state import TopicState


@dataclass(frozen=True)
class KeepConfig:
    """One config that decides which records a topic keeps."""

    name: str
    default: str  # Apache Kafka's default, when a broker does not report the config
    # The broker configs that give a new topic its value, first match wins, with the factor to the topic's unit
    # (Apache Kafka's LogConfig synonyms: log.retention.ms, else .minutes, else .hours).
    broker: tuple[tuple[str, int], ...]
    policy: str  # the cleanup policy under which it deletes anything: "delete" or "compact"
    unit: str  # "ms" or "bytes"
    loses: str  # what a lower value on the target loses


KEEP_CONFIGS: dict[str, KeepConfig] = {
    c.name: c
    for c in (
        KeepConfig(
            "retention.ms",
            "604800000",
            (("log.retention.ms", 1), ("log.retention.minutes", 60_000), ("log.retention.hours", 3_600_000)),
            "delete",
            "ms",
            "records older than that are deleted",
        ),
        KeepConfig(
            "retention.bytes",
            "-1",
            (("log.retention.bytes", 1),),
            "delete",
            "bytes",
            "a partition's oldest records beyond that size are deleted",
        ),
        KeepConfig(
            "delete.retention.ms",
            "86400000",
            (("log.cleaner.delete.retention.ms", 1),),
            "compact",
            "ms",
            "tombstones are removed that much sooner after compaction",
        ),
        KeepConfig(
            "min.compaction.lag.ms",
            "0",
            (("log.cleaner.min.compaction.lag.ms", 1),),
            "compact",
            "ms",
            "records superseded by a newer record of the same key are compacted away sooner",
        ),
        KeepConfig(
            "max.compaction.lag.ms",
            "9223372036854775807",
            (("log.cleaner.max.compaction.lag.ms", 1),),
            "compact",
            "ms",
            "superseded records are compacted away sooner",
        ),
    )
}

# Every broker config a new topic's keep configs come from, for ``KafkaCluster.broker_configs``.
BROKER_NAMES: tuple[str, ...] = tuple(name for c in KEEP_CONFIGS.values() for name, _ in c.broker)

UNLIMITED = float("inf")


def policies(state: TopicState) -> set[str]:
    return set((state.config("cleanup.policy") or "delete").replace(" ", "").split(","))


def applicable(state: TopicState) -> list[KeepConfig]:
    """The keep configs that delete anything under the topic's cleanup policy, in a stable order."""
    wanted = policies(state)
    return [c for c in KEEP_CONFIGS.values() if c.policy in wanted]


def effective(state: TopicState, name: str) -> str:
    """The value in force on the topic: what the broker reports, wherever it comes from, else Kafka's default."""
    return state.config(name) or KEEP_CONFIGS[name].default


def amount(value: str) -> float:
    """A keep config's value as a number; any negative value (-1) is no limit."""
    number = int(value)
    return UNLIMITED if number < 0 else float(number)


def keeps_less(target_value: str, source_value: str) -> bool:
    return amount(target_value) < amount(source_value)


def new_topic_defaults(broker_configs: Mapping[str, str] | None) -> dict[str, str]:
    """What a topic created without keep configs gets from the target's brokers, by topic config name (values
    the brokers do not agree on, or that cannot be read, are missing: then the config is set)."""
    found = broker_configs or {}
    out: dict[str, str] = {}
    for config in KEEP_CONFIGS.values():
        for broker_name, factor in config.broker:
            value = found.get(broker_name)
            if value is None or not value.strip().lstrip("-").isdigit():
                continue
            number = int(value)
            out[config.name] = "-1" if number < 0 else str(number * factor)
            break
    return out


def human(name: str, value: str) -> str:
    """``retention.ms=2592000000 (30 days)``: the value as set, and as people read it."""
    return f"{name}={value} ({readable(KEEP_CONFIGS[name].unit, value)})" if name in KEEP_CONFIGS else f"{name}={value}"


def readable(unit: str, value: str) -> str:
    number = amount(value)
    if number == UNLIMITED or number >= 2**62:
        return "no limit"
    if unit == "bytes":
        for size, label in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
            if number >= size:
                return f"{number / size:.3g} {label}"
        return f"{int(number):,} bytes"
    seconds = number / 1000
    for size, label in ((86_400, "day"), (3_600, "hour"), (60, "minute")):
        if seconds >= size:
            count = seconds / size
            shown = f"{count:.3g}" if count != int(count) else f"{int(count):,}"
            return f"{shown} {label}{'' if shown == '1' else 's'}"
    return f"{seconds:g} s"


@dataclass(frozen=True)
class Shortfall:
    """A keep config on which the target topic keeps less than the source topic."""

    name: str
    source_value: str
    target_value: str

    def describe(self) -> str:
        config = KEEP_CONFIGS[self.name]
        return (
            f"{self.name} is {readable(config.unit, self.target_value)} on the target ({self.target_value}) but "
            f"{readable(config.unit, self.source_value)} on the source ({self.source_value}): {config.loses}"
        )


def shortfalls(source: TopicState, target: TopicState) -> list[Shortfall]:
    """The keep configs on which an existing target topic keeps less than the source topic (effective values)."""
    found = []
    for config in applicable(source):
        here, there = effective(source, config.name), effective(target, config.name)
        if keeps_less(there, here):
            found.append(Shortfall(config.name, here, there))
    return found


def retention_ms(state: TopicState) -> int | None:
    """The time retention that deletes the topic's records (None: none, compact only or no limit)."""
    if "delete" not in policies(state):
        return None
    value = amount(effective(state, "retention.ms"))
    return None if value == UNLIMITED else int(value)
