"""How the cluster settings reach the Spark driver without a secret on a command line.

In local and standalone client mode spark-submit's environment is the driver's: the settings
travel whole as JSON in ``KAFKA_MIGRATION_<ROLE>_CONFIG``. On YARN and Kubernetes the Spark
provider turns that environment into ``--conf`` arguments (visible in ``ps``, logs and the
Spark UI), so only the settings that are not secret travel there, and the secret ones by
reference: the path of a settings file mounted where the driver runs
(``KAFKA_MIGRATION_<ROLE>_CONFIG_FILE``), or a Kubernetes secret that Spark puts into the
driver's environment (``spark.kubernetes.driver.secretKeyRef.KAFKA_MIGRATION_<ROLE>_SECRET_CONFIG``).
Executors never need either: the driver hands them the merged settings with their tasks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.config import (
    ClusterConfig,
    env_var,
    file_env_var,
    is_secret_setting,
    secret_env_var,
)

SECRET_KEY_REF = "spark.kubernetes.driver.secretKeyRef."


def _secret(key: str) -> bool:
    # A *.location names a file on the driver; the file may be secret, its path is not.
    return is_secret_setting(key) and not key.endswith(".location")


@dataclass(frozen=True)
class DriverEnv:
    env: dict[str, str] = field(default_factory=dict)  # spark-submit's environment (--conf on YARN/K8s)
    conf: dict[str, str] = field(default_factory=dict)  # Spark confs that reference secrets


def driver_env(clusters: Sequence[ClusterConfig], *, env_becomes_conf: bool, kubernetes: bool) -> DriverEnv:
    """The environment and confs that give the driver the (source, target) settings; never a secret in a conf.

    The role is the position, not ``ClusterConfig.role``: a failback runs from the cutover's target
    to its source with the same two configs, swapped.
    """
    result = DriverEnv()
    for role, cluster in zip(("source", "target"), clusters, strict=False):
        if not env_becomes_conf:
            result.env[env_var(role)] = cluster.to_env()
            continue
        secret_keys = sorted(k for k in cluster.settings if _secret(k))
        public = {k: v for k, v in cluster.settings.items() if k not in secret_keys}
        result.env[env_var(role)] = json.dumps(public, sort_keys=True)
        source = cluster.secrets
        if source.kubernetes_secret:
            if not kubernetes:
                raise ConfigurationError(
                    f"The {role} connection names a Kubernetes secret ({source.kubernetes_secret}) but the Spark "
                    "master is not k8s://; on YARN use kafka_migration.settings_file instead."
                )
            result.conf[SECRET_KEY_REF + secret_env_var(role)] = source.kubernetes_secret
            continue
        if source.settings_file:
            result.env[file_env_var(role)] = source.settings_file
        missing = [k for k in secret_keys if k not in source.file_keys]
        if missing:
            raise ConfigurationError(
                f"On YARN and Kubernetes, spark-submit's environment becomes --conf arguments, which would expose "
                f"the {role} connection's {missing}. Put the secret settings in a JSON file mounted at the same path "
                "on the Airflow workers and the Spark driver and name it in the connection's extra as "
                '"kafka_migration.settings_file", or (Kubernetes) name a secret holding them as JSON: '
                '"kafka_migration.kubernetes_secret": "SECRET_NAME:KEY".'
            )
    return result
