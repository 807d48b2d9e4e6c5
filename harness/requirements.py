"""``python3 harness/requirements.py demo``: what ``make demo`` needs from the machine, checked before anything runs.

``make demo`` builds the console (Node.js and npm), fetches the Kafka jars (Maven) and runs the brokers and Spark
(Java 17). Without one of them it used to fail minutes in, after the virtualenv was built; this says what is missing
in one line first. Runs on the system's Python (no virtualenv yet), standard library only.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

NODE_LEAST = (20, 19)  # the console's package.json "engines"
JAVA_LEAST = 17
DEBIAN = "apt-get install"


def _version(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


def missing() -> list[str]:
    """What the demo needs and this machine lacks, each with what to install."""
    lacks: list[str] = []
    if sys.version_info[:2] != (3, 11) and not shutil.which("python3.11"):
        lacks.append("Python 3.11 (python3.11)")
    java = re.search(r'version "(\d+)', _version(["java", "-version"])) if shutil.which("java") else None
    if java is None or int(java.group(1)) < JAVA_LEAST:
        lacks.append(f"Java {JAVA_LEAST} or later ({DEBIAN} openjdk-17-jdk-headless)")
    if not shutil.which("mvn"):
        lacks.append(f"Maven, which fetches the Kafka jars ({DEBIAN} maven)")
    node = re.search(r"v(\d+)\.(\d+)", _version(["node", "--version"])) if shutil.which("node") else None
    if node is None or (int(node.group(1)), int(node.group(2))) < NODE_LEAST or not shutil.which("npm"):
        lacks.append(
            f"Node.js {NODE_LEAST[0]}.{NODE_LEAST[1]} or later with npm, which build the console, and network access "
            f"to the npm registry ({DEBIAN} nodejs npm)"
        )
    return lacks


def main(argv: list[str]) -> int:
    target = argv[0] if argv else "demo"
    lacks = missing()
    if lacks:
        print(f"make {target} needs " + "; ".join(lacks) + ". Nothing was installed or started.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
