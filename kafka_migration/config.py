"""Cluster connection settings and run options, validated as soon as they are read."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.naming import validate_rename_template

# librdkafka keys whose values must never be printed, logged or stored.
_SECRET_KEY = re.compile(
    r"(password|secret|token|key\.pem|keystore|truststore|jaas|credential|oauthbearer\.config)", re.I
)
# Secret values shorter than this are not scrubbed from messages (they would mangle ordinary words).
_SCRUB_MIN = 4

DEFAULT_INCLUDE = ".*"
DEFAULT_RENAME = "{topic}"


def is_secret_setting(name: str) -> bool:
    return bool(_SECRET_KEY.search(name))


def redact(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``settings`` that is safe to log: secret values replaced by ``***``."""
    return {k: ("***" if is_secret_setting(k) else v) for k, v in settings.items()}


def scrub(text: str, settings: Mapping[str, Any]) -> str:
    """``text`` with every secret value of ``settings`` replaced by ``***``.

    For messages built from what a library reported, which may quote a setting's value.
    """
    for key, value in settings.items():
        secret = str(value)
        if is_secret_setting(key) and len(secret) >= _SCRUB_MIN:
            text = text.replace(secret, "***")
    return text


@dataclass(frozen=True)
class SecretSource:
    """Where a Spark driver that cannot be handed secrets in its environment finds them.

    On YARN and Kubernetes the environment of spark-submit becomes ``--conf`` arguments, so
    secret settings travel there by reference instead: a settings file mounted at the same
    path where the settings are resolved and where the driver runs, or a Kubernetes secret
    (``name:key``) whose value is the JSON object of the secret settings.
    """

    settings_file: str | None = None
    file_keys: frozenset[str] = frozenset()  # the settings the file provides
    kubernetes_secret: str | None = None


@dataclass(frozen=True)
class ClusterConfig:
    """How to reach one cluster: a role name for messages and librdkafka settings.

    Security settings (SASL, TLS) go in ``settings`` exactly as librdkafka names them;
    ``secrets`` says where a remote Spark driver can read the secret ones (see SecretSource).
    """

    role: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    secrets: SecretSource = field(default_factory=SecretSource)

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

    def __repr__(self) -> str:  # never the secret values, wherever a config ends up printed
        return f"ClusterConfig(role={self.role!r}, settings={redact(self.settings)!r}, secrets={self.secrets!r})"

    @property
    def bootstrap(self) -> str:
        return str(self.settings["bootstrap.servers"])

    def to_env(self) -> str:
        """Settings as JSON for a child process's environment (never its arguments)."""
        return json.dumps(dict(self.settings), sort_keys=True)

    @classmethod
    def from_env(cls, role: str, value: str | None) -> ClusterConfig:
        return cls.from_environment(role, {env_var(role): value} if value else {})

    @classmethod
    def from_environment(cls, role: str, environ: Mapping[str, str]) -> ClusterConfig:
        """The Spark driver's view: settings JSON, then a settings file, then secret settings JSON.

        ``KAFKA_MIGRATION_<ROLE>_CONFIG`` (JSON), ``..._CONFIG_FILE`` (path of a JSON file, e.g. a
        mounted secret) and ``..._SECRET_CONFIG`` (JSON, e.g. from a Kubernetes secret); later wins.
        """
        inline, path, secret = (environ.get(name) for name in (env_var(role), file_env_var(role), secret_env_var(role)))
        if not (inline or path or secret):
            raise ConfigurationError(
                f"The {role} cluster settings are missing from the environment ({env_var(role)}, "
                f"{file_env_var(role)} or {secret_env_var(role)}); start Spark jobs through kafka-migrate or the DAG."
            )
        settings: dict[str, Any] = {}
        if inline:
            settings.update(_json_object(role, inline, env_var(role)))
        if path:
            settings.update(load_settings_file(role, Path(path), what=f"{file_env_var(role)} file"))
        if secret:
            settings.update(_json_object(role, secret, secret_env_var(role)))
        return cls(role=role, settings=settings)

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


def file_env_var(role: str) -> str:
    """Path of a JSON settings file the Spark driver reads (a mounted secret)."""
    return f"KAFKA_MIGRATION_{role.upper()}_CONFIG_FILE"


def secret_env_var(role: str) -> str:
    """JSON of secret settings set on the Spark driver by the platform (a Kubernetes secret reference)."""
    return f"KAFKA_MIGRATION_{role.upper()}_SECRET_CONFIG"


def _json_object(role: str, value: str, name: str) -> dict[str, Any]:
    """Parse settings JSON without ever quoting it: it may hold secrets."""
    try:
        data = json.loads(value)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"{name} of the {role} cluster is not valid JSON (line {exc.lineno}: {exc.msg})."
        ) from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"{name} of the {role} cluster must be one JSON object of librdkafka settings.")
    return data


def load_settings_file(role: str, path: Path, what: str | None = None) -> dict[str, Any]:
    what = what or f"--{role}-config file"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigurationError(f"{what} {path} does not exist.") from None
    except PermissionError:
        raise ConfigurationError(f"{what} {path} is not readable by this user.") from None
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"{what} {path} is not valid JSON (line {exc.lineno}: {exc.msg}). "
            'It must be one object of librdkafka settings, e.g. {"security.protocol": "SASL_SSL"}.'
        ) from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"{what} {path} must hold one JSON object of librdkafka settings.")
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
