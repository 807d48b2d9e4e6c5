"""A schema registry's Confluent-compatible API, read and written through confluent-kafka's client.

Every answer comes back as the project's values (``model.schemas``), every failure as one of its errors naming
the registry (password redacted), the request and the way out: unreachable and unauthorized are configuration
errors (exit 2, found before anything is written), a missing subject, version or id is ``RegistryNotFoundError``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError
from confluent_kafka.schema_registry import SchemaReference as ConfluentReference

from kafka_migration.exceptions import (
    RegistryAuthorizationError,
    RegistryNotFoundError,
    RegistryRequestError,
    RegistryUnreachableError,
)
from kafka_migration.model.schemas import (
    RegisteredSchema,
    RegistryConfig,
    SchemaFormat,
    SchemaReference,
    SubjectVersion,
)

try:  # the HTTP library confluent-kafka's client uses, as its own _httpx_compat picks it: httpx2, else httpx
    from httpx2 import HTTPError
except ImportError:  # pragma: no cover - older environments
    from httpx import HTTPError

T = TypeVar("T")
TIMEOUT = 20.0  # seconds per request: Apicurio can be slow to answer its first requests (tests/harness)


@dataclass(frozen=True)
class Found:
    """A subject version that holds a given schema, and that schema as registered there."""

    version: SubjectVersion
    schema: RegisteredSchema


class RegistryClient:
    """One registry. Requests are not retried on refusal: an unreachable registry fails at once."""

    def __init__(self, config: RegistryConfig, timeout: float = TIMEOUT) -> None:
        self.config = config
        self._client = SchemaRegistryClient(_settings(config, timeout))

    def __repr__(self) -> str:
        return f"RegistryClient({self.config!r})"

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Reads
    def subjects(self) -> list[str]:
        return sorted(self._call("list subjects", self._client.get_subjects))

    def versions(self, subject: str) -> list[int]:
        return sorted(self._call(f"list versions of subject {subject!r}", self._client.get_versions, subject))

    def subject_version(self, subject: str, version: int) -> Found:
        got = self._call(f"read subject {subject!r} version {version}", self._client.get_version, subject, version)
        return _found(got)

    def schema(self, schema_id: int) -> RegisteredSchema:
        got = self._call(f"read schema id {schema_id}", self._client.get_schema, schema_id)
        return _registered(schema_id, got)

    def subject_versions_of(self, schema_id: int) -> list[SubjectVersion]:
        """Every live subject version that holds schema ``schema_id``, whatever strategy named its subject
        (RegistryNotFoundError: the registry does not know the id)."""
        got = self._call(
            f"list the subject versions of schema id {schema_id}", self._client.get_schema_versions, schema_id
        )
        return sorted(SubjectVersion(v.subject, v.version, schema_id) for v in got)

    def lookup(self, subject: str, schema: RegisteredSchema) -> Found | None:
        """The version of ``subject`` that holds ``schema`` (its text, format and references), or None."""
        try:
            got = self._call(
                f"look up a schema under subject {subject!r}", self._client.lookup_schema, subject, _confluent(schema)
            )
        except RegistryNotFoundError:
            return None
        return _found(got)

    def compatibility(self, subject: str | None = None) -> str:
        what = f"read the compatibility of subject {subject!r}" if subject else "read the global compatibility"
        return str(self._call(what, self._client.get_compatibility, subject))

    def mode(self, subject: str | None = None) -> str:
        if subject is None:
            return str(self._call("read the global mode", self._client.get_global_mode))
        return str(self._call(f"read the mode of subject {subject!r}", self._client.get_mode, subject))

    # Writes
    def register(self, subject: str, schema: RegisteredSchema) -> int:
        """Register ``schema`` under ``subject`` (its references must be registered already); returns its id."""
        return int(
            self._call(
                f"register a schema under subject {subject!r}",
                self._client.register_schema,
                subject,
                _confluent(schema),
            )
        )

    def _call(self, request: str, method: Callable[..., T], *args: Any) -> T:
        where = f"Schema registry {self.config.display_url}: {request}"
        try:
            return method(*args)
        except SchemaRegistryError as exc:
            detail = self.config.scrub(f"HTTP {exc.http_status_code}, error {exc.error_code}: {exc.error_message}")
            if exc.http_status_code in (401, 403):
                raise RegistryAuthorizationError(
                    f"{where} was refused ({detail}): check the registry's user and password or token, and its ACLs."
                ) from None
            if exc.http_status_code == 404:
                raise RegistryNotFoundError(
                    f"{where}: not found ({detail}); check the subject, version or id, and that this is the registry "
                    "the records were written with."
                ) from exc
            raise RegistryRequestError(f"{where} failed ({detail}).") from exc
        except (HTTPError, OSError) as exc:
            detail = self.config.scrub(f"{type(exc).__name__}: {exc}")
            raise RegistryUnreachableError(
                f"{where}: the registry did not answer ({detail}); nothing was written. Check the URL, that the "
                "registry runs and is reachable from here, and its TLS files."
            ) from None


def _settings(config: RegistryConfig, timeout: float) -> dict[str, Any]:
    settings: dict[str, Any] = {"url": config.url, "timeout": timeout, "max.retries": 0}
    if config.basic_auth:
        settings["basic.auth.user.info"] = config.basic_auth
    if config.bearer_token:
        settings.update(
            {
                "bearer.auth.credentials.source": "STATIC_TOKEN",
                "bearer.auth.token": config.bearer_token,
                "bearer.auth.logical.cluster": "",
                "bearer.auth.identity.pool.id": "",
            }
        )
    for key, value in (
        ("ssl.ca.location", config.ca_location),
        ("ssl.certificate.location", config.cert_location),
        ("ssl.key.location", config.key_location),
    ):
        if value:
            settings[key] = value
    return settings


def _confluent(schema: RegisteredSchema) -> Schema:
    references = [ConfluentReference(r.name, r.subject, r.version) for r in schema.references]
    return Schema(schema.text, schema.format.value, references)


def _registered(schema_id: int, schema: Schema) -> RegisteredSchema:
    return RegisteredSchema(
        schema_id=schema_id,
        format=SchemaFormat.of(schema.schema_type),
        text=schema.schema_str or "",
        references=tuple(SchemaReference(r.name, r.subject, r.version) for r in schema.references or ()),
    )


def _found(got: Any) -> Found:
    return Found(SubjectVersion(got.subject, got.version, got.schema_id), _registered(got.schema_id, got.schema))


def read_catalog(door: RegistryClient, subjects: list[str]) -> dict[tuple[str, int], RegisteredSchema]:
    """Every version of ``subjects`` that exist on the registry, and every version they reference, transitively:
    the catalog ``schemas.plan.plan_subjects`` takes. A subject the registry lacks is left out."""
    catalog: dict[tuple[str, int], RegisteredSchema] = {}
    known = set(door.subjects())
    pending = [(s, v) for s in subjects if s in known for v in door.versions(s)]
    while pending:
        key = pending.pop()
        if key in catalog:
            continue
        schema = door.subject_version(*key).schema
        catalog[key] = schema
        pending.extend((r.subject, r.version) for r in schema.references)
    return catalog
