"""Connections as Airflow stores them: the Kafka clusters (``KafkaClusterHook``), the ledger (``LedgerHook``),
the Spark master (``SparkConnectionHook``) and the schema registries (``SchemaRegistryHook``).

Convention of apache-airflow-providers-apache-kafka: a connection of type ``kafka``
whose extra field is the librdkafka configuration as JSON, ``bootstrap.servers``
included. Host and port are used as the bootstrap address when the extra has none.

Two extra keys are ours, not librdkafka's, for Spark on YARN and Kubernetes (see
kafka_migration/spark/driver_env.py): ``kafka_migration.settings_file``, a JSON file of
(secret) settings merged over the extra, read here and by the Spark driver (a mounted
secret, same path on both); ``kafka_migration.kubernetes_secret``, ``NAME:KEY`` of a
Kubernetes secret whose value is the JSON of the secret settings, for the driver pod.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from airflow.sdk import BaseHook
from airflow.sdk.log import mask_secret

from kafka_migration.airflow import settings
from kafka_migration.exceptions import ConfigurationError

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger
    from kafka_migration.model.schemas import RegistryConfig
from kafka_migration.model.config import ClusterConfig, SecretSource, is_secret_setting, load_settings_file
from kafka_migration.model.text import plural

SETTINGS_FILE_EXTRA = "kafka_migration.settings_file"
KUBERNETES_SECRET_EXTRA = "kafka_migration.kubernetes_secret"


class KafkaClusterHook(BaseHook):
    conn_name_attr = "kafka_conn_id"
    default_conn_name = "kafka_default"
    conn_type = "kafka"
    hook_name = "Kafka cluster (kafka-migration)"

    def __init__(self, kafka_conn_id: str, role: str = "source") -> None:
        super().__init__()
        self.kafka_conn_id = kafka_conn_id
        self.role = role

    def get_cluster_config(self) -> ClusterConfig:
        try:
            conn = self.get_connection(self.kafka_conn_id)
        except Exception as exc:
            raise ConfigurationError(
                f"Airflow connection {self.kafka_conn_id!r} for the {self.role} cluster does not exist ({exc}). "
                "Create it with type 'kafka' and the librdkafka settings as JSON in the extra field, e.g. "
                '{"bootstrap.servers": "broker:9092"}.'
            ) from None
        where = f"Airflow connection {self.kafka_conn_id!r} (its extra field)"
        try:
            # Parsed here, not with extra_dejson, which logs a traceback and returns {} for invalid JSON.
            settings: Any = json.loads(conn.extra) if conn.extra else {}
        except ValueError as exc:
            raise ConfigurationError(
                f"The extra field of Airflow connection {self.kafka_conn_id!r} is not valid JSON ({exc}); it must "
                'be one JSON object of librdkafka settings, e.g. {"bootstrap.servers": "broker:9092"}.'
            ) from None
        if not isinstance(settings, dict):
            raise ConfigurationError(
                f"The extra field of Airflow connection {self.kafka_conn_id!r} holds a JSON "
                f"{type(settings).__name__}; it must be one JSON object of librdkafka settings, e.g. "
                '{"bootstrap.servers": "broker:9092"}.'
            )
        mask_secret(settings)  # as extra_dejson does: the values are masked in task logs
        secrets = self._secret_source(settings)  # and the settings file merged into ``settings``
        if "bootstrap.servers" not in settings and conn.host:
            settings["bootstrap.servers"] = f"{conn.host}:{conn.port}" if conn.port else conn.host
        if conn.login and "sasl.username" not in settings:
            settings["sasl.username"] = conn.login
        if conn.password and "sasl.password" not in settings:
            settings["sasl.password"] = conn.password
        return ClusterConfig(role=self.role, settings=settings, origin=where, secrets=secrets)

    def _secret_source(self, settings: dict[str, Any]) -> SecretSource:
        """Take our own keys out of the extra (librdkafka rejects unknown settings); merge the file."""
        settings_file = settings.pop(SETTINGS_FILE_EXTRA, None)
        k8s_secret = settings.pop(KUBERNETES_SECRET_EXTRA, None)
        unknown = sorted(k for k in settings if k.startswith("kafka_migration."))
        if unknown:
            raise ConfigurationError(
                f"Airflow connection {self.kafka_conn_id!r} has unknown extra keys {unknown}; "
                f"the kafka_migration.* keys are {SETTINGS_FILE_EXTRA} and {KUBERNETES_SECRET_EXTRA}."
            )
        if k8s_secret is not None and (str(k8s_secret).count(":") != 1 or "" in str(k8s_secret).split(":")):
            raise ConfigurationError(
                f"{KUBERNETES_SECRET_EXTRA} of Airflow connection {self.kafka_conn_id!r} must look like "
                "SECRET_NAME:KEY (a Kubernetes secret in the driver's namespace and the key holding the JSON)."
            )
        from_file: dict[str, Any] = {}
        if settings_file:
            what = f"{SETTINGS_FILE_EXTRA} of Airflow connection {self.kafka_conn_id!r}:"
            from_file = load_settings_file(self.role, Path(str(settings_file)), what=what)
            settings.update(from_file)
            for key, value in from_file.items():  # masked in task logs, like the connection's own secrets
                if is_secret_setting(key):
                    mask_secret(str(value), key)
        return SecretSource(
            settings_file=str(settings_file) if settings_file else None,
            file_keys=frozenset(from_file),
            kubernetes_secret=str(k8s_secret) if k8s_secret else None,
        )

    def test_connection(self) -> tuple[bool, str]:
        from kafka_migration.kafka.clients import KafkaCluster

        try:
            info = KafkaCluster(self.get_cluster_config()).describe()
        except Exception as exc:
            return False, str(exc)
        return True, f"Connected to cluster {info.cluster_id} ({plural(info.broker_count, 'broker')})"


LEDGER_CONNECTION = "kafka_migration_ledger"
LEDGER_VARIABLE = "kafka_migration_ledger_url"


class LedgerHook(BaseHook):
    """The ledger's database: connection ``kafka_migration_ledger`` (type postgres, sqlite with the file's
    absolute path as host, or any other type as its URI), else Variable ``kafka_migration_ledger_url``,
    else ``[kafka_migration] ledger_url``, $KAFKA_MIGRATION_LEDGER_URL or SQLite in the state directory."""

    conn_name_attr = "ledger_conn_id"
    default_conn_name = LEDGER_CONNECTION
    hook_name = "Migration ledger (kafka-migration)"

    def __init__(self, ledger_conn_id: str = LEDGER_CONNECTION) -> None:
        super().__init__()
        self.ledger_conn_id = ledger_conn_id

    def get_uri(self) -> str:
        """The ledger's SQLAlchemy URL, password included: for ``Ledger.open``, never for a log."""
        from airflow.sdk import Variable

        from kafka_migration.ledger.urls import check_named_sqlite_folder, postgres_url

        try:
            conn = self.get_connection(self.ledger_conn_id)
        except Exception:
            conn = None
        if conn is not None:
            if conn.conn_type in ("postgres", "postgresql"):
                return postgres_url(conn.login, conn.password, conn.host, conn.port, conn.schema)
            if conn.conn_type == "sqlite":
                if not conn.host:
                    raise ConfigurationError(
                        f"Airflow connection {self.ledger_conn_id!r} (type sqlite) names no database file; put the "
                        "ledger file's absolute path in its host field."
                    )
                url = f"sqlite:///{conn.host}"
                check_named_sqlite_folder(url, f"Airflow connection {self.ledger_conn_id!r}")
                return url
            return conn.get_uri()
        named = Variable.get(LEDGER_VARIABLE, default=None)
        if named:
            check_named_sqlite_folder(named, f"Variable {LEDGER_VARIABLE}")
            return named
        return settings.configured_ledger_url()

    def get_conn(self) -> Ledger:
        """The opened ledger, its schema brought up to date."""
        from kafka_migration.ledger import Ledger

        return Ledger.open(self.get_uri())


