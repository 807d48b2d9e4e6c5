"""Import PySpark from its installed, compiled package rather than from Spark's source zip.

spark-submit puts ``$SPARK_HOME/python/lib/pyspark.zip`` (and py4j's zip) at the head of
the PYTHONPATH of the driver and of the Python daemon that forks the workers. Python
cannot cache bytecode for modules imported from a zip, so every driver and every daemon
compiles PySpark's ~1,300 source files again: ~0.9 s of CPU each, and each forked worker
compiles ``pyspark.worker``'s imports once more (measured on this project's 2-core
machine: the Python workers were ready 3-4 s later with the zip). When the same PySpark
version is installed as a package (``pip install pyspark`` ships both), its compiled
modules are the same code: the zips are moved behind it. With any doubt (no package, a
different version, an unreadable zip) the path is left as Spark set it.
"""

from __future__ import annotations

import importlib.machinery
import re
import sys
import zipfile
from pathlib import Path

# The zips spark-submit adds: SPARK_HOME/python/lib/pyspark.zip and py4j-<version>-src.zip.
_ZIPS = {"pyspark": re.compile(r"(^|/)pyspark\.zip$"), "py4j": re.compile(r"(^|/)py4j-[^/]*-src\.zip$")}
_VERSION = re.compile(r"""__version__\s*(?::\s*str\s*)?=\s*["']([^"']+)["']""")


def _version(text: str) -> str | None:
    match = _VERSION.search(text)
    return match.group(1) if match else None


def _zipped_version(archive: str, package: str) -> str | None:
    try:
        with zipfile.ZipFile(archive) as zipped:
            return _version(zipped.read(f"{package}/version.py").decode())
    except (OSError, KeyError, zipfile.BadZipFile, UnicodeDecodeError):
        return None


def _installed_version(package: str, path: list[str]) -> str | None:
    spec = importlib.machinery.PathFinder.find_spec(package, path)
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        return _version((Path(next(iter(spec.submodule_search_locations))) / "version.py").read_text())
    except OSError:
        return None


def prefer_installed_pyspark(path: list[str] | None = None) -> list[str]:
    """Move Spark's source zips behind the installed packages of the same version; the zips moved.

    Call before anything imports pyspark or py4j. ``path`` defaults to ``sys.path`` (changed in place).
    """
    path = sys.path if path is None else path
    moved = []
    for package, pattern in _ZIPS.items():
        zips = [entry for entry in path if pattern.search(entry)]
        if not zips:
            continue
        rest = [entry for entry in path if entry not in zips]
        zipped = _zipped_version(zips[0], package)
        if zipped is None or zipped != _installed_version(package, rest):
            continue
        path[:] = rest + zips
        moved.extend(zips)
    return moved
