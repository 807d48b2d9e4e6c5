"""Fetch the pinned jar set once with Maven (``make kafka-jars``) and record its class-data archive.

Maven resolves harness/kafka/pom.xml's runtime dependencies from Maven Central into
``jars.jar_dir()``; then one broker is started and stopped with -XX:ArchiveClassesAtExit, so
later JVMs map the classes a start loads instead of parsing them from ~90 jars (about half of
a broker's start-up). A stamp holding the pom's hash marks a complete fetch, and a changed pom
fetches again. Maven keeps its own download cache (~/.m2): a second work tree copies, not
downloads.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from harness.fetching import folder_lock, say
from harness.kafka import jars
from harness.kafka.jars import JarsMissing


def ensure(*, fetch: bool = True, quiet: bool = False) -> Path:
    """The jar folder, fetched first when missing (with ``fetch`` false: JarsMissing instead)."""
    if jars.is_fetched():
        return jars.jar_dir()
    if not fetch:
        raise JarsMissing(f"the Kafka {jars.kafka_version()} jars are not fetched: run `make kafka-jars`")
    with folder_lock(jars.home()):
        if not jars.is_fetched():
            _fetch(quiet=quiet)
    return jars.jar_dir()


def _fetch(*, quiet: bool) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JarsMissing("Maven (mvn) is missing: run `make system-deps` (Debian package maven)")
    home = jars.home()
    home.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    staging = Path(tempfile.mkdtemp(prefix="jars-", dir=home))
    say(f"kafka-jars: resolving Apache Kafka {jars.kafka_version()} ({jars.POM.name}) with Maven", quiet)
    done = subprocess.run(
        [
            mvn,
            "--batch-mode",
            "--quiet",
            "--file",
            str(jars.POM),
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={staging}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise JarsMissing(f"Maven could not resolve {jars.POM}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    shutil.rmtree(jars.jar_dir(), ignore_errors=True)
    jars.cds_archive().unlink(missing_ok=True)
    staging.rename(jars.jar_dir())
    count = len(list(jars.jar_dir().glob("*.jar")))
    say(f"kafka-jars: {count} jars in {jars.jar_dir()} ({time.monotonic() - started:.0f} s)", quiet)
    record_class_archive(quiet=quiet)
    for old in home.glob(".fetched-*"):
        old.unlink()
    jars.stamp().write_text(f"{jars.kafka_version()}\n")


def record_class_archive(*, quiet: bool = False) -> None:
    """Start and stop one plain broker with -XX:ArchiveClassesAtExit; without an archive brokers only start slower."""
    from harness.kafka.node import start_cluster

    started = time.monotonic()
    archive = jars.cds_archive()
    archive.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="kafka-cds-") as scratch:
        try:
            start_cluster("cds-training", Path(scratch), record_archive=archive).stop()
        except Exception as error:  # the archive is an optimisation
            say(f"kafka-jars: no class-data archive ({error}); brokers start without it", quiet)
            archive.unlink(missing_ok=True)
            return
    if archive.is_file():
        say(f"kafka-jars: class-data archive recorded ({time.monotonic() - started:.0f} s)", quiet)
