"""The executor environment: a packed virtualenv that Spark ships to every executor.

On a cluster the executors do not have the driver's virtualenv: whatever Python the
copy and verify tasks import (confluent-kafka and this package) must travel with the
application. Following Spark's Python package management guide, ``build_executor_env``
makes a slim virtualenv (confluent-kafka at the driver's version and a regular,
non-editable install of this package; neither Airflow nor pyspark: the cluster's Spark
puts its own pyspark on the workers' path) and packs it with venv-pack;
``executor_env_conf`` gives the settings that ship it:

    spark.archives=<archive>#env           unpacked as ./env in every executor's directory
    spark.pyspark.python=./env/bin/python  the executors' Python
    spark.python.daemon.module=kafka_migration.spark.daemon  their worker daemon (spark/daemon.py)
    spark.pyspark.driver.python=<this interpreter>  (client mode: the driver keeps its own)

A venv-pack archive holds the packages but not the interpreter: ``env/bin/python`` links
to the interpreter the environment was built with, which must exist at the same path on
every executor node (build with ``python=`` an interpreter the nodes have, e.g. in the
image the executors run). PySpark also needs the same minor Python version on both sides.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from collections.abc import Callable, Mapping
from pathlib import Path

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.spark.startup import COMPILED_DAEMON, DAEMON_MODULE

EXECUTOR_ENV_VARIABLE = "KAFKA_MIGRATION_EXECUTOR_ENV"
ALIAS = "env"  # the directory the archive is unpacked into, in each executor's working directory
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")  # what Spark unpacks (and venv-pack writes)
DEFAULT_OUTPUT = Path("kafka-migration-executor-env.tar.gz")
DISTRIBUTION = "kafka-migration"
PACKAGES = ("kafka_migration", "spark_jobs")  # this distribution's top-level packages (pyproject.toml)
# Third-party packages the executor side imports (copy, verify, reader, clients): pinned to the driver's versions.
EXECUTOR_REQUIREMENTS = ("confluent-kafka",)
# Parts of those packages that cannot be imported in the environment (their own dependencies, e.g. authlib,
# httpx, fastavro, are not installed) and that nothing on the executors imports: left out of the archive, which
# every executor fetches and unpacks (confluent-kafka's schema registry clients are 3 MB of its 4.4).
UNIMPORTABLE = ("confluent_kafka/schema_registry", "confluent_kafka/avro", "confluent_kafka/kafkatest")


# -- shipping it --------------------------------------------------------------------------------


def configured_executor_env(value: str | None = None) -> str | None:
    """``value`` when given, else $KAFKA_MIGRATION_EXECUTOR_ENV; empty means none."""
    chosen = value if value is not None else os.environ.get(EXECUTOR_ENV_VARIABLE, "")
    return chosen.strip() or None


def executor_env_conf(
    archive: str,
    conf: Mapping[str, str] | None = None,
    deploy_mode: str | None = None,
    master: str | None = None,
) -> dict[str, str]:
    """``conf`` with the settings that ship ``archive`` to the executors; the user's own settings win.

    ``archive`` is a local file (checked here, before anything runs) or a URI Spark can fetch
    (``hdfs://``, ``s3a://``, ``https://``, ``local://``...), optionally with ``#name`` for the
    directory it is unpacked into (default ``env``). An archive in ``spark.archives`` already is kept.
    With a ``local[...]`` master nothing is shipped: the executors are this process's Python (and
    Spark would not find ``./env`` from their working directory).
    """
    conf = dict(conf or {})
    location, _, alias = archive.strip().partition("#")
    alias = alias or ALIAS
    _check_archive(location)
    if master is not None and master.strip().lower().startswith("local"):
        return conf
    scheme = urllib.parse.urlparse(location).scheme
    uri = str(Path(location).resolve()) if not scheme else location
    shipped = f"{uri}#{alias}"
    theirs = [a.strip() for a in conf.get("spark.archives", "").split(",") if a.strip()]
    ours = {
        "spark.archives": ",".join([*theirs, shipped]),
        "spark.pyspark.python": f"./{alias}/bin/python",
    }
    if "spark.pyspark.python" not in conf:
        # The executors run this environment, which holds this package: its daemon imports compiled PySpark
        # and the tasks' modules once per executor instead of once per worker (spark/daemon.py).
        ours[DAEMON_MODULE] = COMPILED_DAEMON
    if (deploy_mode or conf.get("spark.submit.deployMode") or "client") == "client":
        # In client mode the driver runs here, where ./env does not exist: it keeps this interpreter.
        ours["spark.pyspark.driver.python"] = sys.executable
    return {**ours, **{k: v for k, v in conf.items() if k != "spark.archives"}}


def _check_archive(location: str) -> None:
    if not location:
        raise ConfigurationError(
            "The executor environment is empty: give the archive built by `kafka-migrate package-env`."
        )
    if not location.lower().endswith(ARCHIVE_SUFFIXES):
        raise ConfigurationError(
            f"The executor environment {location!r} is not an archive Spark can unpack "
            f"({', '.join(ARCHIVE_SUFFIXES)}); build one with `kafka-migrate package-env`."
        )
    parsed = urllib.parse.urlparse(location)
    if parsed.scheme in ("", "file"):
        path = Path(urllib.parse.unquote(parsed.path) if parsed.scheme else location)
        if not path.is_file():
            raise ConfigurationError(
                f"The executor environment {path} does not exist; build it with "
                f"`kafka-migrate package-env --output {path}`, or drop the setting (--executor-env, "
                f"${EXECUTOR_ENV_VARIABLE}, Airflow Variable kafka_migration_executor_env)."
            )


# -- building it --------------------------------------------------------------------------------


def build_executor_env(
    output: Path = DEFAULT_OUTPUT,
    python: str | None = None,
    project: Path | None = None,
    on_line: Callable[[str], None] = print,
) -> Path:
    """Build the slim executor virtualenv and pack it into ``output`` (.tar.gz or .zip); returns its path.

    ``python``: the interpreter the environment links to (default: the one behind this process); it
    must exist at that path on the executor nodes. ``project``: a source tree or wheel of this package
    (default: the code this process runs, so that driver and executors run the same).
    """
    output = Path(output)
    if not str(output).lower().endswith((".tar.gz", ".tgz", ".zip")):
        raise ConfigurationError(f"--output {output} must end with .tar.gz, .tgz or .zip (what Spark unpacks).")
    interpreter = _interpreter(python)
    try:
        import venv_pack
    except ImportError as exc:
        raise ConfigurationError(
            "venv-pack is not installed next to kafka-migration; install it (pip install venv-pack, "
            "it is in requirements-lock.txt)."
        ) from exc
    requirements = [f"{name}=={importlib.metadata.version(name)}" for name in EXECUTOR_REQUIREMENTS]
    with tempfile.TemporaryDirectory(prefix="kafka-migration-env-") as work:
        source = _project_source(project, Path(work))
        env = Path(work) / "env"
        on_line(f"Creating a virtualenv with {interpreter}")
        _run([interpreter, "-m", "venv", "--without-pip", str(env)])
        env_python = env / "bin" / "python"
        pip = [sys.executable, "-m", "pip", "--python", str(env_python), "install", "--no-deps", "--no-input"]
        if source is not None:
            on_line(f"Installing {', '.join(requirements)} and {DISTRIBUTION} from {source}")
            _run([*pip, *requirements, str(source)])
        else:
            on_line(f"Installing {', '.join(requirements)}; copying {DISTRIBUTION} as installed here")
            _run([*pip, *requirements])
            _copy_installed(_site_packages(env_python))
        site = _site_packages(env_python)
        for part in UNIMPORTABLE:
            shutil.rmtree(site / part, ignore_errors=True)
        # What the executors import: the packages, and what the tasks and the worker daemon import.
        tasks = "from kafka_migration.spark.executor_tasks import import_task_modules as m; m()"
        check = f"import {', '.join(PACKAGES)}; {tasks}"
        _run([str(env_python), "-c", check], cwd=work)
        output.parent.mkdir(parents=True, exist_ok=True)
        partial = output.with_name(f".{output.name}.partial{''.join(output.suffixes)}")
        on_line(f"Packing {env} into {output}")
        venv_pack.pack(prefix=str(env), output=str(partial), force=True, verbose=False)
        partial.chmod(0o644)
        partial.replace(output)
    on_line(
        f"Executor environment: {output.resolve()} ({output.stat().st_size / 1e6:.1f} MB; Python links to "
        f"{interpreter}, which the executor nodes must have)"
    )
    return output


def _interpreter(python: str | None) -> str:
    """The base interpreter (not a venv's) with the driver's Python minor version."""
    chosen = python or getattr(sys, "_base_executable", None) or sys.executable
    found = shutil.which(chosen)
    if found is None:
        raise ConfigurationError(f"--python {chosen}: no such interpreter.")
    probe = subprocess.run(
        [found, "-c", "import sys; print(sys.version_info[0], sys.version_info[1], sys.base_prefix)"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        raise ConfigurationError(f"--python {found} does not run: {probe.stderr.strip()[-300:]}")
    major, minor, base_prefix = probe.stdout.split(maxsplit=2)
    if (int(major), int(minor)) != sys.version_info[:2]:
        raise ConfigurationError(
            f"--python {found} is Python {major}.{minor}, the driver runs {sys.version_info[0]}."
            f"{sys.version_info[1]}; PySpark needs the same minor version on driver and executors."
        )
    # A venv's python: build from the interpreter behind it, so the archive does not point into that venv.
    base = Path(base_prefix.strip()) / "bin" / f"python{major}.{minor}"
    return str(base) if base.exists() else found


def _run(command: list[str], cwd: str | None = None) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=cwd)
    if done.returncode != 0:
        output = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        hint = "\n(pip 22.3 or newer is needed here: pip install --upgrade pip)" if "--python" in output else ""
        raise ConfigurationError(
            f"Building the executor environment failed: {' '.join(command[:6])} ...\n{output}{hint}"
        )


def _project_source(project: Path | None, work: Path) -> Path | None:
    """What pip installs this package from: ``project`` (a wheel or a source tree), else the code the driver
    itself runs: None for a regular install (its installed files are copied as they are), the source tree
    of an editable install or of a run from the tree. A tree is copied first: pip would write build
    files into it."""
    if project is not None:
        project = Path(project)
        if project.is_file() and project.suffix == ".whl":
            return project
        if not _is_source_tree(project):
            raise ConfigurationError(
                f"--project {project} is neither a wheel nor a source tree of {DISTRIBUTION} (pyproject.toml, "
                f"{', '.join(PACKAGES)})."
            )
        return _copy_source(project, work)
    import kafka_migration

    tree = Path(kafka_migration.__file__).resolve().parents[1]
    # Where the running code is decides, not the package metadata: a source tree's own *.egg-info (an
    # editable install writes one, listing the files of that moment) shadows the install's metadata when
    # the command runs from the tree, and its file list misses modules added since.
    if _is_source_tree(tree):
        return _copy_source(tree, work)
    try:
        direct = importlib.metadata.distribution(DISTRIBUTION).read_text("direct_url.json") or "{}"
        editable = bool(json.loads(direct).get("dir_info", {}).get("editable"))
    except importlib.metadata.PackageNotFoundError:
        editable = True  # not installed, yet not in a source tree either
    if editable:
        raise ConfigurationError(
            f"Cannot find the source of {DISTRIBUTION} at {tree}; pass --project with its source tree or a wheel."
        )
    return None


def _is_source_tree(tree: Path) -> bool:
    return (tree / "pyproject.toml").is_file() and all((tree / package).is_dir() for package in PACKAGES)


def _copy_source(tree: Path, work: Path) -> Path:
    copy = work / "source"
    copy.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "setup.cfg", "setup.py"):
        if (tree / name).is_file():
            shutil.copy2(tree / name, copy / name)
    for package in PACKAGES:
        shutil.copytree(tree / package, copy / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return copy


def _site_packages(env_python: Path) -> Path:
    done = subprocess.run(
        [str(env_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(done.stdout.strip())


def _copy_installed(site: Path) -> None:
    """A regular (non-editable) install's files, as its RECORD lists them; scripts are left out."""
    dist = importlib.metadata.distribution(DISTRIBUTION)
    for file in dist.files or []:
        if file.parts[0] == ".." or "__pycache__" in file.parts:
            continue
        source = Path(str(file.locate()))
        if source.is_file():
            target = site / file
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
