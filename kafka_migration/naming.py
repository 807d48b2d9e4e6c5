"""Target topic names from a rename template. Pure: imported by config validation and by planning alike."""

from __future__ import annotations

import re
import string

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


def target_topic_name(template: str, topic: str) -> str:
    name = template.format(topic=topic)
    if not _LEGAL_TOPIC.fullmatch(name) or name in {".", ".."}:
        raise ConfigurationError(
            f"Rename template {template!r} turns {topic!r} into {name!r}, which is not a legal Kafka topic "
            "name (letters, digits, '.', '_', '-'; at most 249 characters)."
        )
    return name
