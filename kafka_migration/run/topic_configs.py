"""Which configs a target topic gets, and why: one rule shared with the compatibility check.

Pure logic over Apache Kafka's DescribeConfigs answers (``TopicState.configs``): every topic config,
each labelled with its source, and those set on the topic itself labelled DYNAMIC_TOPIC_CONFIG.
Only those travel; values that come from the source brokers (static or dynamic broker configs,
cluster-wide defaults) or Kafka's defaults describe the source cluster, not the topic.

- The settings the compatibility check compares (``COMPARED_CONFIGS``) are set on a topic the
  pipeline creates, to the source's effective value, unless the target's brokers already give a
  new topic that value (``TARGET_DEFAULTS``, read when the target lets us). So a created topic
  passes the check of the next run: the pipeline never refuses its own output. Configs left at
  the target's defaults matter at scale: Apache Kafka applies a new topic's configs in time that
  grows with the topics the broker holds, so 10,000 topics created with configs take far longer.
- An existing target topic is not changed. Where its value of a config set on either topic differs
  from the source topic's, the plan and the report say so (``config_drift``).

Every decision comes with a reason, shown in the plan and the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafka_migration.model.state import KAFKA_DEFAULT_MAX_MESSAGE_BYTES, TopicState
from kafka_migration.run import retention

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
    "remote.log.copy.disable": "tiered storage depends on the target cluster's set-up",
    "remote.log.delete.on.disable": "tiered storage depends on the target cluster's set-up",
}

# What the compatibility check compares, with Apache Kafka's default when a broker does not say.
COMPARED_CONFIGS: dict[str, str] = {
    "cleanup.policy": "delete",
    "max.message.bytes": str(KAFKA_DEFAULT_MAX_MESSAGE_BYTES),
}

# The broker config that gives a new topic its default, for each config a created topic may be given
# (Apache Kafka's LogConfig synonyms): where the target's brokers all give the value wanted, it is not set.
TARGET_DEFAULTS: dict[str, str] = {
    "cleanup.policy": "log.cleanup.policy",
    "max.message.bytes": "message.max.bytes",
    "message.timestamp.type": "log.message.timestamp.type",
}

# How a config was decided (the plan and the report show these).
SET_ON_TOPIC = "set on the source topic"
EFFECTIVE_VALUE = "the source's effective value (a default there), set because the compatibility check compares it"
SIZES_PRODUCER = "the source's effective value (a default there), sizes the copy's producer for the largest records"
PINNED_CREATE_TIME = "pinned: the copy keeps source timestamps, a LogAppendTime default would replace them"
AT_TARGET_DEFAULT = "not set: the target's brokers give a new topic {value} (their {broker}), as wanted"
NOT_COPIED = "not copied: "
KEPT_ON_TARGET = "set on the source topic; the existing target topic is not changed"
KEEPS_AS_SOURCE = (
    "the source's effective value (from its brokers or Kafka's default), set so that the target keeps what the "
    "source keeps"
)
KEEPS_MORE_DEFAULT = "not set: the target's brokers give a new topic {there} ({broker}), more than the source's {here}"
KEEPS_AT_LEAST = "the existing target topic keeps at least as much: {there} there, {here} on the source"
ACCEPTED_LESS = (
    "ACCEPTED (--accept-target-retention): the existing target topic keeps less: {there} there, {here} on the source"
)
# Set on the target topic by the pipeline itself when it created it (pinned), so never drift.
PINNED = frozenset({"message.timestamp.type"})


def set_on_topic(state: TopicState) -> dict[str, str]:
    """Entries set on the topic itself (DYNAMIC_TOPIC_CONFIG): name -> value. Secrets and read-only left out."""
    return dict(sorted(state.topic_settings().items()))


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


# Every broker config ``target_defaults`` reads.
DEFAULT_SOURCES: tuple[str, ...] = (*TARGET_DEFAULTS.values(), *retention.BROKER_NAMES)


def target_defaults(broker_configs: Mapping[str, str] | None) -> dict[str, str]:
    """What a topic created without configs gets on the target, by topic config name, from the values of its
    brokers' ``DEFAULT_SOURCES`` (None or missing: unknown, so set)."""
    found = broker_configs or {}
    named = {name: found[broker] for name, broker in TARGET_DEFAULTS.items() if found.get(broker) is not None}
    return {**named, **retention.new_topic_defaults(found)}