SPARK_CONNECTION = "spark_default"
# What the Spark provider's form lets the spark-binary field be: a spark-submit on PATH.
SPARK_BINARIES = ("spark-submit", "spark2-submit", "spark3-submit")


@dataclass(frozen=True)
class SparkConnection:
    """A ``spark`` connection, read as the Spark provider documents it: host (and port) the master, and the
    extra's ``deploy-mode``, ``queue``, ``namespace``, ``principal``, ``keytab`` (base64) and ``spark-binary``;
    plus ``conf``, an object of Spark settings for every submit through it (the task's own win)."""

    master: str
    deploy_mode: str | None = None
    queue: str | None = None
    namespace: str | None = None
    principal: str | None = None
    keytab: str | None = field(default=None, repr=False)  # the keytab's content: a secret
    spark_binary: str | None = None
    conf: dict[str, str] = field(default_factory=dict)

    @property
    def is_kubernetes(self) -> bool:
        return self.master.startswith("k8s://")

    @property
    def is_yarn(self) -> bool:
        return self.master == "yarn"

    @property
    def driver_in_submit(self) -> bool:
        """The driver runs inside spark-submit on this machine (client deploy mode, not Kubernetes)."""
        return not self.is_kubernetes and self.deploy_mode != "cluster"


class SparkConnectionHook(BaseHook):
    """The Spark master a task submits to: connection ``spark_default`` (type ``spark``, the provider's form)."""

    conn_name_attr = "spark_conn_id"
    default_conn_name = SPARK_CONNECTION
    hook_name = "Spark master (kafka-migration)"

    def __init__(self, spark_conn_id: str = SPARK_CONNECTION) -> None:
        super().__init__()
        self.spark_conn_id = spark_conn_id

    def get_spark_connection(self) -> SparkConnection:
        try:
            conn = self.get_connection(self.spark_conn_id)
        except Exception as exc:
            raise ConfigurationError(
                f"Airflow connection {self.spark_conn_id!r} for the Spark master does not exist ({exc}). Create it "
                "with type 'spark' and the master as host: local[4], spark://HOST (port 7077), yarn or k8s://https://HOST."
            ) from None
        # A connection made from a URI keeps the master's scheme as its type (spark://, k8s://...).
        if conn.conn_type == "spark" and conn.host and ("://" in conn.host or not conn.port):
            master = conn.host
        else:
            master = f"{conn.conn_type}://{conn.host or ''}"
        if conn.port:
            master = f"{master}:{conn.port}"
        try:
            extra: Any = json.loads(conn.extra) if conn.extra else {}
        except ValueError as exc:
            raise ConfigurationError(
                f"The extra field of Airflow connection {self.spark_conn_id!r} is not valid JSON ({exc})."
            ) from None
        if not isinstance(extra, dict):
            raise ConfigurationError(
                f"The extra field of Airflow connection {self.spark_conn_id!r} must be a JSON object."
            )
        where = f"Airflow connection {self.spark_conn_id!r}"
        deploy_mode = extra.get("deploy-mode") or None
        if deploy_mode not in (None, "client", "cluster"):
            raise ConfigurationError(f"{where}: deploy-mode {deploy_mode!r} must be client or cluster.")
        binary = extra.get("spark-binary") or None
        if binary is not None and binary not in SPARK_BINARIES:
            raise ConfigurationError(f"{where}: spark-binary {binary!r} must be one of {', '.join(SPARK_BINARIES)}.")
        if extra.get("spark-home"):
            raise ConfigurationError(
                f"{where}: the spark-home extra is not read (nor by the Spark provider); set SPARK_HOME on the "
                "workers, or leave it: the installed pyspark's spark-submit is used."
            )
        conf = extra.get("conf") or {}
        if not isinstance(conf, dict) or not all(str(key).startswith("spark.") for key in conf):
            raise ConfigurationError(
                f'{where}: the extra\'s "conf" must be an object of Spark settings, e.g. {{"spark.cores.max": "4"}}.'
            )
        if extra.get("keytab"):
            mask_secret(str(extra["keytab"]))
        return SparkConnection(
            master=master,
            deploy_mode=deploy_mode,
            queue=extra.get("queue") or None,
            namespace=extra.get("namespace") or None,
            principal=extra.get("principal") or None,
            keytab=extra.get("keytab") or None,
            spark_binary=binary,
            conf={str(key): str(value) for key, value in conf.items()},
        )


