"""docker-compose.yaml and Dockerfile, checked without a Docker engine.

This machine cannot start the stack. What these tests prove: the file is valid for the
Compose Specification (its JSON schema, and `docker compose config` / Debian's
`docker-compose config` where installed), everything it refers to exists, images are
pinned, the Airflow connections resolve (through the project's own hooks and the Spark
provider) to the services and ports that serve them, with the connection ids the DAGs use,
and the image is built from the repository's code and the lock.
"""

from __future__ import annotations

import base64
import fnmatch
import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from sqlalchemy.engine import make_url

from tests.conftest import missing
from tests.unit.compose_file import REPO, ComposeProject, dockerfile_instructions, load

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "compose-spec.json"
OUR_IMAGE_SERVICES_MIN = {"airflow-init", "airflow-apiserver", "airflow-scheduler", "spark-master", "kafka-seed"}
AIRFLOW_SERVICES = ("airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer")
# Where Kafka clients of the migration run: tasks (scheduler, LocalExecutor) and Spark executors.
KAFKA_CLIENT_SERVICES = ("airflow-scheduler", "spark-worker-1", "spark-worker-2")


@pytest.fixture(scope="module")
def project() -> ComposeProject:
    return load()


def _depends_on(service: dict[str, Any]) -> dict[str, str]:
    deps = service.get("depends_on") or {}
    if isinstance(deps, list):
        return dict.fromkeys(deps, "service_started")
    return {name: (spec or {}).get("condition", "service_started") for name, spec in deps.items()}


def _our_image(project: ComposeProject) -> str:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    return f"kafka-migration:{version}"


def _lock_version(package: str) -> str:
    for line in (REPO / "requirements-lock.txt").read_text().splitlines():
        name, sep, version = line.partition("==")
        if sep and name.strip().lower() == package:
            return version.strip()
    raise AssertionError(f"{package} is not pinned in requirements-lock.txt")


# --- the file is a valid Compose file --------------------------------------------------------


def test_every_variable_comes_from_env_file_and_env_file_has_no_leftovers(project: ComposeProject) -> None:
    assert not project.missing, f"variables not set by .env: {project.missing}"
    assert set(project.env) == set(project.referenced), (
        f"in .env but unused: {sorted(set(project.env) - project.referenced)}; "
        f"used but not in .env: {sorted(project.referenced - set(project.env))}"
    )


def test_env_file_is_marked_demo_only_and_its_secrets_are_demo_values(project: ComposeProject) -> None:
    header = (REPO / ".env").read_text().split("\n\n")[0]
    assert "DEMO ONLY" in header
    for key, value in project.env.items():
        # Values are embedded in JSON, JAAS files and SCRAM specs as they are.
        assert re.fullmatch(r"[A-Za-z0-9_.+=/-]+", value), f"{key} in .env: use letters, digits and _ . + = / -"
        if re.search(r"PASSWORD|SECRET", key):
            assert value.startswith("demo-only"), f"{key} in .env must be an obvious demo value"


def test_compose_file_is_valid_for_the_compose_specification_schema(project: ComposeProject) -> None:
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.Draft7Validator(schema)
    errors = sorted(validator.iter_errors(project.model), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)


def test_schema_check_catches_a_misspelt_key(project: ComposeProject) -> None:
    broken = json.loads(json.dumps(project.model))
    broken["services"]["postgres"]["helthcheck"] = broken["services"]["postgres"].pop("healthcheck")
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))
    assert any("helthcheck" in e.message for e in validator.iter_errors(broken))


