"""Cluster connection settings and run options, validated as soon as they are read."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.naming import target_topic_name, validate_rename_template

# librdkafka keys whose values must never be printed, logged or stored.
_SECRET_KEY = re.compile(r"(password|secret|token|key\.pem|keystore|truststore|jaas|credential)", re.I)

DEFAULT_INCLUDE = ".*"
DEFAULT_RENAME = "{topic}"


def is_secret_setting(name: str) -> bool:
    return bool(_SECRET_KEY.search(name))


def redact(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``settings`` that is safe to log: secret values replaced by ``***``."""
    return {k: ("***" if is_secret_setting(k) else v) for k, v in settings.items()}


@dataclass(frozen=True)
class ClusterConfig:
    """How to reach one cluster: a role name for messages and librdkafka settings.

    Security settings (SASL, TLS) go in ``settings`` exactly as librdkafka names them.
    """

    role: str
    settings: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not str(self.settings.get("bootstrap.servers", "")).strip():
            raise ConfigurationError(
                f"The {self.role} cluster has no 'bootstrap.servers'. Give --{self.role} HOST:PORT "
                f"or set 'bootstrap.servers' in the {self.role} connection's librdkafka settings."
            )
        for key, value in self.settings.items():
            if not isinstance(key, str) or not isinstance(value, (str, int, float, bool)):
                raise ConfigurationError(
                    f"The {self.role} cluster setting {key!r} must be a string, number or boolean "
                    "(librdkafka settings are flat key/value pairs)."
                )

    @property
    def bootstrap(self) -> str:
        return str(self.settings["bootstrap.servers"])

    def to_env(self) -> str:
        """Settings as JSON for a child process's environment (never its arguments)."""
        return json.dumps(dict(self.settings), sort_keys=True)

    @classmethod
    def from_env(cls, role: str, value: str | None) -> ClusterConfig:
        if not value:
            raise ConfigurationError(
                f"The {role} cluster settings are missing from the environment "
                f"({env_var(role)}); start Spark jobs through kafka-migrate or the DAG."
            )
        return cls(role=role, settings=json.loads(value))

    @classmethod
    def build(cls, role: str, bootstrap: str | None, config_file: str | Path | None = None) -> ClusterConfig:
        """Merge a JSON settings file with a bootstrap address given on the command line."""
        settings: dict[str, Any] = {}
        if config_file:
            settings.update(load_settings_file(role, Path(config_file)))
        if bootstrap:
            settings["bootstrap.servers"] = bootstrap
        return cls(role=role, settings=settings)


def env_var(role: str) -> str:
    return f"KAFKA_MIGRATION_{role.upper()}_CONFIG"


def load_settings_file(role: str, path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigurationError(f"--{role}-config file {path} does not exist.") from None
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"--{role}-config file {path} is not valid JSON (line {exc.lineno}: {exc.msg}). "
            'It must be one object of librdkafka settings, e.g. {"security.protocol": "SASL_SSL"}.'
        ) from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"--{role}-config file {path} must hold one JSON object of librdkafka settings.")
    return data


def compile_pattern(kind: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigurationError(
            f"The {kind} pattern {pattern!r} is not a valid regular expression: {exc}. "
            "Patterns are Python regular expressions matched against the whole topic name."
        ) from None


@dataclass(frozen=True)
class MigrationOptions:
    """What to migrate and how; the same object whether it came from the CLI or a DAG's Params."""

    include: str = DEFAULT_INCLUDE
    exclude: str | None = None
    rename: str = DEFAULT_RENAME
    dry_run: bool = False
    replication_factor: int | None = None
    topics_per_job: int = 25
    start: str = "earliest"  # where a partition without checkpoint starts: earliest, latest or a timestamp
    allow_gaps: bool = False  # go on when records expired from the source before they were copied
    # Explicit target names (source -> target) where a template cannot say it, e.g. a failback's way back.
    topic_map: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        compile_pattern("include", self.include)
        if self.exclude:
            compile_pattern("exclude", self.exclude)
        validate_rename_template(self.rename)
        if self.replication_factor is not None and self.replication_factor < 1:
            raise ConfigurationError(f"replication factor must be at least 1, got {self.replication_factor}.")
        if self.topics_per_job < 1:
            raise ConfigurationError(f"topics per job must be at least 1, got {self.topics_per_job}.")
        parse_start(self.start)
        for source, target in (self.topic_map or {}).items():
            target_topic_name("{topic}", str(target))  # a legal Kafka topic name, or a clear error
            if not isinstance(source, str) or not source:
                raise ConfigurationError(f"topic map entry {source!r} -> {target!r} needs a source topic name.")
        targets = list((self.topic_map or {}).values())
        if len(set(targets)) != len(targets):
            raise ConfigurationError(f"topic map {dict(self.topic_map or {})} sends two topics to one target topic.")

    def target_name(self, topic: str) -> str:
        """The target topic of a source topic: the explicit map first, else the rename template."""
        if self.topic_map and topic in self.topic_map:
            return str(self.topic_map[topic])
        return target_topic_name(self.rename, topic)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> MigrationOptions:
        """Build from loosely typed input (DAG Params, JSON), treating blanks as defaults."""

        def text(name: str) -> str | None:
            value = values.get(name)
            return None if value is None or str(value).strip() == "" else str(value)

        rf = values.get("replication_factor")
        return cls(
            include=text("include") or DEFAULT_INCLUDE,
            exclude=text("exclude"),
            rename=text("rename") or DEFAULT_RENAME,
            dry_run=bool(values.get("dry_run", False)),
            replication_factor=int(rf) if rf not in (None, "", 0) else None,
            topics_per_job=int(values.get("topics_per_job") or 25),
            start=text("start") or "earliest",
            allow_gaps=bool(values.get("allow_gaps", False)),
            topic_map=dict(values["topic_map"]) if values.get("topic_map") else None,
        )


def parse_start(value: str) -> str | int:
    """``earliest``, ``latest``, or a timestamp (ISO 8601, or epoch milliseconds) as epoch ms."""
    if value in ("earliest", "latest"):
        return value
    if value.isdigit():
        return int(value)
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ConfigurationError(
            f"--start {value!r} must be 'earliest', 'latest', an ISO 8601 time such as 2026-11-01T00:00:00Z, "
            "or epoch milliseconds."
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)
