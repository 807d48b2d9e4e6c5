"""Which configs a target topic gets, and why: one rule shared with the compatibility check.

Pure logic over a broker's DescribeConfigs answer (``TopicState.configs``). Two things make
it robust on brokers that are not Apache Kafka:

- The settings the compatibility check compares (``COMPARED_CONFIGS``) are always set on a
  topic the pipeline creates, to the source's effective value, whatever the labels say. So a
  created topic always passes the check of the next run: the pipeline never refuses its own
  output.
- Apache Kafka lists every topic config and labels the ones set on the topic
  (DYNAMIC_TOPIC_CONFIG). Some brokers list only the entries set on the topic, and label them
  as defaults. When an answer plainly lists only overrides (it lacks the entries every full
  answer has, and labels nothing as set on the topic), each entry it lists was set on the topic.

Every decision comes with a reason, shown in the plan and the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafka_migration.model.state import KAFKA_DEFAULT_MAX_MESSAGE_BYTES, ConfigValue, TopicState

# Configs never copied to the target, and why. Follows MirrorMaker 2's
# DefaultConfigPropertyFilter, plus placement, version and tiered-storage settings
# that describe the source cluster rather than the data.
EXCLUDED_CONFIGS: dict[str, str] = {
    "follower.replication.throttled.replicas": "replication throttling of the source cluster",
    "leader.replication.throttled.replicas": "replication throttling of the source cluster",
    "message.timestamp.type": "the copy keeps source timestamps; LogAppendTime would replace them",
    "message.timestamp.difference.max.ms": "would reject the old source timestamps on the target",
    "message.timestamp.before.max.ms": "would reject the old source timestamps on the target",
    "message.timestamp.after.max.ms": "would reject the source timestamps on the target",
    "unclean.leader.election.enable": "durability policy belongs to the target cluster",
    "min.insync.replicas": "depends on the target's replication factor",
    "confluent.placement.constraints": "rack placement of the source cluster",
    "message.format.version": "version setting; the target broker decides",
    "message.downconversion.enable": "version setting; the target broker decides",
    "remote.storage.enable": "tiered storage depends on the target cluster's set-up",
    "local.retention.ms": "tiered storage depends on the target cluster's set-up",
    "local.retention.bytes": "tiered storage depends on the target cluster's set-up",
}

# What the compatibility check compares, with Apache Kafka's default when a broker does not say.
COMPARED_CONFIGS: dict[str, str] = {
    "cleanup.policy": "delete",
    "max.message.bytes": str(KAFKA_DEFAULT_MAX_MESSAGE_BYTES),
}

# Entries every full Apache Kafka answer for a topic lists (defaults included); a full answer
# has about 35 entries. An answer without them lists only what was set on the topic.
ALWAYS_LISTED = frozenset({"cleanup.policy", "max.message.bytes", "retention.ms", "segment.bytes"})
FULL_ANSWER_MIN_ENTRIES = 8

# How a config was decided (the plan and the report show these).
SET_ON_TOPIC = "set on the source topic"
LISTED_AS_OVERRIDE = "set on the source topic (its broker lists only topic overrides, labelled as defaults)"
EFFECTIVE_VALUE = "the source's effective value (a default there), set because the compatibility check compares it"
SIZES_PRODUCER = "the source's effective value (a default there), sizes the copy's producer for the largest records"
PINNED_CREATE_TIME = "pinned: the copy keeps source timestamps, a LogAppendTime default would replace them"
NOT_COPIED = "not copied: "


def lists_only_overrides(configs: Mapping[str, ConfigValue]) -> bool:
    """True when a DescribeConfigs answer lists only the entries set on the topic.

    A broker that labels any entry as set on the topic labels them properly: trust its labels.
    Otherwise an answer lacking the entries every full answer has lists overrides only (an
    empty answer included: nothing was set).
    """
    if any(entry.set_on_topic for entry in configs.values()):
        return False
    full = configs.keys() >= ALWAYS_LISTED and len(configs) >= FULL_ANSWER_MIN_ENTRIES
    return not full


def set_on_topic(state: TopicState) -> dict[str, tuple[str, str]]:
    """Entries set on the topic itself: name -> (value, how it was decided). Secrets and read-only left out."""
    overrides_only = lists_only_overrides(state.configs)
    how = LISTED_AS_OVERRIDE if overrides_only else SET_ON_TOPIC
    return {
        name: (entry.value, how)
        for name, entry in sorted(state.configs.items())
        if (overrides_only or entry.set_on_topic)
        and entry.value is not None
        and not entry.read_only
        and not entry.sensitive
    }


def effective(state: TopicState, name: str) -> str:
    """The value in force on the topic (what the broker reports, else Apache Kafka's default)."""
    return state.config(name) or COMPARED_CONFIGS[name]


def max_message_bytes(state: TopicState) -> int:
    return int(effective(state, "max.message.bytes"))


def cleanup_policy(state: TopicState) -> set[str]:
    return set(effective(state, "cleanup.policy").replace(" ", "").split(","))


def split_configs(settings: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(configs to set on the target, configs skipped with the reason)."""
    copied: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for name, value in sorted(settings.items()):
        if name in EXCLUDED_CONFIGS:
            skipped[name] = EXCLUDED_CONFIGS[name]
        else:
            copied[name] = value
    return copied, skipped


@dataclass(frozen=True)
class ConfigDecision:
    """What a target topic gets: ``configs`` to set, ``skipped`` with reasons, and ``how`` for each of both."""

    configs: dict[str, str]
    skipped: dict[str, str]
    how: dict[str, str]


def decide_configs(source: TopicState, create: bool) -> ConfigDecision:
    """The configs for the target topic of ``source``; ``create``: the pipeline creates it."""
    found = set_on_topic(source)
    copied, skipped = split_configs({name: value for name, (value, _) in found.items()})
    how = {name: found[name][1] for name in copied}
    how.update({name: NOT_COPIED + reason for name, reason in skipped.items()})
    if create:
        for name in COMPARED_CONFIGS:
            if name not in copied:
                copied[name] = effective(source, name)
                how[name] = EFFECTIVE_VALUE
        # A broker default of LogAppendTime would replace the copied timestamps.
        copied["message.timestamp.type"] = "CreateTime"
        how["message.timestamp.type"] = PINNED_CREATE_TIME
    elif "max.message.bytes" not in copied and max_message_bytes(source) > KAFKA_DEFAULT_MAX_MESSAGE_BYTES:
        # Raised on the source broker, not the topic: copy tasks size their producer from the plan.
        copied["max.message.bytes"] = str(max_message_bytes(source))
        how["max.message.bytes"] = SIZES_PRODUCER
    return ConfigDecision(dict(sorted(copied.items())), skipped, dict(sorted(how.items())))