def _compose_cli() -> list[str] | None:
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, check=False)
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def test_compose_cli_accepts_the_file() -> None:
    """`config` parses, interpolates and validates the file; it needs no Docker engine."""
    cli = _compose_cli()
    if cli is None:
        message = "neither `docker compose` nor `docker-compose` is installed (make system-deps installs it)"
        missing(message)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "KAFKA_MIGRATION", "COMPOSE_"))}
    result = subprocess.run(
        [*cli, "--project-directory", str(REPO), "-f", str(REPO / "docker-compose.yaml"), "config", "--quiet"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "WARN" not in result.stderr.upper(), result.stderr


# --- everything referred to exists ----------------------------------------------------------


def test_depends_on_points_at_services_that_can_satisfy_the_condition(project: ComposeProject) -> None:
    services = project.services
    for name, service in services.items():
        for dep, condition in _depends_on(service).items():
            assert dep in services, f"{name} depends on unknown service {dep}"
            assert dep != name
            if condition == "service_healthy":
                assert "healthcheck" in services[dep], f"{name} waits for {dep} to be healthy; it has no healthcheck"
            elif condition == "service_completed_successfully":
                assert services[dep].get("restart") == "no", f"{dep} is awaited as a one-shot job: restart must be 'no'"
            else:
                assert condition == "service_started", f"{name}: unknown condition {condition}"


def test_every_long_running_service_has_a_healthcheck_and_restarts(project: ComposeProject) -> None:
    for name, service in project.services.items():
        if service.get("restart") == "no":
            continue
        assert service.get("restart") == "always", name
        test = service.get("healthcheck", {}).get("test")
        assert test and test[0] in ("CMD", "CMD-SHELL"), f"{name} has no health check"


def test_volumes_and_bind_mounts_exist(project: ComposeProject) -> None:
    declared = set(project.model.get("volumes") or {})
    used = set()
    for name in project.services:
        for target, source in project.mounts(name).items():
            assert target.startswith("/"), f"{name}: {target}"
            if source.startswith((".", "/")):
                assert (REPO / source).resolve().exists(), f"{name} mounts {source}, which is not in the repository"
            else:
                assert source in declared, f"{name} uses volume {source}, not declared under volumes:"
                used.add(source)
    assert declared == used, f"declared but unused volumes: {sorted(declared - used)}"
    assert not project.model.get("networks"), "one default network; add network checks before declaring others"
    for name, service in project.services.items():
        assert not service.get("networks"), name


def test_images_are_pinned(project: ComposeProject) -> None:
    ours = _our_image(project)
    for name, service in project.services.items():
        image = service.get("image")
        assert image, f"{name} has no image name"
        repository, _, tag = image.rpartition(":")
        assert repository and tag and "/" not in tag, f"{name}: image {image} has no tag"
        assert tag != "latest" and re.search(r"\d", tag), f"{name}: image {image} is not pinned to a version"
        if "build" in service:
            assert image == ours, f"{name} builds the project image; name it {ours}"
            assert service["build"]["context"] == "." and service["build"]["dockerfile"] == "Dockerfile"
    assert {n for n, s in project.services.items() if s.get("image") == ours} >= OUR_IMAGE_SERVICES_MIN
    for instruction, arguments in dockerfile_instructions():
        if instruction == "FROM":
            image = arguments.split()[0]
            assert re.fullmatch(r"[\w./-]+:[\w.-]*\d[\w.-]*", image), f"Dockerfile: FROM {image} is not pinned"


def test_scripts_get_the_environment_they_require(project: ComposeProject) -> None:
    """Each `: "${X:?}"` guard of a mounted script is met by the service that runs it."""
    runs = {"kafka-certs": "make-certs.sh", "kafka-source-format": "format-source.sh"}
    scripts = {
        "kafka-certs": REPO / "docker/kafka/make-certs.sh",
        "kafka-source-format": REPO / "docker/kafka/format-source.sh",
        "postgres": REPO / "docker/postgres/create-ledger-db.sh",
    }
    for service, path in scripts.items():
        if service in runs:
            assert runs[service] in " ".join(project.services[service]["command"])
        required = set(re.findall(r"\$\{([A-Z_]+):\?\}", path.read_text()))
        assert required, path
        env = project.environment(service)
        assert required <= set(env), f"{service} lacks {sorted(required - set(env))} for {path.name}"
        assert all(env[k] for k in required), service


# --- the connections point at the services that serve them --------------------------------------


@functools.cache
def _dag_connection_ids() -> dict[str, str]:
    """The connection ids the repository's DAGs use, read from the DAG objects themselves."""
    from kafka_migration.airflow.hooks import LEDGER_CONNECTION
    from kafka_migration.airflow.operators import MigrationSparkOperator

    ids: dict[str, set[str]] = {"source": set(), "target": set(), "spark": set()}
    for path in sorted((REPO / "dags").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"compose_check_{path.stem}", path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        dag = module.dag
        ids["source"].add(dag.params["source_conn_id"])
        ids["target"].add(dag.params["target_conn_id"])
        for task in dag.tasks:
            if getattr(task, "operator_class", type(task)) is MigrationSparkOperator:
                ids["spark"].add(task.partial_kwargs["conn_id"])
    for role, found in ids.items():
        assert len(found) == 1, f"the DAGs use several {role} connections: {found}"
    return {role: found.pop() for role, found in ids.items()} | {"ledger": LEDGER_CONNECTION}


@pytest.fixture(scope="module")
def connection_ids() -> dict[str, str]:
    return dict(_dag_connection_ids())


def _listeners(env: dict[str, str]) -> dict[str, tuple[str, str]]:
    """host:port -> (listener name, security protocol), from the broker's advertised listeners."""
    protocols = dict(item.split(":") for item in env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(","))
    result = {}
    for listener in env["KAFKA_ADVERTISED_LISTENERS"].split(","):
        name, _, address = listener.partition("://")
        result[address] = (name, protocols[name])
    return result


def _resolve(project: ComposeProject, service: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Resolve the connections from the service's environment with the code that uses them."""
    from kafka_migration.airflow.hooks import KafkaClusterHook, LedgerHook, SparkConnectionHook

    for key in list(os.environ):
        if key.startswith("AIRFLOW_CONN_"):
            monkeypatch.delenv(key)
    env = project.environment(service)
    for key, value in env.items():
        if key.startswith("AIRFLOW_CONN_"):
            json.loads(value)  # the JSON form, not a URI
            monkeypatch.setenv(key, value)
    ids = dict(_dag_connection_ids())
    return {
        "source": KafkaClusterHook(ids["source"], "source").get_cluster_config().settings,
        "target": KafkaClusterHook(ids["target"], "target").get_cluster_config().settings,
        "spark": SparkConnectionHook(ids["spark"]).get_spark_connection(),
        "ledger": LedgerHook().get_uri(),
    }


def test_every_airflow_component_has_the_connections_the_dags_use(
    project: ComposeProject, connection_ids: dict[str, str]
) -> None:
    docs = (REPO / "docs" / "airflow.md").read_text()
    for conn_id in connection_ids.values():
        assert f"`{conn_id}`" in docs, f"docs/airflow.md does not document connection {conn_id}"
    for service in (*AIRFLOW_SERVICES, "airflow-init"):
        env = project.environment(service)
        for conn_id in connection_ids.values():
            assert f"AIRFLOW_CONN_{conn_id.upper()}" in env, f"{service} lacks connection {conn_id}"


def test_kafka_connections_reach_the_broker_listeners(project: ComposeProject, monkeypatch: pytest.MonkeyPatch) -> None:
    resolved = _resolve(project, "airflow-scheduler", monkeypatch)
    source, target = resolved["source"], resolved["target"]

    source_env = project.environment("kafka-source")
    name, protocol = _listeners(source_env)[source["bootstrap.servers"]]
    assert protocol == source["security.protocol"] == "SASL_SSL"
    assert source["sasl.mechanism"] in source_env["KAFKA_SASL_ENABLED_MECHANISMS"].split(",")
    assert source["bootstrap.servers"].split(":")[0] == project.services["kafka-source"]["hostname"]
    listeners = dict(item.split("://") for item in source_env["KAFKA_LISTENERS"].split(","))
    assert listeners[name] == ":" + source["bootstrap.servers"].split(":")[1]
    # The user the tasks log in with is one the format service created, with the same password.
    format_env = project.environment("kafka-source-format")
    assert (source["sasl.username"], source["sasl.password"]) == (
        format_env["SOURCE_SASL_USERNAME"],
        format_env["SOURCE_SASL_PASSWORD"],
    )
    # Same KRaft identity for the broker and the storage formatted for it.
    for key in ("CLUSTER_ID", "KAFKA_NODE_ID", "KAFKA_LOG_DIRS", "KAFKA_CONTROLLER_QUORUM_VOTERS", "KAFKA_LISTENERS"):
        assert format_env[key] == source_env[key], key
    assert project.mounts("kafka-source-format")[source_env["KAFKA_LOG_DIRS"]] == "kafka-source-data"
    assert project.mounts("kafka-source")[source_env["KAFKA_LOG_DIRS"]] == "kafka-source-data"

    # KRaft cluster ids: base64url of 16 bytes, and two clusters (the ledger keys checkpoints by id).
    target_env = project.environment("kafka-target")
    ids = {source_env["CLUSTER_ID"], target_env["CLUSTER_ID"]}
    assert len(ids) == 2
    for cluster_id in ids:
        assert len(base64.urlsafe_b64decode(cluster_id + "==")) == 16, cluster_id

    _, protocol = _listeners(target_env)[target["bootstrap.servers"]]
    assert protocol == target.get("security.protocol", "PLAINTEXT") == "PLAINTEXT"
    assert target["bootstrap.servers"].split(":")[0] == project.services["kafka-target"]["hostname"]


def test_the_ca_file_is_where_kafka_clients_look(project: ComposeProject, monkeypatch: pytest.MonkeyPatch) -> None:
    ca_location = _resolve(project, "airflow-scheduler", monkeypatch)["source"]["ssl.ca.location"]
    seed_settings = json.loads(project.environment("kafka-seed")["KAFKA_MIGRATION_SEED_CONFIG"])
    assert seed_settings["ssl.ca.location"] == ca_location
    ca_dir, ca_name = ca_location.rsplit("/", 1)
    for service in (*KAFKA_CLIENT_SERVICES, "kafka-seed"):
        assert project.mounts(service).get(ca_dir) == "kafka-ca", f"{service} does not mount the CA at {ca_dir}"
    # kafka-certs writes ca.pem into the same volume.
    certs_mounts = {source: target for target, source in project.mounts("kafka-certs").items()}
    script = (REPO / "docker/kafka/make-certs.sh").read_text()
    assert re.search(r"CA_DIR=\$\{CA_DIR:-" + re.escape(certs_mounts["kafka-ca"]) + r"\}", script)
    assert f'"$CA_DIR/{ca_name}"' in script
    secrets_dir = re.search(r"SECRETS=\$\{SECRETS_DIR:-([^}]+)\}", script).group(1)  # type: ignore[union-attr]
    assert certs_mounts["kafka-source-secrets"] == secrets_dir
    assert project.mounts("kafka-source")[secrets_dir] == "kafka-source-secrets"
    for key in ("KAFKA_SSL_KEYSTORE_FILENAME", "KAFKA_SSL_KEYSTORE_CREDENTIALS", "KAFKA_SSL_KEY_CREDENTIALS"):
        assert project.environment("kafka-source")[key] in script.replace("$HOST", "kafka-source"), key


def test_spark_connection_is_the_standalone_master(project: ComposeProject, monkeypatch: pytest.MonkeyPatch) -> None:
    spark = _resolve(project, "airflow-scheduler", monkeypatch)["spark"]
    master = spark.master
    assert spark.deploy_mode == "client"  # the driver runs in the task, next to the plan files
    host, port = re.fullmatch(r"spark://([\w-]+):(\d+)", master).groups()  # type: ignore[union-attr]
    command = project.services[host]["command"]
    assert "org.apache.spark.deploy.master.Master" in command
    assert command[command.index("--port") + 1] == port and command[command.index("--host") + 1] == host
    worker_class = "org.apache.spark.deploy.worker.Worker"
    workers = [n for n, s in project.services.items() if worker_class in s.get("command", [])]
    assert len(workers) == 2
    for worker in workers:
        assert project.services[worker]["command"][-1] == master
        assert project.services[worker]["image"] == project.services["airflow-scheduler"]["image"]
    # Executors connect back to the driver in the scheduler container, by a name they can resolve.
    scheduler = project.services["airflow-scheduler"]
    assert project.environment("airflow-scheduler")["SPARK_LOCAL_HOSTNAME"] == scheduler["hostname"]
    assert project.environment("airflow-scheduler")["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"


def test_ledger_and_metadata_databases(project: ComposeProject, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = make_url(_resolve(project, "airflow-scheduler", monkeypatch)["ledger"])
    pg = project.environment("postgres")
    assert (ledger.host, ledger.port) == ("postgres", 5432)
    assert (ledger.database, ledger.username, ledger.password) == (
        pg["LEDGER_DB_NAME"],
        pg["LEDGER_DB_USER"],
        pg["LEDGER_DB_PASSWORD"],
    )
    # The Kafka migrations page of the API server reads the same ledger as the tasks.
    page = make_url(project.environment("airflow-apiserver")["KAFKA_MIGRATION_LEDGER_URL"])
    assert page == ledger
    meta = make_url(project.environment("airflow-scheduler")["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
    assert (meta.host, meta.port, meta.database, meta.username, meta.password) == (
        "postgres",
        5432,
        pg["POSTGRES_DB"],
        pg["POSTGRES_USER"],
        pg["POSTGRES_PASSWORD"],
    )
    assert meta.database != ledger.database and meta.username != ledger.username
    assert meta.drivername == ledger.drivername == "postgresql+psycopg"  # psycopg 3 is what the lock installs
    # Airflow's async engine: without this setting it would use asyncpg, which the lock lacks.
    meta_async = make_url(project.environment("airflow-scheduler")["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"])
    assert meta_async == meta
    for package in ("psycopg", "psycopg-binary", "sqlalchemy"):
        _lock_version(package)


def test_airflow_components_share_what_they_must(project: ComposeProject) -> None:
    env = {s: project.environment(s) for s in AIRFLOW_SERVICES}
    for key in (
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC",
        "AIRFLOW__API_AUTH__JWT_SECRET",
        "AIRFLOW__CORE__FERNET_KEY",
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL",
        "KAFKA_MIGRATION_STATE_DIR",
    ):
        assert len({e[key] for e in env.values()}) == 1, f"{key} differs between Airflow components"
    api = project.services["airflow-apiserver"]
    assert env["airflow-scheduler"]["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"].startswith(
        f"http://{api['hostname']}:{api['ports'][0].split(':')[-1]}/"
    )
    # Reports: written by tasks in the scheduler, served by the API server, from one volume.
    state_dir = env["airflow-scheduler"]["KAFKA_MIGRATION_STATE_DIR"]
    assert project.mounts("airflow-scheduler")[state_dir] == project.mounts("airflow-apiserver")[state_dir]
    # The login the init service writes is the file the API server reads.
    passwords = env["airflow-apiserver"]["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"]
    directory = passwords.rsplit("/", 1)[0]
    assert project.mounts("airflow-init")[directory] == project.mounts("airflow-apiserver")[directory]
    init = project.services["airflow-init"]
    assert "airflow db migrate" in init["command"][-1]
    assert "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE" in init["command"][-1]
    user = env["airflow-apiserver"]["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS"].split(":")[0]
    assert project.environment("airflow-init")["_AIRFLOW_ADMIN_USERNAME"] == user


def test_the_test_and_bench_airflow_schedules_as_the_compose_file_does(project: ComposeProject) -> None:
    from harness.servers.airflow_server import SCHEDULER_IDLE_SLEEP_TIME

    sleep = project.environment("airflow-scheduler")["AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME"]
    assert sleep == SCHEDULER_IDLE_SLEEP_TIME


# --- the image is built from the repository ---------------------------------------------------------


def test_dockerfile_installs_the_lock_and_the_repository_code() -> None:
    steps = dockerfile_instructions()
    copies = {args.split()[-2]: args.split()[-1] for i, args in steps if i == "COPY" and "--from" not in args}
    runs = " ".join(args for i, args in steps if i == "RUN")
    assert copies["dags"] == "/opt/airflow/dags"  # Airflow's default dags_folder in its image
    assert copies["plugins"] == "/opt/airflow/plugins"
    for package in ("kafka_migration", "spark_jobs", "harness"):
        assert package in copies, f"the image lacks {package}/"
    assert "requirements-lock.txt" in copies
    assert re.search(r"pip install --no-cache-dir --no-deps -r requirements-lock\.txt", runs)
    assert re.search(r"pip install --no-cache-dir --no-deps \.", runs)
    ignored = (REPO / ".dockerignore").read_text().split()
    assert ".venv" in ignored and ".env" in ignored and ".git" in ignored
    for needed in ("dags", "plugins", "kafka_migration", "spark_jobs", "harness", "requirements-lock.txt"):
        assert needed not in ignored
    assert not any(i in ("ENV", "ARG") and re.search(r"PASSWORD|SECRET|FERNET", a) for i, a in steps), (
        "no secrets in the image"
    )


def test_airflow_image_version_matches_the_lock() -> None:
    bases = [args.split()[0] for i, args in dockerfile_instructions() if i == "FROM"]
    airflow = [b for b in bases if b.startswith("apache/airflow:")]
    assert len(airflow) == 1, bases
    match = re.fullmatch(r"apache/airflow:(?:slim-)?(\d+\.\d+\.\d+)-python(\d+\.\d+)", airflow[0])
    assert match, f"{airflow[0]}: pin the Airflow and Python versions"
    assert match.group(1) == _lock_version("apache-airflow"), "FROM apache/airflow must be the locked Airflow version"
    assert match.group(1).startswith("3.3.")
    assert match.group(2) == "3.11"  # the Python the lock was resolved with (Makefile: python3.11)
    java = [b for b in bases if b.startswith("eclipse-temurin:")]
    assert java and java[0].split(":")[1].startswith("17."), "Spark needs Java 17"


def test_repository_files_the_image_needs_exist() -> None:
    for path in ("dags/kafka_migration_dag.py", "plugins/kafka_migration_plugin.py", "spark_jobs/copy_topics.py"):
        assert (REPO / path).is_file(), path


def test_package_files_reach_a_non_editable_install() -> None:
    """The image installs the project with `pip install .`, which takes only .py files here
    (no package-data declared); the tests run an editable install, which sees everything."""
    tracked = subprocess.run(
        ["git", "ls-files", "kafka_migration", "spark_jobs"], cwd=REPO, capture_output=True, text=True, check=False
    )
    if tracked.returncode != 0:
        missing("not a git checkout")
    # The console's sources are built into www/dist (package data) by the Dockerfile's node stage.
    console = "kafka_migration/airflow/console/www/"
    data_files = {f for f in tracked.stdout.split() if not f.endswith(".py") and not f.startswith(console)}
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    declared = {
        f
        for f in data_files
        for package, patterns in pyproject["tool"]["setuptools"]["package-data"].items()
        if any(fnmatch.fnmatch(f, f"{package.replace('.', '/')}/{pattern}") for pattern in patterns)
    }
    assert "kafka_migration/spark/log4j2-driver.properties" in declared  # the Spark driver's log configuration
    # script.py.mako is Alembic's template for writing new migrations, not needed to run them.
    assert data_files - declared <= {"kafka_migration/ledger/migrations/script.py.mako"}, (
        f"{sorted(data_files - declared)} would be missing from the image: declare them in "
        "[tool.setuptools.package-data] in pyproject.toml"
    )
    assert pyproject["tool"]["setuptools"]["packages"]["find"]["include"] == ["kafka_migration*", "spark_jobs*"]
    assert pyproject["tool"]["setuptools"]["package-data"]["kafka_migration.airflow.console"] == ["www/dist/*"]
    copies = [args for i, args in dockerfile_instructions() if i == "COPY" and args.startswith("--from=console")]
    assert copies and copies[0].split()[-1] == f"./{console}dist", "the image must carry the console's bundle"
