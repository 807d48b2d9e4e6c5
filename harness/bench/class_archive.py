"""Scenario 4's third mode: executors that start from a class-data archive, prepared as an operator would.

On JDK 17 the product cannot give the executors an archive by default (docs/deployment.md, "A class-data
archive for the executors"): it cannot know whether a node has one, and naming one a node lacks turns
class-data sharing off there. An operator can prepare one per node and name it; this module does what that
page tells them, on the bench's one-machine cluster, outside the measured spans:

1. one application whose executors write an archive each when they exit
   (``-XX:ArchiveClassesAtExit=DIR/executor-{{EXECUTOR_ID}}.jsa``: one file per executor, never two
   JVMs writing the same file);
2. once those executors have exited, one archive kept per node under the name the settings give
   (``os.replace``: a starting executor sees the whole file or none);
3. every later application started with ``-XX:SharedArchiveFile=DIR/executor.jsa``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from harness.bench.common import say

if TYPE_CHECKING:
    from harness.servers.spark_cluster import StandaloneCluster
    from kafka_migration.spark.submit import SparkSettings

ARCHIVE = "executor.jsa"
EXIT_TIMEOUT = 60.0  # the executors write their archives as they exit (~60 MB each)


def with_options(settings: SparkSettings, options: str) -> SparkSettings:
    """``settings`` with ``options`` as the executors' Java options (the product adds its own before them)."""
    return dataclasses.replace(settings, conf={**settings.conf, "spark.executor.extraJavaOptions": options})


def prepare(
    cluster: StandaloneCluster, directory: Path, settings: SparkSettings, run_once: Callable[[SparkSettings], None]
) -> SparkSettings:
    """Write the executors' archive with one application (``run_once``) and return the settings that use it."""
    directory.mkdir(parents=True, exist_ok=True)
    say("scenario 4: writing the executors' class-data archive with one application (not measured)")
    run_once(with_options(settings, f"-XX:ArchiveClassesAtExit={directory}/executor-{{{{EXECUTOR_ID}}}}.jsa"))
    if not cluster.executors_exited(EXIT_TIMEOUT):
        raise RuntimeError(f"the executors had not exited {EXIT_TIMEOUT:.0f} s after their application")
    written = sorted(directory.glob("executor-*.jsa"))
    if not written:
        raise RuntimeError(f"no executor wrote a class-data archive into {directory}")
    os.replace(written[0], directory / ARCHIVE)  # one node here: one archive for every executor
    for extra in written[1:]:
        extra.unlink()
    size = (directory / ARCHIVE).stat().st_size
    say(f"  {ARCHIVE}: {size / 2**20:.0f} MiB, written by {len(written)} executors, one kept")
    return with_options(settings, f"-XX:SharedArchiveFile={directory / ARCHIVE}")
