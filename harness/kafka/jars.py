"""Where the pinned Apache Kafka jar set lives (harness/kafka/pom.xml), and the JVM command that runs it.

The jar set sits in ``.kafka/<version>/jars`` (an ignored folder of the work tree; fetched by
harness.kafka.fetch), beside a class-data-sharing archive of the classes a broker start loads.
Set KAFKA_MIGRATION_KAFKA_HOME to use another folder (e.g. one shared by several work trees).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

POM = Path(__file__).with_name("pom.xml")
LOG4J2 = Path(__file__).with_name("log4j2.properties")
REPO = Path(__file__).resolve().parents[2]
HOME_VARIABLE = "KAFKA_MIGRATION_KAFKA_HOME"


class JarsMissing(RuntimeError):
    """The jar set is not fetched (and fetching was not asked for)."""


def kafka_version() -> str:
    match = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", POM.read_text())
    if match is None:  # pragma: no cover - the pom is ours
        raise RuntimeError(f"{POM} names no kafka.version")
    return match.group(1)


def pom_hash() -> str:
    return hashlib.sha1(POM.read_bytes()).hexdigest()[:12]


def home() -> Path:
    """The folder of the fetched jar set and its class-data archive."""
    configured = os.environ.get(HOME_VARIABLE)
    return Path(configured) if configured else REPO / ".kafka" / kafka_version()


def jar_dir() -> Path:
    return home() / "jars"


def stamp() -> Path:
    return home() / f".fetched-{pom_hash()}"


def cds_archive() -> Path:
    return home() / "classes.jsa"


def is_fetched() -> bool:
    return stamp().is_file() and jar_dir().is_dir()


def classpath() -> str:
    """The jars in a fixed order: a class-data archive is only used with the classpath it was made with."""
    jars = sorted(jar_dir().glob("*.jar"))
    if not jars:
        raise JarsMissing(f"no Kafka jars in {jar_dir()}: run `make kafka-jars`")
    return os.pathsep.join(str(jar) for jar in jars)


def java_command(
    main_class: str,
    *,
    heap_mb: int = 512,
    fast_start: bool = True,
    extra: list[str] | None = None,
    classpath_extra: Sequence[Path] = (),
) -> list[str]:
    """``java`` with the jar set's classpath, the harness's log4j2 configuration and the class archive.

    ``fast_start``: C1 only (no C2 compiler threads competing with the start on two cores) and
    the serial collector; a benchmark wanting peak throughput passes False. ``classpath_extra``: folders or jars
    of the harness's own classes, after the jar set (the class archive still applies: its classpath stays the
    prefix).
    """
    java = shutil.which("java") or "java"
    command = [
        java,
        f"-Xmx{heap_mb}m",
        "-Xms64m",
        "-Xss512k",
        "-XX:+UseSerialGC" if fast_start else "-XX:+UseG1GC",
        "-XX:-UsePerfData",
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={LOG4J2}",
    ]
    if fast_start:
        command.append("-XX:TieredStopAtLevel=1")
    archive = cds_archive()
    if archive.is_file():
        command += [f"-XX:SharedArchiveFile={archive}", "-Xlog:cds=off", "-Xlog:cds+dynamic=off"]
    path = os.pathsep.join([classpath(), *(str(entry) for entry in classpath_extra)])
    return [*command, *(extra or []), "-cp", path, main_class]