def _broker_name(name: str) -> str:
    if name in TARGET_DEFAULTS:
        return TARGET_DEFAULTS[name]
    return "/".join(broker for broker, _ in retention.KEEP_CONFIGS[name].broker)


def _same(name: str, a: str, b: str) -> bool:
    if name == "cleanup.policy":  # a list: "compact,delete" is "delete, compact"
        return set(a.replace(" ", "").split(",")) == set(b.replace(" ", "").split(","))
    return a.strip() == b.strip()


def decide_configs(
    source: TopicState,
    target: TopicState | None = None,
    defaults: Mapping[str, str] | None = None,
    accept_less: bool = False,
) -> ConfigDecision:
    """The configs for the target topic of ``source``: created by the pipeline when ``target`` is None, where a
    config the target's brokers give a new topic anyway (``defaults``, see ``target_defaults``) is not set.
    An existing ``target`` is not changed; what it keeps is compared (``retention``), and ``accept_less``
    records that the operator accepted a target that keeps less."""
    copied, skipped = split_configs(set_on_topic(source))
    how = {name: NOT_COPIED + reason for name, reason in skipped.items()}
    if target is not None:
        # An existing topic keeps its configs; the copy's producer is still sized for the largest records.
        how.update({name: KEPT_ON_TARGET for name in copied})
        for keep in retention.applicable(source):
            here, there = retention.effective(source, keep.name), retention.effective(target, keep.name)
            said = {"here": retention.human(keep.name, here), "there": retention.human(keep.name, there)}
            if retention.keeps_less(there, here) and accept_less:
                how[keep.name] = ACCEPTED_LESS.format(**said)
            elif keep.name not in copied:  # one set on the source topic keeps saying so (and drift, if any)
                how[keep.name] = KEEPS_AT_LEAST.format(**said)
        configs = {}
        if max_message_bytes(source) > KAFKA_DEFAULT_MAX_MESSAGE_BYTES:
            configs["max.message.bytes"] = str(max_message_bytes(source))
            how["max.message.bytes"] = SIZES_PRODUCER
        return ConfigDecision(configs, skipped, dict(sorted(how.items())))
    how.update({name: SET_ON_TOPIC for name in copied})
    wanted = {name: effective(source, name) for name in COMPARED_CONFIGS if name not in copied}
    # What the source keeps travels, wherever its value comes from: a broker default of the target may keep less.
    wanted.update(
        {c.name: retention.effective(source, c.name) for c in retention.applicable(source) if c.name not in copied}
    )
    # A broker default of LogAppendTime would replace the copied timestamps.
    wanted["message.timestamp.type"] = "CreateTime"
    for name, value in wanted.items():
        default = (defaults or {}).get(name)
        if default is not None and _same(name, default, value):
            how[name] = AT_TARGET_DEFAULT.format(value=f"{name}={value}", broker=_broker_name(name))
        elif default is not None and name in retention.KEEP_CONFIGS and not retention.keeps_less(default, value):
            # The target's brokers give a new topic more than the source keeps: nothing is lost, theirs decide.
            how[name] = KEEPS_MORE_DEFAULT.format(
                there=retention.human(name, default), here=retention.human(name, value), broker=_broker_name(name)
            )
        else:
            copied[name] = value
            if name == "message.timestamp.type":
                how[name] = PINNED_CREATE_TIME
            else:
                how[name] = KEEPS_AS_SOURCE if name in retention.KEEP_CONFIGS else EFFECTIVE_VALUE
    return ConfigDecision(dict(sorted(copied.items())), skipped, dict(sorted(how.items())))


def config_drift(source: TopicState, target: TopicState) -> dict[str, tuple[str | None, str | None]]:
    """Configs set on either topic whose values differ: name -> (source value, target value).

    Configs that never travel, and those the pipeline pins on the topics it creates, are not drift.
    """
    names = (set(source.topic_settings()) | set(target.topic_settings())) - set(EXCLUDED_CONFIGS) - PINNED
    return {
        name: (source.config(name), target.config(name))
        for name in sorted(names)
        if source.config(name) != target.config(name)
    }
