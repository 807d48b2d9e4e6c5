"""Which source topics a run migrates, and what the source holds for each."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from kafka_migration.model.config import DEFAULT_INCLUDE, compile_topic_pattern

# Topics that belong to Kafka itself or to its ecosystem, not to users. They are
# never selected by a wildcard; naming them in the include pattern selects them.
INTERNAL_TOPIC_PATTERNS: tuple[str, ...] = (
    r"__.*",  # __consumer_offsets, __transaction_state, __cluster_metadata ...
    r"_schemas",  # Confluent Schema Registry
    r"connect-(offsets|configs|status)",  # Kafka Connect's default storage topics
    r".*[-.]internal",  # MirrorMaker 2 checkpoints/offset-syncs, Kafka Streams internals
    r".*\.replica",  # MirrorMaker 2 convention
)
_INTERNAL = re.compile("|".join(f"(?:{p})" for p in INTERNAL_TOPIC_PATTERNS))


def is_internal(topic: str) -> bool:
    return _INTERNAL.fullmatch(topic) is not None


def names_topic_explicitly(pattern: str, topic: str) -> bool:
    """True when the pattern spells the topic name out (ignoring regex escapes)."""
    return topic in pattern.replace("\\", "")


@dataclass(frozen=True)
class Selection:
    selected: tuple[str, ...]
    skipped: dict[str, str]  # topic -> why it was not selected


def select_topics(topics: Iterable[str], include: str = DEFAULT_INCLUDE, exclude: str | None = None) -> Selection:
    """Apply include/exclude patterns (full match) and skip internal topics."""
    include_re = compile_topic_pattern("include", include)
    exclude_re = compile_topic_pattern("exclude", exclude) if exclude else None
    selected: list[str] = []
    skipped: dict[str, str] = {}
    for topic in sorted(set(topics)):
        if not include_re.fullmatch(topic):
            continue  # not in scope at all: not worth a line in the report
        if exclude_re is not None and exclude_re.fullmatch(topic):
            skipped[topic] = "matches the exclude pattern"
        elif is_internal(topic) and not names_topic_explicitly(include, topic):
            skipped[topic] = "internal topic (name it in the include pattern to copy it)"
        else:
            selected.append(topic)
    return Selection(selected=tuple(selected), skipped=skipped)
