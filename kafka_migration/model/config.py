"""Cluster connection settings and run options, validated as soon as they are read."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_migration.exceptions import BootstrapAddressError, ConfigurationError
from kafka_migration.model.bootstrap import broker_addresses
from kafka_migration.model.naming import target_topic_name, validate_rename_template

# librdkafka keys whose values must never be printed, logged or stored.
_SECRET_KEY = re.compile(
    r"(password|secret|token|key\.pem|keystore|truststore|jaas|credential|oauthbearer\.config)", re.I
)
# Secret values shorter than this are not scrubbed from messages (they would mangle ordinary words).
_SCRUB_MIN = 4

DEFAULT_INCLUDE = ".*"
DEFAULT_RENAME = "{topic}"

# The largest time --start takes: 9999-12-31T23:59:59.999Z in epoch milliseconds.
_LAST_START_MS = 253_402_300_799_999


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
    # Where the settings came from, for messages that say where to fix them (not compared, never secret).
    origin: str = field(default="", compare=False)
    secrets: SecretSource = field(default_factory=SecretSource)

    def __post_init__(self) -> None:
        if not str(self.settings.get("bootstrap.servers", "")).strip():
            raise ConfigurationError(
                f"The {self.role} cluster has no 'bootstrap.servers'. Give --{self.role} HOST:PORT "
                f"or set 'bootstrap.servers' in the {self.role} connection's librdkafka settings."
            )
        for key, value in self.settings.items():
            if not isinstance(key, str) or not key.strip() or not isinstance(value, (str, int, float, bool)):
                raise ConfigurationError(
                    f"The {self.role} cluster setting {key!r} must be a string, number or boolean "
                    f"(librdkafka settings are flat key/value pairs); fix it in {self.where}."
                )
        try:
            broker_addresses(str(self.settings["bootstrap.servers"]))
        except BootstrapAddressError as exc:
            raise ConfigurationError(
                f"The {self.role} bootstrap address {exc.address!r} is not HOST:PORT; give the brokers as "
                f"HOST:PORT[,HOST:PORT...], e.g. broker1:9092,broker2:9092, in {self.where}."
            ) from exc

    @property
    def where(self) -> str:
        """Where a user fixes these settings: an option, a file or an Airflow connection."""
        return self.origin or f"the {self.role} cluster's settings"

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
        origin = f"--{role}"
        if config_file is not None:
            settings.update(load_settings_file(role, Path(config_file)))
            origin = f"--{role} / --{role}-config {config_file}"
        if bootstrap is not None:
            if not bootstrap.strip():
                raise ConfigurationError(
                    f"--{role} is empty; give the {role} brokers as HOST:PORT[,HOST:PORT...] or leave the option "
                    f"out to use 'bootstrap.servers' from --{role}-config."
                )
            settings["bootstrap.servers"] = bootstrap
        return cls(role=role, settings=settings, origin=origin)


SOURCE, TARGET = "source", "target"


@dataclass(frozen=True)
class Endpoint:
    """One side of a run as its tasks need it: the role it plays in the run and its librdkafka settings.

    What travels to the Spark tasks, so kept small and picklable: a plain dict of settings, no secret
    references (the driver has merged those, see ``ClusterConfig.from_environment``). The role names
    the cluster in messages; it is the run's, which a failback reverses (see ``ClusterPair.of``).
    """

    role: str
    settings: Mapping[str, Any]

    def __repr__(self) -> str:  # never the secret values, as ClusterConfig's
        return f"Endpoint(role={self.role!r}, settings={redact(self.settings)!r})"


@dataclass(frozen=True)
class ClusterPair:
    """The source and target of one run, roles included: built once by the driver, taken by every task."""

    source: Endpoint
    target: Endpoint

    def __post_init__(self) -> None:
        if (self.source.role, self.target.role) != (SOURCE, TARGET):
            raise ValueError(f"a cluster pair is (source, target), got ({self.source.role}, {self.target.role})")

    @classmethod
    def of(cls, source: ClusterConfig, target: ClusterConfig) -> ClusterPair:
        """The run from ``source`` to ``target``; roles by position, not ``ClusterConfig.role``: a failback
        runs from the cutover's target (role "target") back to its source, and its messages and advice
        must name the clusters as the run uses them."""
        return cls.of_settings(source.settings, target.settings)

    @classmethod
    def of_settings(cls, source: Mapping[str, Any], target: Mapping[str, Any]) -> ClusterPair:
        return cls(Endpoint(SOURCE, dict(source)), Endpoint(TARGET, dict(target)))


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
    """One JSON object of librdkafka settings from a file; ``what`` names the file in messages."""
    what = what or f"--{role}-config file"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigurationError(
            f"{what} {path} does not exist; give the path of a JSON file of librdkafka settings."
        ) from None
    except IsADirectoryError:
        raise ConfigurationError(
            f"{what} {path} is a directory; give the path of a JSON file of librdkafka settings."
        ) from None
    except PermissionError:
        raise ConfigurationError(
            f"{what} {path} cannot be read (permission denied); make it readable by this user."
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigurationError(
            f"{what} {path} is not UTF-8 text (byte {exc.start}); save it as a UTF-8 JSON file."
        ) from None
    except OSError as exc:
        raise ConfigurationError(f"{what} {path} cannot be read ({exc.strerror}).") from None
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"{what} {path} is not valid JSON (line {exc.lineno}: {exc.msg}). "
            'It must be one object of librdkafka settings, e.g. {"security.protocol": "SASL_SSL"}.'
        ) from None
    if not isinstance(data, dict):
        raise ConfigurationError(
            f"{what} {path} holds a JSON {type(data).__name__}; it must hold one JSON object of "
            'librdkafka settings, e.g. {"security.protocol": "SASL_SSL"}.'
        )
    return data


def writable_dir(path: Path, what: str) -> Path:
    """Refuse a directory the run could not write into, before anything is written anywhere.

    Checks the directory, or the nearest existing parent that would hold it, without creating anything.
    """
    path = Path(path).expanduser()
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise ConfigurationError(f"{what} {path} is not a directory ({probe} is a file); give a directory path.")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ConfigurationError(f"{what} {path} is not writable by this user ({probe}); give a writable directory.")
    return path


def _compile(kind: str, pattern: str, matched: str) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise ConfigurationError(f"The {kind} pattern must be a string (a regular expression), got {pattern!r}.")
    try:
        return re.compile(pattern)
    except re.error as exc:
        # A shell glob ('*orders', 'orders*', '?x') is the usual slip: its regular expression is '.*orders'.
        glob = re.sub(r"(?<![.\\])([*?])", lambda m: ".*" if m.group(1) == "*" else ".", pattern)
        meant = ""
        if glob != pattern:
            try:
                re.compile(glob)
                meant = f" Did you mean {glob!r}? (a regular expression, not a shell glob: .* matches any text)"
            except re.error:
                pass
        raise ConfigurationError(
            f"The {kind} pattern {pattern!r} is not a valid regular expression: {exc}.{meant} {matched}"
        ) from exc


def compile_topic_pattern(kind: str, pattern: str) -> re.Pattern[str]:
    """A topic name pattern (include, exclude); bad input is a ConfigurationError that names ``kind``."""
    return _compile(kind, pattern, "Patterns are Python regular expressions matched against the whole topic name.")


def compile_group_pattern(kind: str, pattern: str) -> re.Pattern[str]:
    """A consumer group id pattern (group, exclude-group), as ``compile_topic_pattern`` for topics."""
    return _compile(
        kind,
        pattern,
        "Group patterns are Python regular expressions matched against the whole group id, e.g. 'orders-.*'.",
    )


DRY_RUN_CENSUS = ("full", "ends")


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
    # Accept an existing target topic that keeps less than the source (run/retention.py): only what it keeps
    # is copied, and the plan and the report say so.
    accept_target_retention: bool = False
    # Accept verified records the target lost since earlier runs (run/losses.py), recorded in the ledger.
    accept_target_loss: bool = False
    # Explicit target names (source -> target) where a template cannot say it, e.g. a failback's way back.
    topic_map: Mapping[str, str] | None = None
    # The cutover this run fails back, if it does: its target is then the original cluster, and the advice of
    # its errors never deletes or forgets what is there (run/direction.py).
    failback_of: str | None = None
    # A dry run's census of the schema ids (``--schema-ids keep`` or ``translate``; run/census_takers.py): ``full``
    # reads every planned record (with Spark above what the planning process reads), ``ends`` each partition's ends.
    dry_run_census: str = "full"

    def __post_init__(self) -> None:
        if isinstance(self.include, str) and not self.include.strip():
            raise ConfigurationError(
                "The include pattern is empty; give a regular expression that topic names must fully match, "
                "e.g. '.*' (every topic) or 'orders\\..*'."
            )
        compile_topic_pattern("include", self.include)
        if self.exclude:
            compile_topic_pattern("exclude", self.exclude)
        validate_rename_template(self.rename)
        if self.replication_factor is not None and (
            isinstance(self.replication_factor, bool) or self.replication_factor < 1
        ):
            raise ConfigurationError(
                f"The target replication factor must be at least 1, got {self.replication_factor}; leave it "
                "empty for min(source replication factor, target broker count)."
            )
        if isinstance(self.topics_per_job, bool) or self.topics_per_job < 1:
            raise ConfigurationError(
                f"The topics per job must be at least 1, got {self.topics_per_job}; the default is 25."
            )
        parse_start(self.start)
        for source, target in (self.topic_map or {}).items():
            target_topic_name("{topic}", str(target))  # a legal Kafka topic name, or a clear error
            if not isinstance(source, str) or not source:
                raise ConfigurationError(f"topic map entry {source!r} -> {target!r} needs a source topic name.")
        targets = list((self.topic_map or {}).values())
        if len(set(targets)) != len(targets):
            raise ConfigurationError(f"topic map {dict(self.topic_map or {})} sends two topics to one target topic.")
        if self.dry_run_census not in DRY_RUN_CENSUS:
            raise ConfigurationError(
                f"A dry run's census is {' or '.join(DRY_RUN_CENSUS)}, got {self.dry_run_census!r}; the default "
                "is full."
            )
        if self.dry_run_census != "full" and not self.dry_run:
            raise ConfigurationError(
                f"A census of the partitions' ends ({self.dry_run_census}) is for a dry run only: a run reads every "
                "record before anything is written; make it a dry run, or leave the census at full."
            )

    def target_name(self, topic: str) -> str:
        """The target topic of a source topic: the explicit map first, else the rename template."""
        if self.topic_map and topic in self.topic_map:
            return str(self.topic_map[topic])
        return target_topic_name(self.rename, topic)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> MigrationOptions:
        """Build from loosely typed input (DAG Params, JSON): missing or null means the default;
        a value of the wrong type is refused with its name, never guessed at (``bool("false")`` is True)."""
        include = param_text(values, "include")
        if include is not None and not include.strip():
            include = ""  # refused by __post_init__: an empty include must not widen to every topic
        exclude = param_text(values, "exclude")
        rename = param_text(values, "rename")
        start = param_text(values, "start")
        topics_per_job = param_count(values, "topics_per_job")
        return cls(
            include=DEFAULT_INCLUDE if include is None else include,
            exclude=exclude if exclude and exclude.strip() else None,
            rename=rename if rename and rename.strip() else DEFAULT_RENAME,
            dry_run=param_flag(values, "dry_run"),
            replication_factor=param_count(values, "replication_factor"),
            topics_per_job=25 if topics_per_job is None else topics_per_job,
            start=start if start and start.strip() else "earliest",
            allow_gaps=param_flag(values, "allow_gaps"),
            accept_target_retention=param_flag(values, "accept_target_retention"),
            accept_target_loss=param_flag(values, "accept_target_loss"),
            topic_map=dict(values["topic_map"]) if values.get("topic_map") else None,
            failback_of=param_text(values, "failback_of") or None,
            dry_run_census=param_text(values, "dry_run_census") or "full",
        )


def param_text(values: Mapping[str, Any], name: str) -> str | None:
    value = values.get(name)
    if value is None or isinstance(value, str):
        return value
    raise ConfigurationError(f"Param {name!r} must be a string, got {type(value).__name__} {value!r}.")


def param_flag(values: Mapping[str, Any], name: str) -> bool:
    value = values.get(name)
    if value is None or isinstance(value, bool):
        return bool(value)
    raise ConfigurationError(
        f"Param {name!r} must be true or false (a JSON boolean), got {type(value).__name__} {value!r}."
    )


def param_count(values: Mapping[str, Any], name: str) -> int | None:
    """A whole number, or None for missing, null or blank; '7' and 7.0 are 7 (JSON Schema's integers)."""
    value = values.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?[0-9]+\s*", value):
        return int(value)
    raise ConfigurationError(f"Param {name!r} must be a whole number, got {type(value).__name__} {value!r}.")


def parse_start(value: str) -> str | int:
    """``earliest``, ``latest``, or a timestamp (ISO 8601, or epoch milliseconds) as epoch ms."""
    if value in ("earliest", "latest"):
        return value
    from datetime import UTC, datetime

    way_out = "must be 'earliest', 'latest', an ISO 8601 time such as 2026-11-01T00:00:00Z, or epoch milliseconds"
    if not isinstance(value, str):
        raise ConfigurationError(f"--start {value!r} {way_out}.")
    if re.fullmatch(r"[0-9]+", value):
        millis = int(value)
    else:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise ConfigurationError(f"--start {value!r} {way_out}.") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        millis = int(moment.timestamp() * 1000)
    if not 0 <= millis <= _LAST_START_MS:
        # Kafka reads negative times as "latest" (-1) and "earliest" (-2): never pass one on.
        raise ConfigurationError(
            f"--start {value!r} is before 1970 or after 9999; give 'earliest', 'latest', or a time between "
            "1970-01-01 and 9999-12-31 (ISO 8601 or epoch milliseconds)."
        )
    return millis
