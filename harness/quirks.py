"""Workarounds for the embedded broker's deviations from Apache Kafka, for tests and the demo only.

Tansu's DescribeConfigs on a topic lists only the entries set on the topic, but
labels them ``DEFAULT_CONFIG``; Apache Kafka labels them ``DYNAMIC_TOPIC_CONFIG``
and lists every default too. The product (rightly) copies only entries set on the
topic, so against Tansu it would copy none. ``topic_configs_marked_as_set`` relabels
Tansu's answers the way Apache Kafka would give them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace

from kafka_migration import clients


def _relabel(states: dict[str, clients.TopicState]) -> dict[str, clients.TopicState]:
    return {
        name: replace(
            state,
            configs={k: replace(v, set_on_topic=True) for k, v in state.configs.items()},
        )
        for name, state in states.items()
    }


@contextlib.contextmanager
def topic_configs_marked_as_set() -> Iterator[None]:
    original = clients.KafkaCluster.topic_states

    def topic_states(self: clients.KafkaCluster, names):  # type: ignore[no-untyped-def]
        return _relabel(original(self, names))

    clients.KafkaCluster.topic_states = topic_states  # type: ignore[method-assign]
    try:
        yield
    finally:
        clients.KafkaCluster.topic_states = original  # type: ignore[method-assign]
