"""harness/requirements.py, run as make runs it before the demo: on a machine without Java, Maven and Node.js it says
so in one line and exits 1 before anything is installed; on this one (which has them all) it passes silently."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "harness" / "requirements.py"


def _run(path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "demo"], env={"PATH": path}, capture_output=True, text=True, check=False
    )


def test_a_machine_without_java_maven_and_node_is_told_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()  # a PATH with nothing on it: the script runs on this Python, named in full
    ended = _run(str(tmp_path / "bin"))
    assert ended.returncode == 1 and ended.stdout == ""
    (line,) = ended.stderr.splitlines()
    assert line.startswith("make demo needs Java 17 or later (apt-get install openjdk-17-jdk-headless); Maven")
    assert "Node.js 20.19 or later with npm" in line and line.endswith("Nothing was installed or started.")


def test_this_machine_has_what_the_demo_needs() -> None:
    import os

    ended = _run(os.environ["PATH"])
    assert (ended.returncode, ended.stderr) == (0, "")
