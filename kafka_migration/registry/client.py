"""A schema registry's Confluent-compatible API, read and written through confluent-kafka's client.

Every answer comes back as the project's values (``model.schemas``), every failure as one of its errors naming
the registry (password redacted), the request and the way out: unreachable and unauthorized are configuration
errors (exit 2, found before anything is written), a missing subject, version or id is ``RegistryNotFoundError``.

A Protobuf schema held as ``.proto`` text (as Confluent's registry holds and serves every one) is read twice: as
registered (what a run registers on the target) and with ``format=serialized``, the ``FileDescriptorProto`` in
base64 that confluent-kafka's deserializer reads too and the canonical form is computed from. One registered as a
base64 descriptor (as confluent-kafka's serializer registers it, and Apicurio serves it back) is read once.
"""

from __future__ import annotations

import dataclasses
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError
from confluent_kafka.schema_registry import SchemaReference as ConfluentReference

from kafka_migration.exceptions import (
    ConfigurationError,
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
SERIALIZED = "serialized"  # the format a Protobuf schema is asked in as a file descriptor, as confluent-kafka asks
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
        self._timeout = timeout
        self._client = _client(config, timeout)
        # Reads with format=serialized go through a client of their own: confluent-kafka caches a schema by id (and
        # a subject version) whatever format was asked, so one client would answer the second read from the first.
        # Made at the first Protobuf read (``_serialized``): a client costs tens of milliseconds to make.
        self._serialized_client: SchemaRegistryClient | None = None

    def __repr__(self) -> str:
        return f"RegistryClient({self.config!r})"

    def close(self) -> None:
        self._client.close()
        if self._serialized_client is not None:
            self._serialized_client.close()

    @property
    def _serialized(self) -> SchemaRegistryClient:
        if self._serialized_client is None:
            self._serialized_client = _client(self.config, self._timeout)
        return self._serialized_client

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
        """A subject version as registered; a Protobuf one held as ``.proto`` source with its serialized descriptor
        too (``RegisteredSchema.descriptor``), which its canonical form needs."""
        what = f"read subject {subject!r} version {version}"
        found = _found(self._call(what, self._client.get_version, subject, version))
        if not found.schema.needs_descriptor:
            return found
        serialized = self._call(
            f"{what} as a file descriptor", self._serialized.get_version, subject, version, False, SERIALIZED
        )
        return Found(found.version, _with_descriptor(found.schema, serialized.schema))

    def schema(self, schema_id: int) -> RegisteredSchema:
        """A schema by id as registered; a Protobuf one held as ``.proto`` source with its serialized descriptor."""
        schema = _registered(schema_id, self._call(f"read schema id {schema_id}", self._client.get_schema, schema_id))
        if not schema.needs_descriptor:
            return schema
        what = f"read schema id {schema_id} as a file descriptor"
        return _with_descriptor(schema, self._call(what, self._serialized.get_schema, schema_id, None, SERIALIZED))

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
        origin = self.config.settings_origin
        try:
            return method(*args)
        except SchemaRegistryError as exc:
            status = exc.http_status_code
            detail = self.config.scrub(f"HTTP {status}, error {exc.error_code}: {exc.error_message}")
            # Raised from None: a registry's answer to wrong credentials may quote what it was sent.
            if status == 401:
                raise RegistryAuthorizationError(
                    f"{where} was refused: the credentials were not accepted ({detail}); nothing was written. Check "
                    f"the user and password (basic.auth.user.info) or the token (bearer.auth.token) in {origin}.",
                    status,
                    detail,
                ) from None
            if status == 403:
                raise RegistryAuthorizationError(
                    f"{where} was forbidden: the credentials were accepted, the request not ({detail}); nothing was "
                    f"written. Grant this user the rights on the registry (its ACLs or role bindings), or give one "
                    f"that has them in {origin}.",
                    status,
                    detail,
                ) from None
            if status == 404:
                raise RegistryNotFoundError(
                    f"{where}: not found ({detail}); check the subject, version or id, and that this is the registry "
                    "the records were written with."
                ) from exc
            raise RegistryRequestError(f"{where} failed ({detail}).") from exc
        except (HTTPError, OSError) as exc:
            detail = self.config.scrub(f"{type(exc).__name__}: {exc}")
            if _untrusted(exc):
                raise RegistryUnreachableError(
                    f"{where}: the registry's TLS certificate is not trusted ({detail}); nothing was written. Give "
                    f"the CA that signed it as ssl.ca.location in {origin}, and check that the URL's host is one the "
                    "certificate names."
                ) from None
            raise RegistryUnreachableError(
                f"{where}: the registry did not answer ({detail}); nothing was written. Check the URL, that the "
                f"registry runs and is reachable from here, and its TLS files in {origin}."
            ) from None


def _untrusted(exc: BaseException) -> bool:
    """Whether a failed request failed on the registry's certificate (httpx keeps the ``ssl`` error as a cause)."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLCertVerificationError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


TLS_FILES = ("ssl.ca.location", "ssl.certificate.location", "ssl.key.location")


def _client(config: RegistryConfig, timeout: float) -> SchemaRegistryClient:
    """confluent-kafka's client, its TLS files loaded now (it loads them when built): a missing or unreadable one
    is refused naming the setting and the file, before any request."""
    settings = _settings(config, timeout)
    where = f"Schema registry {config.display_url}"
    for key in TLS_FILES:
        path = settings.get(key)
        if path is not None and not Path(path).exists():
            raise ConfigurationError(
                f"{where}: {key} {path} does not exist; nothing was written. Give a PEM file that exists here as "
                f"{key} in {config.settings_origin}."
            )
    try:
        return SchemaRegistryClient(settings)
    except OSError as exc:  # ssl.SSLError is one
        given = ", ".join(f"{k} {settings[k]}" for k in TLS_FILES if k in settings)
        raise ConfigurationError(
            f"{where}: its TLS files cannot be loaded ({type(exc).__name__}: {exc}; {given}); nothing was written. "
            f"Give readable PEM files in {config.settings_origin}: the CA as ssl.ca.location, a client certificate "
            "and its unencrypted key as ssl.certificate.location and ssl.key.location."
        ) from exc


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


def _with_descriptor(schema: RegisteredSchema, serialized: Schema) -> RegisteredSchema:
    """``schema`` with the registry's ``format=serialized`` answer for it (base64 on Confluent's API; a registry
    that answers otherwise is refused where the canonical form reads it, naming the schema)."""
    return dataclasses.replace(schema, descriptor=serialized.schema_str or "")


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