REGISTRY_CONNECTIONS = {"source": "schema_registry_source", "target": "schema_registry_target"}


class SchemaRegistryHook(BaseHook):
    """A schema registry (``--schema-ids``): connection ``schema_registry_source`` or ``schema_registry_target``.

    The host is the registry's Confluent-compatible URL (``https://registry:8081``; Apicurio:
    ``http://host:8080/apis/ccompat/v7``), or a bare host with the type ``http`` or ``https`` as its scheme, the
    port and the schema field (the path) added, as Airflow splits a connection URI. Login and password are basic
    auth. The extra takes the keys of ``kafka-migrate run --*-registry-config``: ``bearer.auth.token``,
    ``ssl.ca.location``, ``ssl.certificate.location``, ``ssl.key.location`` (files on the worker), ``url`` instead
    of the host, ``basic.auth.user.info`` instead of login and password. Secrets are masked in task logs; they stay
    in the plan task (the copy does not need the registries: the id map travels in the plan).
    """

    conn_name_attr = "registry_conn_id"
    default_conn_name = REGISTRY_CONNECTIONS["source"]
    hook_name = "Schema registry (kafka-migration)"

    def __init__(self, registry_conn_id: str, role: str = "source") -> None:
        super().__init__()
        self.registry_conn_id = registry_conn_id
        self.role = role

    def get_registry_config(self) -> RegistryConfig:
        from kafka_migration.model.schemas import check_registry_settings, registry_config_of

        where = f"Airflow connection {self.registry_conn_id!r} of the {self.role} schema registry"
        try:
            conn = self.get_connection(self.registry_conn_id)
        except Exception as exc:
            raise ConfigurationError(
                f"Airflow connection {self.registry_conn_id!r} for the {self.role} schema registry does not exist "
                f"({exc}). Create it with the registry's URL as host, e.g. https://registry:8081 (Apicurio: "
                "http://host:8080/apis/ccompat/v7), or set Param schema_ids to off."
            ) from None
        try:
            extra: Any = json.loads(conn.extra) if conn.extra else {}
        except ValueError as exc:
            raise ConfigurationError(f"{where}: its extra field is not valid JSON ({exc}).") from None
        if not isinstance(extra, dict):
            raise ConfigurationError(f"{where}: its extra field must be one JSON object, not a {type(extra).__name__}.")
        mask_secret(extra)
        for secret in (conn.password, extra.get("bearer.auth.token"), extra.get("basic.auth.user.info")):
            if secret:
                mask_secret(str(secret))
        settings = check_registry_settings(extra, f"{where} (its extra field)")
        if conn.password and not conn.login:
            raise ConfigurationError(
                f"{where} has a password but no login: give the user as login for basic auth, or a bearer token as "
                "bearer.auth.token in the extra."
            )
        if conn.login:
            if "basic.auth.user.info" in settings:
                raise ConfigurationError(
                    f"{where}: give the user and password as login and password or as basic.auth.user.info in the "
                    "extra, not both."
                )
            settings["basic.auth.user.info"] = f"{conn.login}:{conn.password or ''}"
        if "url" not in settings:
            settings["url"] = _registry_url(conn, where)
        elif conn.host:
            raise ConfigurationError(f"{where}: give the registry's URL as host or as url in the extra, not both.")
        password = urlsplit(settings["url"]).password
        if password:
            mask_secret(password)
        return registry_config_of(settings, f"Airflow connection {self.registry_conn_id!r}")


def _registry_url(conn: Any, where: str) -> str:
    """The URL in a connection's host: whole (``https://registry:8081``, the port added when the field has one),
    or as Airflow splits a URI (type ``http``/``https``, host, port, schema: the path)."""
    host = (conn.host or "").strip()
    if not host:
        raise ConfigurationError(
            f"{where} has no host: put the registry's URL there, e.g. https://registry:8081 (Apicurio: "
            "http://host:8080/apis/ccompat/v7)."
        )
    if "://" not in host:
        if conn.conn_type not in ("http", "https"):
            raise ConfigurationError(
                f"{where}: host {host!r} has no scheme; give the whole URL, e.g. https://{host}:8081, or make the "
                "connection's type http or https."
            )
        host = f"{conn.conn_type}://{host}"
    scheme, netloc, path, query, fragment = urlsplit(host)
    if conn.port and urlsplit(host).port is None:
        netloc = f"{netloc}:{conn.port}"
    if conn.schema and path in ("", "/"):
        path = "/" + str(conn.schema).strip("/")
    return urlunsplit((scheme, netloc, path, query, fragment))
