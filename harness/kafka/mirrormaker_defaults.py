"""MirrorMaker 2's defaults as the jar set's connect-mirror jar holds them, for tests that compare with it.

MM2 never copies the topic configs matched by ``config.properties.exclude``, whose default is a
constant of ``DefaultConfigPropertyFilter`` (CONFIG_PROPERTIES_EXCLUDE_DEFAULT). It is read from the
class file itself, so a test follows the MirrorMaker 2 of the pinned version, not a copy of its list.
"""

from __future__ import annotations

import re
import zipfile

from harness.kafka import jars

FILTER_CLASS = "org/apache/kafka/connect/mirror/DefaultConfigPropertyFilter.class"


def config_exclusions() -> list[str]:
    """The config names MirrorMaker 2 excludes by default (its regexes are escaped literal names)."""
    (jar,) = jars.jar_dir().glob(f"connect-mirror-{jars.kafka_version()}.jar")
    with zipfile.ZipFile(jar) as archive:
        constants = archive.read(FILTER_CLASS)
    # The constant pool holds the default as one string: "follower\\.replication\\.throttled\\.replicas, ..."
    match = re.search(rb"follower\\\.replication[ -~]*", constants)
    if match is None:
        raise RuntimeError(f"no config.properties.exclude default in {jar}:{FILTER_CLASS}")
    return [pattern.strip().replace("\\.", ".") for pattern in match.group().decode().split(",")]
