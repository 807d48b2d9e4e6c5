"""A whole registry moved with Apicurio's own export and import, the ids kept: what a user does before runs with
``--schema-ids keep`` (docs/schemas.md#keep-mode). The import takes only an empty registry (409 otherwise)."""

from __future__ import annotations

import urllib.error
import urllib.request

from harness.registry.server import CCOMPAT_PATH

EXPORT = "/apis/registry/v3/admin/export"
IMPORT = "/apis/registry/v3/admin/import"


def root_of(ccompat_url: str) -> str:
    """The server's root of a registry named by its Confluent-compatible URL."""
    return ccompat_url.removesuffix("/").removesuffix(CCOMPAT_PATH)


def move_whole(source_ccompat_url: str, target_ccompat_url: str, timeout: float = 60.0) -> None:
    """Export every subject, version and id of the source registry and import them into the (empty) target."""
    with urllib.request.urlopen(f"{root_of(source_ccompat_url)}{EXPORT}", timeout=timeout) as answer:
        archive = answer.read()
    headers = {"Content-Type": "application/zip"}
    request = urllib.request.Request(f"{root_of(target_ccompat_url)}{IMPORT}", archive, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            status = answer.status
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f"the import into {target_ccompat_url} answered {exc.code}: {exc.read()[:300]!r}") from exc
    if status != 204:
        raise RuntimeError(f"the import into {target_ccompat_url} answered {status}, not 204")
