"""The decision program compiled with the JDK's ``javac`` against the pinned jar set, once per version of its
sources: the classes go to ``<cache>/authorizer-<key>``, the key hashing the Java sources and the jar set's pom, so
an edited source or another Kafka compiles again and an unchanged one is reused. Nothing compiled lives in git.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness.kafka import jars

JAVA = Path(__file__).with_name("java")
MAIN_CLASS = "kafkamigration.authorizer.DecisionServer"
COMPLETE = ".complete"  # written last: a folder without it is a build that did not finish
COMPILE_SECONDS = 300.0


class JavacMissing(RuntimeError):
    """No JDK compiler on the PATH (a JRE alone cannot build the program)."""


class CompileFailed(RuntimeError):
    """javac refused the sources (a changed Kafka API, most likely): its output says where."""


def sources() -> list[Path]:
    return sorted(JAVA.glob("*.java"))


def source_key() -> str:
    """What the classes depend on: every source's name and text, and the jar set they are compiled against."""
    digest = hashlib.sha256()
    for path in sources():
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(f"kafka {jars.kafka_version()} pom {jars.pom_hash()}".encode())
    return digest.hexdigest()[:16]


def compiled(cache: Path) -> Path:
    """The folder of the compiled classes (for ``java -cp``), compiling first when this version is not there.

    Compiles into a staging folder and renames it into place, so that two runs compiling at once both end with
    the same complete folder."""
    target = cache / f"authorizer-{source_key()}"
    if (target / COMPLETE).is_file():
        return target
    javac = shutil.which("javac")
    if javac is None:
        raise JavacMissing(
            "javac (a JDK 17 or later) is not on the PATH: the authorizer check compiles its program; "
            "make system-deps installs Debian's openjdk-17-jdk-headless"
        )
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".authorizer-", dir=cache))
    try:
        done = subprocess.run(
            [
                javac,
                "--release",
                "17",
                "-proc:none",
                "-encoding",
                "UTF-8",
                "-Xlint:all",
                "-d",
                str(staging),
                "-cp",
                jars.classpath(),
                *(str(path) for path in sources()),
            ],
            capture_output=True,
            text=True,
            timeout=COMPILE_SECONDS,
            check=False,
        )
        if done.returncode != 0:
            raise CompileFailed(f"javac failed ({done.returncode}) on {JAVA}:\n{done.stdout}{done.stderr}")
        (staging / COMPLETE).write_text(source_key() + "\n")
        with contextlib.suppress(OSError):  # another run put a complete folder there first: keep it
            os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if not (target / COMPLETE).is_file():  # pragma: no cover - a folder in the way that is not a finished build
        raise CompileFailed(f"{target} exists but holds no finished build: remove it")
    return target
