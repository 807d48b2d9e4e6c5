"""Target topic names from a rename template. Pure: imported by config validation and by planning alike."""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping

from kafka_migration.exceptions import ConfigurationError

_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")


def validate_rename_template(template: str) -> None:
    try:
        parsed = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise ConfigurationError(
            f"Rename template {template!r} is malformed ({exc}); example: 'src.{{topic}}'."
        ) from None
    if [f for f, _, _ in parsed] != ["topic"]:
        raise ConfigurationError(
            f"Rename template {template!r} must contain the placeholder {{topic}} exactly once and no other "
            "placeholder, e.g. '{topic}' (same names) or 'src.{topic}'."
        )
    if parsed[0][1] or parsed[0][2]:
        # '{topic:.3}' would truncate names (two topics into one target), '{topic:x}' would crash format().
        raise ConfigurationError(
            f"Rename template {template!r} must use the plain placeholder {{topic}}, without a conversion "
            "('!r') or format spec (':...'), e.g. 'src.{topic}'."
        )
    sample = template.format(topic="t")
    if not _LEGAL_TOPIC.fullmatch(sample.replace("t", "a")):
        raise ConfigurationError(
            f"Rename template {template!r} makes illegal topic names; Kafka allows letters, digits, '.', '_' "
            "and '-' only."
        )


PLACEHOLDER = "{topic}"


def split_template(template: str) -> tuple[str, str]:
    """The fixed text before and after ``{topic}`` in a valid template (it holds the placeholder once)."""
    before, _, after = template.partition(PLACEHOLDER)
    return before, after


def renamed(template: str, name: str) -> str:
    """``name`` through the template, unchecked: the one rename of a topic, and of what is named after one (an ACL
    binding's topic or topic prefix, a probe's topic), which need not be a legal topic name itself. For a valid
    template it is ``split_template``'s text before, the name, and the text after."""
    return template.format(topic=name)


def target_topic_name(template: str, topic: str) -> str:
    """``renamed``, refused when the result is no legal Kafka topic name."""
    name = renamed(template, topic)
    if not _LEGAL_TOPIC.fullmatch(name) or name in {".", ".."}:
        raise ConfigurationError(
            f"Rename template {template!r} turns {topic!r} into {name!r}, which is not a legal Kafka topic "
            "name (letters, digits, '.', '_', '-'; at most 249 characters)."
        )
    return name


def collision_key(name: str) -> str:
    """Kafka refuses a new topic whose name equals an existing one once '.' and '_' are made the same
    (both become '_' in metric names): 'orders.eu' and 'orders_eu' cannot live on one cluster."""
    return name.replace(".", "_")


def name_collisions(new_names: Iterable[str], existing: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs (new name, other name) that Kafka would refuse to create side by side: a new name that
    collides with an existing topic, or with another new name. Equal names are no collision."""
    seen: dict[str, str] = {collision_key(name): name for name in existing}
    pairs = []
    for name in sorted(set(new_names)):
        other = seen.get(collision_key(name))
        if other is not None and other != name:
            pairs.append((name, other))
        else:
            seen[collision_key(name)] = name
    return pairs


def target_names(template: str, topics: Iterable[str], topic_map: Mapping[str, str] | None = None) -> dict[str, str]:
    """Source topic -> target topic for every topic (an explicit ``topic_map`` entry first, else the
    template); refuses names Kafka would refuse, and any two topics that would land in one target
    (impossible with a valid template alone; checked, not assumed)."""
    names = {
        topic: str(topic_map[topic]) if topic_map and topic in topic_map else target_topic_name(template, topic)
        for topic in topics
    }
    by_target: dict[str, list[str]] = {}
    for topic, name in names.items():
        by_target.setdefault(name, []).append(topic)
    doubled = {name: sources for name, sources in by_target.items() if len(sources) > 1}
    if doubled:
        name, sources = sorted(doubled.items())[0]
        raise ConfigurationError(
            f"Rename template {template!r} maps {len(sources)} source topics ({', '.join(sorted(sources))}) onto "
            f"one target topic {name!r}; use a template that keeps names apart, e.g. 'src.{{topic}}'."
        )
    return names


def same_cluster_exclude_hint(template: str) -> str:
    """An exclude pattern that leaves out the copies a template makes, e.g. 'copy\\..*' for 'copy.{topic}'."""
    prefix, suffix = split_template(template)
    return re.escape(prefix) + ".*" + re.escape(suffix)
