"""Import PySpark from compiled modules rather than from Spark's source zip.

spark-submit puts ``$SPARK_HOME/python/lib/pyspark.zip`` (and py4j's zip) at the head of
the PYTHONPATH of the driver and of the Python daemon that forks the workers. Python
cannot cache bytecode for modules imported from a zip, so every driver and every daemon
compiles PySpark's ~1,300 source files again: ~0.9 s of CPU each, and each forked worker
compiles ``pyspark.worker``'s imports once more (measured on this project's 2-core
machine: the Python workers were ready 3-4 s later with the zip).

* ``prefer_installed_pyspark``: when the same PySpark version is installed as a package
  (``pip install pyspark`` ships both, as in local mode), its compiled modules are the
  same code: the zips are moved behind it.
* ``unzipped_spark_zips``: otherwise (a cluster's executors, whose shipped environment holds
  neither PySpark nor py4j), the cluster's own zips are unpacked once per machine into
  directories named after their content, where Python caches the bytecode it compiles; every
  later daemon on that machine, of any application, imports from there. The name is the
  content's, not the path's, so YARN's per-container copies of the same zip share one directory.

With any doubt (no package, a different version, an unreadable zip, no writable cache
directory) the path is left as Spark set it.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import os
import re
import shutil
import stat
import sys
import tempfile
import uuid
import zipfile
from pathlib import Path

# The zips spark-submit adds: SPARK_HOME/python/lib/pyspark.zip and py4j-<version>-src.zip.
_ZIPS = {"pyspark": re.compile(r"(^|/)pyspark\.zip$"), "py4j": re.compile(r"(^|/)py4j-[^/]*-src\.zip$")}
_VERSION = re.compile(r"""__version__\s*(?::\s*str\s*)?=\s*["']([^"']+)["']""")
CACHE_VARIABLE = "KAFKA_MIGRATION_PYSPARK_CACHE"  # where unpacked zips live; "off" disables unpacking
_COMPLETE = ".complete"  # written last into an unpacked directory


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


def cache_root() -> Path | None:
    """$KAFKA_MIGRATION_PYSPARK_CACHE (``off``: none), else kafka-migration-pyspark-<uid> in the temporary
    directory: a machine-wide cache of the user the executors run as, like Spark's own fetch cache."""
    configured = os.environ.get(CACHE_VARIABLE)
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "none", "false", "0") else Path(configured)
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return Path(tempfile.gettempdir()) / f"kafka-migration-pyspark-{uid}"


def _content_key(zipped: zipfile.ZipFile) -> str:
    """Names, sizes and CRCs of every member (the zip's central directory: no member is read) and the
    interpreter's bytecode tag."""
    digest = hashlib.sha256(sys.implementation.cache_tag.encode())
    for info in zipped.infolist():
        digest.update(f"{info.filename}\0{info.file_size}\0{info.CRC}\n".encode())
    return digest.hexdigest()[:20]


def _check_private(root: Path) -> None:
    """Code is imported from under ``root``: it must be this user's own directory, which nobody else can
    write to (not a link someone else placed in the shared temporary directory); OSError otherwise."""
    info = os.lstat(root)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise OSError(f"{root} is not a directory")
    if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o022):
        raise OSError(f"{root} belongs to another user or others can write to it")


def _unpacked(archive: str, root: Path) -> Path:
    """The directory holding ``archive``'s modules (its tests left out), unpacked now if no process has yet.

    Unpacked under a name of its own and renamed into place, so a concurrent daemon either finds a
    complete directory or unpacks its own copy; the loser of the rename drops its copy.
    """
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    _check_private(root)
    with zipfile.ZipFile(archive) as zipped:
        target = root / _content_key(zipped)
        if (target / _COMPLETE).is_file():
            return target
        partial = root / f".{target.name}.{uuid.uuid4().hex[:8]}"
        try:
            members = [m for m in zipped.namelist() if "/tests/" not in m]
            zipped.extractall(partial, members)
            (partial / _COMPLETE).write_text(archive + "\n")
            try:
                os.rename(partial, target)
            except OSError:  # another daemon was first
                if not (target / _COMPLETE).is_file():
                    raise
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return target


def unzipped_spark_zips(path: list[str] | None = None, root: Path | None = None) -> list[str]:
    """Put a once-per-machine unpacked copy of Spark's pyspark.zip and py4j zip where each zip is in
    ``path``; the directories put in (none when the path has no such zip or it cannot be unpacked: that
    entry is then left as it was).

    Call after ``prefer_installed_pyspark`` (a zip it moved behind an installed package stays) and
    before anything imports pyspark or py4j. ``root`` defaults to ``cache_root()``.
    """
    path = sys.path if path is None else path
    root = cache_root() if root is None else root
    if root is None:
        return []
    done = []
    for package, pattern in _ZIPS.items():
        zips = [i for i, entry in enumerate(path) if pattern.search(entry)]
        if not zips or _installed_version(package, path[: zips[0]]) is not None:
            continue  # no zip, or an installed package comes first already
        try:
            directory = str(_unpacked(path[zips[0]], root))
        except (OSError, zipfile.BadZipFile, ValueError):
            continue
        path[zips[0]] = directory
        done.append(directory)
    return done
