"""Fetch the pinned Apicurio Registry once with Maven (``make registry``), unpack it and record its AOT cache.

Maven copies the one archive harness/registry/pom.xml names (``apicurio-registry-app-<version>-all.tar.gz``,
158 MB, none of its dependencies: the archive holds them) from Maven Central; it is unpacked into
``dist.app_dir()`` and the archive dropped (Maven keeps it in ~/.m2: a second work tree copies, not downloads).
Then one registry is started and stopped with -XX:AOTCacheOutput, so later JVMs map the classes a start loads
instead of loading them from ~300 jars (about a third of the CPU time of a start). A stamp holding the pom's hash
marks a complete fetch, and a changed pom fetches again.
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from harness.fetching import folder_lock, say
from harness.registry import dist
from harness.registry.dist import RegistryMissing


def ensure(*, fetch: bool = True, quiet: bool = False) -> Path:
    """The unpacked application's folder, fetched first when missing (with ``fetch`` false: RegistryMissing)."""
    if dist.is_fetched():
        return dist.app_dir()
    if not fetch:
        raise RegistryMissing(f"Apicurio Registry {dist.registry_version()} is not fetched: run `make registry`")
    with folder_lock(dist.home()):
        if not dist.is_fetched():
            _fetch(quiet=quiet)
    return dist.app_dir()


def _fetch(*, quiet: bool) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RegistryMissing("Maven (mvn) is missing: run `make system-deps` (Debian package maven)")
    home = dist.home()
    home.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    staging = Path(tempfile.mkdtemp(prefix="fetch-", dir=home))
    try:
        say(f"registry: resolving Apicurio Registry {dist.registry_version()} ({dist.POM.name}) with Maven", quiet)
        done = subprocess.run(
            [
                mvn,
                "--batch-mode",
                "--quiet",
                "--file",
                str(dist.POM),
                "dependency:copy-dependencies",
                "-DexcludeTransitive=true",
                f"-DoutputDirectory={staging}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RegistryMissing(f"Maven could not resolve {dist.POM}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
        archives = sorted(staging.glob("*.tar.gz"))
        if len(archives) != 1:
            raise RegistryMissing(f"Maven copied {[a.name for a in archives]} from {dist.POM}, not one archive")
        unpacked = staging / "quarkus-app"
        with tarfile.open(archives[0]) as archive:
            archive.extractall(unpacked, filter="data")
        if not (unpacked / dist.run_jar().name).is_file():
            raise RegistryMissing(f"{archives[0].name} holds no {dist.run_jar().name}")
        shutil.rmtree(dist.app_dir(), ignore_errors=True)
        dist.aot_cache().unlink(missing_ok=True)
        unpacked.rename(dist.app_dir())
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    say(f"registry: unpacked into {dist.app_dir()} ({time.monotonic() - started:.0f} s)", quiet)
    record_aot_cache(quiet=quiet)
    for old in home.glob(".fetched-*"):
        old.unlink()
    dist.stamp().write_text(f"{dist.registry_version()}\n")


def record_aot_cache(*, quiet: bool = False) -> None:
    """Start and stop one registry with -XX:AOTCacheOutput; without a cache registries only start slower."""
    from harness.registry.server import RegistrySpec, start_registries, stop_all

    started = time.monotonic()
    cache = dist.aot_cache()
    cache.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="registry-aot-") as scratch:
        try:
            training = start_registries([RegistrySpec("aot-training", record_cache=cache)], Path(scratch))
            # At exit the JVM assembles the cache in a second JVM: seconds more than a plain stop.
            stop_all(training, timeout=120)
        except Exception as error:  # the cache is an optimisation
            say(f"registry: no AOT cache ({error}); registries start without it", quiet)
            cache.unlink(missing_ok=True)
            return
    if cache.is_file():
        say(f"registry: AOT cache recorded ({time.monotonic() - started:.0f} s)", quiet)
